//! StaticResizeBilinear2D: NHWC bilinear resize to `new_height x new_width`, in the three
//! coordinate mappings XNNPACK defines: half-pixel centers (no flag, PyTorch's
//! `align_corners=False`), `XNN_FLAG_ALIGN_CORNERS` (corner pixels map onto corner
//! pixels; a 1-pixel output dim takes scale `in / 1`, as XNNPACK does) and
//! `XNN_FLAG_TENSORFLOW_LEGACY_MODE` (`out * in / out`, no centering). Sample positions
//! are clamped into the input, the two neighbours along each axis are `floor` and
//! `floor + 1` clamped to the last pixel, and the blend is XNNPACK's: along x on the top
//! and bottom rows, then along y.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{Graph, NodeView};

use crate::builder::{check_flags, graph_shape, Builder};
use crate::frame::{Frame, Step};

type R<'a> = xf::XNNStaticResizeBilinear2D<'a>;

/// `XNN_FLAG_TENSORFLOW_LEGACY_MODE`.
pub(crate) const TENSORFLOW_LEGACY: u32 = 0x4;
/// `XNN_FLAG_ALIGN_CORNERS`.
pub(crate) const ALIGN_CORNERS: u32 = 0x8;
/// `XNN_FLAG_TRANSIENT_INDIRECTION_BUFFER`: where XNNPACK keeps its indirection buffer,
/// which does not change the result.
const TRANSIENT_INDIRECTION: u32 = 0x20;

/// How output coordinates map to input ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mapping {
    HalfPixel,
    AlignCorners,
    Legacy,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Resize {
    input: u32,
    output: u32,
    mapping: Mapping,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Resize>, DelegateError> {
    let flags = node.u32(R::VT_FLAGS);
    check_flags(
        b,
        flags,
        TENSORFLOW_LEGACY | ALIGN_CORNERS | TRANSIENT_INDIRECTION,
    )?;
    let mapping = match (flags & ALIGN_CORNERS != 0, flags & TENSORFLOW_LEGACY != 0) {
        (true, true) => {
            return Err(b.invalid("align-corners and TensorFlow legacy mode exclude each other"));
        }
        (true, false) => Mapping::AlignCorners,
        (false, true) => Mapping::Legacy,
        (false, false) => Mapping::HalfPixel,
    };
    let input = b.read(node.u32(R::VT_INPUT_ID))?;
    let output = b.write(node.u32(R::VT_OUTPUT_ID), &[input])?;
    let (is, os) = (b.shape(input), b.shape(output));
    let (new_h, new_w) = (
        node.u32(R::VT_NEW_HEIGHT) as usize,
        node.u32(R::VT_NEW_WIDTH) as usize,
    );
    // XNNPACK takes sizes below 2^24 (its coordinates are floats).
    let small = |d: usize| d > 0 && d < 1 << 24;
    let fits = is.rank() == 4
        && os.rank() == 4
        && small(new_h)
        && small(new_w)
        && small(is.dims()[1])
        && small(is.dims()[2])
        && os.dims() == [is.dims()[0], new_h, new_w, is.dims()[3]];
    if !fits {
        return Err(b.invalid(
            "the input or output is not NHWC with the node's new height and width (each 1 to 2^24 - 1)",
        ));
    }
    b.scratch(column_bytes(new_w));
    Ok(Step {
        run,
        params: Resize {
            input,
            output,
            mapping,
        },
    })
}

/// The scratch of a run: one (neighbour, weight) entry per output column.
pub(super) fn scratch(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    match graph_shape(graph, node.u32(R::VT_OUTPUT_ID)) {
        Some(_) => column_bytes(node.u32(R::VT_NEW_WIDTH) as usize),
        None => 0,
    }
}

/// The scratch bytes of `width` columns, as `Frame::scratch` rounds them.
fn column_bytes(width: usize) -> usize {
    width
        .saturating_mul(COLUMN_FLOATS * 4)
        .checked_next_multiple_of(64)
        .unwrap_or(usize::MAX)
}

/// A column's left and right neighbours (as floats: scratch is `f32`) and its weight.
const COLUMN_FLOATS: usize = 3;

/// The input position of output coordinate `o` along one axis, and its two neighbours'
/// indices with the weight of the second: XNNPACK's computation in `f32`.
pub(crate) fn sample(
    mapping: Mapping,
    o: usize,
    in_len: usize,
    out_len: usize,
) -> (usize, usize, f32) {
    let adjust = usize::from(mapping == Mapping::AlignCorners && out_len != 1);
    let scale = (in_len - adjust) as f32 / (out_len - adjust) as f32;
    let last = (in_len - 1) as f32;
    let pos = match mapping {
        Mapping::AlignCorners | Mapping::Legacy => (o as f32 * scale).min(last),
        Mapping::HalfPixel => {
            let offset = 0.5 * scale - 0.5;
            (o as f32 * scale + offset).max(0.0).min(last)
        }
    };
    let lo = pos as usize;
    let hi = (lo + 1).min(in_len - 1);
    (lo, hi, pos - lo as f32)
}

fn run(p: &Resize, frame: &Frame<'_>) -> KernelResult {
    let (is, os) = (frame.shape(p.input), frame.shape(p.output));
    let ([x], out) = frame.operands([p.input], p.output)?;
    let (columns, _) = frame.scratch(os.dims()[2] * COLUMN_FLOATS)?;
    resize(x, is.dims(), out, os.dims(), p.mapping, columns);
    Ok(())
}

/// Resizes `x` (NHWC sizes `is`) into `out` (sizes `os`, same batch and channels);
/// `columns` holds `COLUMN_FLOATS` floats per output column.
pub(crate) fn resize(
    x: &[f32],
    is: &[usize],
    out: &mut [f32],
    os: &[usize],
    mapping: Mapping,
    columns: &mut [f32],
) {
    let (batch, in_h, in_w, c) = (is[0], is[1], is[2], is[3]);
    let (out_h, out_w) = (os[1], os[2]);
    if c == 0 || batch == 0 {
        return;
    }
    // Neighbour indices are below 2^24 (checked at init), exact as floats.
    for (ox, col) in columns.chunks_exact_mut(COLUMN_FLOATS).enumerate() {
        let (l, r, a) = sample(mapping, ox, in_w, out_w);
        col.copy_from_slice(&[l as f32, r as f32, a]);
    }
    let image = in_h * in_w * c;
    for (n, out_image) in out.chunks_exact_mut(out_h * out_w * c).enumerate() {
        let x = &x[n * image..][..image];
        for (oy, out_row) in out_image.chunks_exact_mut(out_w * c).enumerate() {
            let (t, bt, ay) = sample(mapping, oy, in_h, out_h);
            let (top, bottom) = (
                &x[t * in_w * c..][..in_w * c],
                &x[bt * in_w * c..][..in_w * c],
            );
            for (px, col) in out_row
                .chunks_exact_mut(c)
                .zip(columns.chunks_exact(COLUMN_FLOATS))
            {
                let (l, r, ax) = (col[0] as usize * c, col[1] as usize * c, col[2]);
                let (tl, tr) = (&top[l..l + c], &top[r..r + c]);
                let (bl, br) = (&bottom[l..l + c], &bottom[r..r + c]);
                for k in 0..c {
                    let t = tl[k] + (tr[k] - tl[k]) * ax;
                    let b = bl[k] + (br[k] - bl[k]) * ax;
                    px[k] = t + (b - t) * ay;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::{vec, vec::Vec};

    /// PyTorch's `upsample_bilinear2d` on one NHWC image written from its definition, in
    /// f64: the source coordinate of `o` is `o * (in - 1) / (out - 1)` with aligned
    /// corners (0 for a 1-pixel output), else `(o + 0.5) * in / out - 0.5` clamped at 0.
    fn reference(x: &[f32], is: [usize; 4], os: [usize; 2], align: bool) -> Vec<f32> {
        let [n, h, w, c] = is;
        let src = |o: usize, i: usize, out: usize| -> (usize, usize, f64) {
            let s = if align {
                if out == 1 {
                    0.0
                } else {
                    o as f64 * (i - 1) as f64 / (out - 1) as f64
                }
            } else {
                ((o as f64 + 0.5) * i as f64 / out as f64 - 0.5).max(0.0)
            };
            let lo = (s.floor() as usize).min(i - 1);
            (lo, (lo + 1).min(i - 1), s - lo as f64)
        };
        let mut out = Vec::new();
        for b in 0..n {
            for oy in 0..os[0] {
                let (t, bt, ay) = src(oy, h, os[0]);
                for ox in 0..os[1] {
                    let (l, r, ax) = src(ox, w, os[1]);
                    for k in 0..c {
                        let at = |y: usize, xx: usize| x[((b * h + y) * w + xx) * c + k] as f64;
                        let top = at(t, l) * (1.0 - ax) + at(t, r) * ax;
                        let bot = at(bt, l) * (1.0 - ax) + at(bt, r) * ax;
                        out.push((top * (1.0 - ay) + bot * ay) as f32);
                    }
                }
            }
        }
        out
    }

    fn run_case(is: [usize; 4], os: [usize; 2], mapping: Mapping) -> Vec<f32> {
        let x: Vec<f32> = (0..is.iter().product::<usize>())
            .map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.25)
            .collect();
        let mut out = vec![0.0; is[0] * os[0] * os[1] * is[3]];
        let mut cols = vec![0.0; os[1] * COLUMN_FLOATS];
        resize(
            &x,
            &is,
            &mut out,
            &[is[0], os[0], os[1], is[3]],
            mapping,
            &mut cols,
        );
        if mapping != Mapping::Legacy {
            let want = reference(&x, is, os, mapping == Mapping::AlignCorners);
            for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "{is:?}->{os:?} {mapping:?} at {i}: {g} vs {w}"
                );
            }
        }
        out
    }

    #[test]
    fn half_pixel_matches_pytorch_up_and_down() {
        for (is, os) in [
            ([1, 4, 5, 3], [8, 10]),
            ([2, 3, 3, 2], [7, 5]),
            ([1, 9, 7, 1], [4, 3]),
            ([1, 1, 1, 2], [3, 4]),
            ([1, 5, 6, 2], [1, 1]),
        ] {
            run_case(is, os, Mapping::HalfPixel);
        }
    }

    #[test]
    fn align_corners_matches_pytorch_including_one_pixel_dims() {
        for (is, os) in [
            ([1, 4, 5, 3], [8, 10]),
            ([1, 6, 6, 1], [3, 2]),
            // A 1-pixel output dim: XNNPACK keeps scale `in / 1` there, so the one row
            // samples input row 0, as PyTorch's align_corners does.
            ([1, 5, 4, 2], [1, 7]),
            ([1, 5, 4, 2], [6, 1]),
            // A 1-pixel input dim: every sample is that pixel.
            ([2, 1, 4, 2], [5, 9]),
        ] {
            run_case(is, os, Mapping::AlignCorners);
        }
    }

    #[test]
    fn legacy_mode_samples_at_out_times_in_over_out() {
        // 2 -> 4 wide: positions 0, 0.5, 1, 1.5 (clamped to 1): 10, 15, 20, 20.
        let x = [10.0, 20.0];
        let mut out = [0.0; 4];
        let mut cols = [0.0; 4 * COLUMN_FLOATS];
        resize(
            &x,
            &[1, 1, 2, 1],
            &mut out,
            &[1, 1, 4, 1],
            Mapping::Legacy,
            &mut cols,
        );
        assert_eq!(out, [10.0, 15.0, 20.0, 20.0]);
    }

    #[test]
    fn corners_land_on_corners_when_aligned() {
        let out = run_case([1, 3, 4, 1], [7, 9], Mapping::AlignCorners);
        let x_last = ((11 * 37 % 23) as f32 - 11.0) * 0.25;
        assert_eq!(out[0], -11.0 * 0.25);
        assert_eq!(*out.last().unwrap(), x_last);
    }
}
