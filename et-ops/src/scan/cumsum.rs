//! Running sum along a dim.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
    MAX_DIM,
};

use crate::util::convert::{loader, Loader};
use crate::util::element::RawElement;
use crate::util::layout::{istrides, normalize_dim, Walk};

/// `out = self.cumsum(dim, dtype=dtype)`: the input is cast to `out`'s dtype (which
/// must be `dtype` when given), then summed in PyTorch's CPU accumulation type (double
/// for float32/float64, float for float16, int64 wrapping for integers), each prefix
/// rounded once into `out`.
#[kernel("aten::cumsum.out", accepts = [all])]
pub fn cumsum_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if dtype.is_some_and(|d| d != out.dtype()) {
        return Err(KernelError::invalid(
            "out dtype must match the dtype argument",
        ));
    }
    let d = normalize_dim(dim, input.dim())?;
    out.resize(input.sizes())?;
    let from = if input.dtype() == out.dtype() {
        None
    } else {
        Some(et_switch!(Sel, input.dtype(), @all, T => Ok(loader::<T>()))?)
    };
    et_switch!(Sel, out.dtype(), @reals, T => scan::<T>(input, d, from, out))
}

fn scan<T: RawElement>(
    input: &Tensor,
    d: usize,
    from: Option<Loader>,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    // Lines along `d`: walk every other dim, then step along `d` inside.
    let (is, os) = (istrides(input)?, istrides(out)?);
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let (len, in_step, out_step) = if n == 0 {
        (1, 0, 0)
    } else {
        (sizes[d], is[d], os[d])
    };
    if n > 0 {
        sizes[d] = 1;
    }
    let lines = Walk::new(&sizes[..n], [&os[..n], &is[..n]])?;
    if len == 0 || lines.numel() == 0 {
        return Ok(());
    }
    let src = input.bytes()?;
    let width = input.dtype().element_size();
    let read = |i: usize| -> T {
        let b = &src[i * width..(i + 1) * width];
        match from {
            Some(l) => (l.load)(b).to::<T>(),
            None => T::read(b),
        }
    };
    let dst = out.data_mut::<T>()?;
    // Every element of every line lies inside both tensors: checked once for the whole
    // shape, so the indexing below cannot fail.
    Walk::new(input.sizes(), [&os[..n], &is[..n]])?.check([0, 0], [dst.len(), input.numel()])?;
    lines.for_each([0, 0], [dst.len(), input.numel()], |[o, s]| {
        let (o, s) = (o as isize, s as isize);
        if T::IS_FLOAT && core::mem::size_of::<T>() == 2 {
            let mut acc = 0f32;
            for k in 0..len as isize {
                acc += read((s + k * in_step) as usize).to_f64() as f32;
                dst[(o + k * out_step) as usize] = T::from_f64(acc as f64);
            }
        } else if T::IS_FLOAT {
            let mut acc = 0f64;
            for k in 0..len as isize {
                acc += read((s + k * in_step) as usize).to_f64();
                dst[(o + k * out_step) as usize] = T::from_f64(acc);
            }
        } else {
            let mut acc = 0i64;
            for k in 0..len as isize {
                acc = acc.wrapping_add(read((s + k * in_step) as usize).to_i64());
                dst[(o + k * out_step) as usize] = T::from_i64(acc);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, Bool, TensorBuf};

    #[test]
    fn running_sums() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &x, 1, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 3., 6., 4., 9., 15.]);
        cumsum_out::<AllDtypes>(&ctx, &x, 0, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3., 5., 7., 9.]);
        // int32 -> int64 (PyTorch's default for integer inputs), and wrap-around.
        let i = TensorBuf::from_slice(&[3], &[i32::MAX, 1, -5]).unwrap();
        let mut l = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &i, 0, None, &mut l).unwrap();
        assert_eq!(
            l.data::<i64>().unwrap(),
            &[i32::MAX as i64, i32::MAX as i64 + 1, i32::MAX as i64 - 4]
        );
        let mut w = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &i, 0, Some(ScalarType::Int), &mut w).unwrap();
        // The int64 accumulator comes back into range after the overflow.
        assert_eq!(
            w.data::<i32>().unwrap(),
            &[i32::MAX, i32::MIN, i32::MAX - 4]
        );
        let b = TensorBuf::from_slice(&[3], &[Bool(1), Bool(0), Bool(1)]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &b, -1, None, &mut l).unwrap();
        assert_eq!(l.data::<i64>().unwrap(), &[1, 1, 2]);
        assert!(cumsum_out::<AllDtypes>(&ctx, &x, 2, None, &mut o).is_err());
    }
}
