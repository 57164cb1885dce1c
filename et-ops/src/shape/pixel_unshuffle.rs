//! `aten::pixel_unshuffle.out`: space to channels.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, Walk};

/// `out = pixel_unshuffle(self, r)`, the inverse of `pixel_shuffle`: `[*, C, H*r, W*r]`
/// becomes `[*, C*r*r, H, W]` with `out[.., c*r*r + i*r + j, h, w] = self[.., c, h*r + i,
/// w*r + j]`.
#[kernel("aten::pixel_unshuffle.out")]
pub fn pixel_unshuffle_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    downscale_factor: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let r = usize::try_from(downscale_factor)
        .ok()
        .filter(|&r| r > 0)
        .ok_or(KernelError::invalid("downscale factor must be positive"))?;
    let fits = n >= 3 && input.size(n - 2).is_multiple_of(r) && input.size(n - 1).is_multiple_of(r);
    if !fits {
        return Err(KernelError::invalid(
            "pixel_unshuffle needs [*, C, H*r, W*r] input",
        ));
    }
    check_same_dtype(input, out)?;
    let (c, h, w) = (
        input.size(n - 3),
        input.size(n - 2) / r,
        input.size(n - 1) / r,
    );
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n - 3].copy_from_slice(&input.sizes()[..n - 3]);
    sizes[n - 3..n].copy_from_slice(&[c * r * r, h, w]);
    out.resize(&sizes[..n])?;
    let (is, os) = (istrides(input)?, istrides(out)?);
    // Walk the input as [*, C, H, r, W, r] against the output's channel dim split as
    // [C, r, r].
    let b = n - 3;
    let mut walk_sizes = [0usize; MAX_DIM + 3];
    let mut dst = [0isize; MAX_DIM + 3];
    let mut src = [0isize; MAX_DIM + 3];
    walk_sizes[..b].copy_from_slice(&input.sizes()[..b]);
    dst[..b].copy_from_slice(&os[..b]);
    src[..b].copy_from_slice(&is[..b]);
    let ri = r as isize;
    let (oc, oh, ow) = (os[b], os[b + 1], os[b + 2]);
    let (ic, ih, iw) = (is[b], is[b + 1], is[b + 2]);
    walk_sizes[b..b + 5].copy_from_slice(&[c, h, r, w, r]);
    dst[b..b + 5].copy_from_slice(&[oc * ri * ri, oh, oc * ri, ow, oc]);
    src[b..b + 5].copy_from_slice(&[ic, ih * ri, ih, iw * ri, iw]);
    let walk = Walk::copy(&walk_sizes[..b + 5], &dst[..b + 5], &src[..b + 5])?;
    let elem = input.dtype().element_size();
    walk.move_bytes(elem, out.bytes_mut()?, 0, input.bytes()?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::pixel_shuffle::pixel_shuffle_out;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn inverts_pixel_shuffle() {
        with_ctx(|ctx| {
            let v: [i32; 16] = core::array::from_fn(|i| i as i32);
            let x = TensorBuf::from_slice(&[1, 4, 2, 2], &v).unwrap();
            let mut s = TensorBuf::zeros(ScalarType::Int, &[1, 1, 4, 4]).unwrap();
            pixel_shuffle_out(ctx, &x, 2, &mut s).unwrap();
            let mut back = TensorBuf::zeros(ScalarType::Int, &[1, 4, 2, 2]).unwrap();
            pixel_unshuffle_out(ctx, &s, 2, &mut back).unwrap();
            assert_eq!(back.data::<i32>().unwrap(), &v);
            let mut bad = TensorBuf::zeros(ScalarType::Int, &[1, 9, 1, 1]).unwrap();
            assert!(pixel_unshuffle_out(ctx, &s, 3, &mut bad).is_err());
        });
    }
}
