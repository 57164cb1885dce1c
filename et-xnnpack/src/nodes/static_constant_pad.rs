//! StaticConstantPad: the input placed at `pre_paddings` inside an output of
//! `pre + input + post` along each dim, every other element `padding_value`. On qint8 and
//! quint8 the value is quantized with the output's parameters, as XNNPACK does when the
//! node is defined (`val / scale + zero_point`, clamped, rounded half to even), so the
//! padding is the integer that stands for the nearest representable real.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, other_family, Builder};
use crate::compute::requant::quantize_bound_in;
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::{Shape, MAX_RANK};

type P<'a> = xf::XNNStaticConstantPad<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Pad {
    input: u32,
    output: u32,
    pre: [usize; MAX_RANK],
    /// The padding element: an `f32`'s bits, or the quantized byte.
    fill: u32,
    bytes: bool,
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step<Pad>, DelegateError> {
    check_flags(b, node.u32(P::VT_FLAGS), 0)?;
    let input = b.read_any(node.u32(P::VT_INPUT_ID))?;
    let output = b.write_any(node.u32(P::VT_OUTPUT_ID), &[input])?;
    let bytes = super::copy::same_plain_elem(b, input, output)?;
    let value = node.f32(P::VT_PADDING_VALUE);
    let fill = match b.value(output).elem {
        Elem::Qs8(q) => {
            quantize_bound_in(value, q.scale, q.zero_point, (-128, 127)) as i8 as u8 as u32
        }
        Elem::Qu8(q) => quantize_bound_in(value, q.scale, q.zero_point, (0, 255)) as u8 as u32,
        _ => value.to_bits(),
    };
    let (is, os) = (b.shape(input), b.shape(output));
    let mut pre = [0usize; MAX_RANK];
    let fits = match (
        node.table.vector(P::VT_PRE_PADDINGS),
        node.table.vector(P::VT_POST_PADDINGS),
    ) {
        (Some(lo), Some(hi)) => {
            let rank = is.rank();
            lo.len() == rank
                && hi.len() == rank
                && os.rank() == rank
                && (0..rank).all(|d| {
                    let (l, h) = (lo.uint(d, 4) as usize, hi.uint(d, 4) as usize);
                    pre[d] = l;
                    is.dims()[d].checked_add(l).and_then(|s| s.checked_add(h)) == Some(os.dims()[d])
                })
        }
        _ => false,
    };
    if !fits {
        return Err(b.invalid(
            "the paddings do not give the output's sizes (one pre and post padding per dim)",
        ));
    }
    Ok(Step {
        run,
        params: Pad {
            input,
            output,
            pre,
            fill,
            bytes,
        },
    })
}

/// The fp32 family; the node's values must be fp32.
pub(super) fn prepare_fp32(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Pad>, DelegateError> {
    let input = b.read_any(node.u32(P::VT_INPUT_ID))?;
    b.require_f32(input)?;
    prepare(b, node)
}

/// The qint8 family (8-bit values per tensor).
pub(super) fn prepare_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Pad>, DelegateError> {
    let input = b.read_any(node.u32(P::VT_INPUT_ID))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    prepare(b, node)
}

fn run(p: &Pad, frame: &Frame<'_>) -> KernelResult {
    let (is, os) = (frame.shape(p.input), frame.shape(p.output));
    if p.bytes {
        let x = frame.input::<u8>(p.input)?;
        let out = frame.output::<u8>(p.output)?;
        pad(x, &is, &p.pre, out, &os, p.fill as u8);
    } else {
        let x = frame.input::<f32>(p.input)?;
        let out = frame.output::<f32>(p.output)?;
        pad(x, &is, &p.pre, out, &os, f32::from_bits(p.fill));
    }
    Ok(())
}

/// Fills `out` (sizes `os`) with `fill` and copies `x` (sizes `is`) in at offsets `pre`,
/// one innermost row at a time. The sizes were checked at init: `os = pre + is + post`.
pub(crate) fn pad<T: Copy>(x: &[T], is: &Shape, pre: &[usize], out: &mut [T], os: &Shape, fill: T) {
    out.fill(fill);
    let rank = is.rank();
    if rank == 0 {
        out.copy_from_slice(x);
        return;
    }
    let inner = is.last();
    if inner == 0 || x.is_empty() {
        return;
    }
    let mut out_strides = [0usize; MAX_RANK];
    let mut stride = 1;
    for d in (0..rank).rev() {
        out_strides[d] = stride;
        stride *= os.dims()[d];
    }
    let mut index = [0usize; MAX_RANK];
    for row in x.chunks_exact(inner) {
        let at: usize = (0..rank)
            .map(|d| (pre[d] + index[d]) * out_strides[d])
            .sum();
        out[at..at + inner].copy_from_slice(row);
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            if index[d] < is.dims()[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::{vec, vec::Vec};

    /// The padded tensor element by element: an output index maps back to the input
    /// when every coordinate minus its pre-padding lands inside the input.
    fn reference(x: &[f32], is: &[usize], pre: &[usize], os: &[usize], fill: f32) -> Vec<f32> {
        let total: usize = os.iter().product();
        (0..total)
            .map(|flat| {
                let mut rem = flat;
                let mut coords = vec![0; os.len()];
                for d in (0..os.len()).rev() {
                    coords[d] = rem % os[d];
                    rem /= os[d];
                }
                let mut src = 0;
                for d in 0..os.len() {
                    let Some(c) = coords[d].checked_sub(pre[d]).filter(|&c| c < is[d]) else {
                        return fill;
                    };
                    src = src * is[d] + c;
                }
                x[src]
            })
            .collect()
    }

    fn check(is: &[usize], pre: &[usize], post: &[usize]) {
        let os: Vec<usize> = (0..is.len()).map(|d| pre[d] + is[d] + post[d]).collect();
        let x: Vec<f32> = (0..is.iter().product::<usize>())
            .map(|i| i as f32 + 1.0)
            .collect();
        let mut out = vec![0.0; os.iter().product()];
        let (ishape, oshape) = (Shape::new(is).unwrap(), Shape::new(&os).unwrap());
        pad(&x, &ishape, pre, &mut out, &oshape, -7.5);
        assert_eq!(
            out,
            reference(&x, is, pre, &os, -7.5),
            "{is:?} {pre:?} {post:?}"
        );
    }

    #[test]
    fn pads_every_dim_on_either_side() {
        check(&[2, 3, 4, 5], &[0, 1, 2, 0], &[1, 0, 3, 2]);
        check(&[3], &[2], &[1]);
        check(&[1, 1, 1, 1], &[1, 1, 1, 1], &[1, 1, 1, 1]);
        check(&[2, 2], &[0, 0], &[0, 0]);
        check(
            &[1, 2, 3, 4, 2, 1],
            &[1, 0, 0, 1, 0, 2],
            &[0, 1, 1, 0, 2, 0],
        );
    }

    #[test]
    fn an_empty_input_gives_only_padding() {
        check(&[2, 0, 3], &[1, 2, 0], &[0, 1, 1]);
    }

    #[test]
    fn quantized_padding_follows_xnnpack_rounding() {
        // 0.75 / 0.5 + 3 = 4.5 -> 4 (half to even); far values saturate.
        assert_eq!(quantize_bound_in(0.75, 0.5, 3, (-128, 127)), 4);
        assert_eq!(quantize_bound_in(1e9, 0.5, 3, (-128, 127)), 127);
        assert_eq!(quantize_bound_in(-1e9, 0.5, 3, (0, 255)), 0);
    }
}
