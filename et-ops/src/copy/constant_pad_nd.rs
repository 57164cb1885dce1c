//! Pad (or crop) the trailing dims with a constant.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor, MAX_DIM,
};

use crate::util::convert::scalar_bytes;
use crate::util::layout::{check_same_dtype, fill_bytes, istrides, Walk};

/// `out = F.pad(self, pad, value=value)`: `pad` holds (before, after) pairs starting
/// with the last dim. Negative padding crops. The value must fit the dtype (PyTorch's
/// `fill_` check).
#[kernel("aten::constant_pad_nd.out", accepts = [all])]
pub fn constant_pad_nd_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    pad: &[i64],
    value: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    let n = input.dim();
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > n {
        return Err(KernelError::invalid(
            "padding length must be even and at most twice the rank",
        ));
    }
    let mut before = [0i64; MAX_DIM];
    let mut after = [0i64; MAX_DIM];
    for (i, pair) in pad.chunks_exact(2).enumerate() {
        before[n - 1 - i] = pair[0];
        after[n - 1 - i] = pair[1];
    }
    let mut sizes = [0usize; MAX_DIM];
    for d in 0..n {
        let s = (input.size(d) as i64)
            .checked_add(before[d])
            .and_then(|s| s.checked_add(after[d]))
            .ok_or(KernelError::invalid("padded size overflows"))?;
        sizes[d] =
            usize::try_from(s).map_err(|_| KernelError::invalid("padding makes a dim negative"))?;
    }
    out.resize(&sizes[..n])?;
    let elem = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(value))?;
    let width = out.dtype().element_size();
    fill_bytes(out.bytes_mut()?, &elem[..width])?;

    // The part of the input that survives cropping, and where it lands.
    let (is, os) = (istrides(input)?, istrides(out)?);
    let mut keep = [0usize; MAX_DIM];
    let (mut src_base, mut dst_base) = (0usize, 0usize);
    for d in 0..n {
        let skip_in = (-before[d]).max(0) as usize;
        let skip_out = before[d].max(0) as usize;
        let drop_in = (-after[d]).max(0) as usize;
        keep[d] = input.size(d).saturating_sub(skip_in + drop_in);
        src_base += skip_in * input.strides()[d];
        dst_base += skip_out * out.strides()[d];
    }
    let walk = Walk::copy(&keep[..n], &os[..n], &is[..n])?;
    if walk.numel() == 0 {
        return Ok(());
    }
    let src = input.bytes()?;
    walk.move_bytes(width, out.bytes_mut()?, dst_base, src, src_base)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn pads_and_crops() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[3, 6]).unwrap();
        constant_pad_nd_out::<AllDtypes>(&ctx, &x, &[1, 2, 0, 1], Scalar::Double(9.0), &mut o)
            .unwrap();
        assert_eq!(
            o.data::<f32>().unwrap(),
            &[9., 1., 2., 3., 9., 9., 9., 4., 5., 6., 9., 9., 9., 9., 9., 9., 9., 9.]
        );
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        constant_pad_nd_out::<AllDtypes>(&ctx, &x, &[-1, 0], Scalar::Int(0), &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[2., 3., 5., 6.]);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        constant_pad_nd_out::<AllDtypes>(&ctx, &x, &[-2, 2], Scalar::Int(0), &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[3., 0., 0., 6., 0., 0.]);
        assert!(constant_pad_nd_out::<AllDtypes>(&ctx, &x, &[1], Scalar::Int(0), &mut o).is_err());
        let b = TensorBuf::from_slice(&[2], &[1u8, 2]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Byte, &[3]).unwrap();
        assert!(
            constant_pad_nd_out::<AllDtypes>(&ctx, &b, &[1, 0], Scalar::Int(300), &mut o).is_err()
        );
    }
}
