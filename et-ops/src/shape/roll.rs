//! `aten::roll.out`: rotate elements along dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, normalize_dim, Walk};

/// `out = self.roll(shifts, dims)`: along each `dims[k]`, element `i` moves to
/// `(i + shifts[k]) mod size` (negative shifts roll the other way; a dim named twice
/// rolls by the sum). `shifts` and `dims` must have the same, non-zero length (rolling
/// the flattened tensor, without dims, is not supported, as in ExecuTorch).
#[kernel("aten::roll.out")]
pub fn roll_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    shifts: &[i64],
    dims: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    if dims.is_empty() || shifts.len() != dims.len() {
        return Err(KernelError::invalid(
            "roll needs one shift per dim, and at least one dim",
        ));
    }
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    let n = input.dim();
    // The net shift of each dim, in 0..size.
    let mut shift = [0usize; MAX_DIM];
    for (&s, &d) in shifts.iter().zip(dims) {
        let d = normalize_dim(d, n)?;
        if n == 0 {
            continue;
        }
        let size = input.size(d) as i64;
        if size > 0 {
            shift[d] = ((shift[d] as i64 + s.rem_euclid(size)) % size) as usize;
        }
    }
    let (is, os) = (istrides(input)?, istrides(out)?);
    let rolled: usize = (0..n).filter(|&d| shift[d] != 0).count();
    let elem = input.dtype().element_size();
    let out_strides = os;
    let src = input.bytes()?;
    let dst = out.bytes_mut()?;
    // Each rolled dim splits into two blocks: source `[0, size - s)` goes to `[s, size)`
    // and source `[size - s, size)` to `[0, s)`. Copy every combination of blocks.
    for pick in 0..1usize << rolled {
        let mut sizes = [0usize; MAX_DIM];
        let (mut src_base, mut dst_base) = (0usize, 0usize);
        let mut k = 0;
        for d in 0..n {
            let size = input.size(d);
            let s = shift[d];
            if s == 0 {
                sizes[d] = size;
                continue;
            }
            if pick >> k & 1 == 0 {
                sizes[d] = size - s;
                dst_base += s * out_strides[d] as usize;
            } else {
                sizes[d] = s;
                src_base += (size - s) * input.strides()[d];
            }
            k += 1;
        }
        let walk = Walk::copy(&sizes[..n], &os[..n], &is[..n])?;
        walk.move_bytes(elem, dst, dst_base, src, src_base)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn rolls() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[0i64, 1, 2, 3, 4, 5]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap();
            roll_out(ctx, &x, &[1], &[1], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[2, 0, 1, 5, 3, 4]);
            roll_out(ctx, &x, &[-1, 1], &[-1, 0], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[4, 5, 3, 1, 2, 0]);
            roll_out(ctx, &x, &[2, 1], &[1, 1], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 1, 2, 3, 4, 5]);
            assert!(roll_out(ctx, &x, &[1], &[], &mut o).is_err());
        });
    }
}
