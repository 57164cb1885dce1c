//! `aten::pixel_shuffle.out`: channels to space.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, Walk};

/// `out = pixel_shuffle(self, r)`: `[*, C*r*r, H, W]` becomes `[*, C, H*r, W*r]` with
/// `out[.., c, h*r + i, w*r + j] = self[.., c*r*r + i*r + j, h, w]`.
#[kernel("aten::pixel_shuffle.out")]
pub fn pixel_shuffle_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    upscale_factor: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let r = usize::try_from(upscale_factor)
        .ok()
        .filter(|&r| r > 0)
        .ok_or(KernelError::invalid("upscale factor must be positive"))?;
    if n < 3 || !input.size(n - 3).is_multiple_of(r * r) {
        return Err(KernelError::invalid(
            "pixel_shuffle needs [*, C*r*r, H, W] input",
        ));
    }
    check_same_dtype(input, out)?;
    let (c, h, w) = (
        input.size(n - 3) / (r * r),
        input.size(n - 2),
        input.size(n - 1),
    );
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n - 3].copy_from_slice(&input.sizes()[..n - 3]);
    sizes[n - 3..n].copy_from_slice(&[c, h * r, w * r]);
    out.resize(&sizes[..n])?;
    let (is, os) = (istrides(input)?, istrides(out)?);
    // Walk the output as [*, C, H, r, W, r] (its own strides split) against the input's
    // channel dim split as [C, r, r].
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
    dst[b..b + 5].copy_from_slice(&[oc, oh * ri, oh, ow * ri, ow]);
    src[b..b + 5].copy_from_slice(&[ic * ri * ri, ih, ic * ri, iw, ic]);
    let walk = Walk::copy(&walk_sizes[..b + 5], &dst[..b + 5], &src[..b + 5])?;
    let elem = input.dtype().element_size();
    walk.move_bytes(elem, out.bytes_mut()?, 0, input.bytes()?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn moves_channels_into_space() {
        with_ctx(|ctx| {
            // Four 1x1 channels become one 2x2 plane.
            let x = TensorBuf::from_slice(&[1, 4, 1, 1], &[0i64, 1, 2, 3]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 1, 2, 2]).unwrap();
            pixel_shuffle_out(ctx, &x, 2, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 1, 2, 3]);
            // Two 1x2 planes per output channel, r = 2 over 4 channels: rows interleave.
            let v: [i64; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
            let x = TensorBuf::from_slice(&[4, 1, 2], &v).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 2, 4]).unwrap();
            pixel_shuffle_out(ctx, &x, 2, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 2, 1, 3, 4, 6, 5, 7]);
            assert!(pixel_shuffle_out(ctx, &x, 3, &mut o).is_err());
        });
    }
}
