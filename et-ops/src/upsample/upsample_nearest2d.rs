//! `aten::upsample_nearest2d.vec_out`: nearest-neighbour 2-d resize.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, DtypeSet, KernelContext, KernelError, KernelResult, ScalarType,
    Tensor,
};

use super::{out_sizes, scale_value, strides4};

/// Resizes `input` (`[N, C, H, W]`) to `output_size` or by `scale_factors`, each output
/// pixel copying input `min(floor(dst * scale), in - 1)` with `scale` in f32 as PyTorch's
/// legacy `nearest` mode computes it.
#[kernel("aten::upsample_nearest2d.vec_out", accepts = [all])]
pub fn upsample_nearest2d_vec_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
    out: &mut Tensor,
) -> KernelResult {
    let ([oh, ow], scales) = out_sizes(input, output_size, scale_factors)?;
    if out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "upsample out dtype differs from the input's",
        ));
    }
    out.resize(&[input.size(0), input.size(1), oh, ow])?;
    // Source row and column of every output row and column.
    let (ih, iw) = (input.size(2), input.size(3));
    let src_h = ctx.alloc_temp::<u32>(oh)?;
    let src_w = ctx.alloc_temp::<u32>(ow)?;
    nearest_indices(src_h, ih, scales[0]);
    nearest_indices(src_w, iw, scales[1]);
    // Only the element's width matters to a copy: one loop per width (1, 2, 4, 8 bytes)
    // instead of one per dtype, each compiled only if a selected dtype has that width.
    et_switch!(Sel, input.dtype(), @all, _T => Ok(()))?;
    let g = Geometry {
        nc: [input.size(0), input.size(1)],
        is: strides4(input),
        os: strides4(out),
        sh: src_h,
        sw: src_w,
    };
    let x = input.bytes()?;
    let y = out.bytes_mut()?;
    match input.dtype().element_size() {
        1 if const { has_width(Sel::SET, 1) } => gather::<1>(&g, x, y),
        2 if const { has_width(Sel::SET, 2) } => gather::<2>(&g, x, y),
        4 if const { has_width(Sel::SET, 4) } => gather::<4>(&g, x, y),
        8 if const { has_width(Sel::SET, 8) } => gather::<8>(&g, x, y),
        _ => Err(KernelError::invalid("unsupported element width")),
    }
}

/// True if a dtype of `sel` that the kernel takes is `w` bytes wide.
const fn has_width(sel: DtypeSet, w: usize) -> bool {
    use ScalarType::{Bool, Byte, Char, Double, Float, Half, Int, Long, Short};
    let all = [Byte, Char, Short, Int, Long, Half, Float, Double, Bool];
    let mut i = 0;
    while i < all.len() {
        if sel.contains(all[i]) && all[i].element_size() == w {
            return true;
        }
        i += 1;
    }
    false
}

fn nearest_indices(dst: &mut [u32], input: usize, scale: Option<f64>) {
    let output = dst.len();
    let s = scale_value(scale, input, output) as f32;
    for (o, d) in dst.iter_mut().enumerate() {
        let src = if output == input {
            o
        } else if output == 2 * input {
            o >> 1
        } else {
            (libm::floorf(o as f32 * s) as usize).min(input - 1)
        };
        *d = src as u32;
    }
}

/// Copies `W`-byte elements: `y[n, c, oy, ox] = x[n, c, sh[oy], sw[ox]]`.
fn gather<const W: usize>(g: &Geometry, x: &[u8], y: &mut [u8]) -> KernelResult {
    let (is, os) = (g.is, g.os);
    for n in 0..g.nc[0] {
        for c in 0..g.nc[1] {
            let (xb, yb) = (n * is[0] + c * is[1], n * os[0] + c * os[1]);
            for (oy, &iy) in g.sh.iter().enumerate() {
                let (xr, yr) = (xb + iy as usize * is[2], yb + oy * os[2]);
                for (ox, &ix) in g.sw.iter().enumerate() {
                    let (i, o) = ((xr + ix as usize * is[3]) * W, (yr + ox * os[3]) * W);
                    y[o..o + W].copy_from_slice(&x[i..i + W]);
                }
            }
        }
    }
    Ok(())
}

/// What [`gather`] walks: batch and channel counts, element strides of input and out,
/// and the source row and column of each out row and column.
struct Geometry<'a> {
    nc: [usize; 2],
    is: [usize; 4],
    os: [usize; 4],
    sh: &'a [u32],
    sw: &'a [u32],
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn nearest() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 1, 2, 2], &[1i64, 2, 3, 4]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 1, 4, 3]).unwrap();
        upsample_nearest2d_vec_out::<AllDtypes>(&ctx, &x, Some(&[4, 3]), None, &mut o).unwrap();
        assert_eq!(
            o.data::<i64>().unwrap(),
            &[1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4]
        );
        let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 1, 1, 1]).unwrap();
        upsample_nearest2d_vec_out::<AllDtypes>(&ctx, &x, None, Some(&[0.5, 0.5]), &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[1]);
        assert!(upsample_nearest2d_vec_out::<AllDtypes>(
            &ctx,
            &x,
            Some(&[1, 1]),
            Some(&[0.5, 0.5]),
            &mut o
        )
        .is_err());
        let empty = TensorBuf::zeros(ScalarType::Long, &[1, 1, 0, 2]).unwrap();
        assert!(
            upsample_nearest2d_vec_out::<AllDtypes>(&ctx, &empty, Some(&[1, 1]), None, &mut o)
                .is_err()
        );
    }
}
