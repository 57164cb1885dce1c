//! The fp32 Conv2d of a 1x1 window with unit stride, no padding and one group: a matrix
//! product of the input's pixels (rows of `group_in` floats, read in place) with the
//! filter packed once at init in `compute::fgemm`'s panels, the bias and the node's
//! range applied as each tile is stored. Its rows are cut into bands over the execute's
//! pool. MobileNet-style networks spend most of their time here.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::NodeView;

use super::convolution::ConvNode;
use crate::builder::{alloc_bound, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::fgemm::{self, Isa, PackedGemm};
use crate::frame::{Frame, Step};

/// A pointwise fp32 convolution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PointwiseConv {
    input: u32,
    output: u32,
    pixels: usize,
    channels_in: usize,
    channels_out: usize,
    /// `fgemm::packed_len(channels_out, channels_in)` floats in method memory.
    panels: *const f32,
    /// `fgemm::padded(channels_out)` floats, zero without a bias.
    bias: *const f32,
    clamp: Clamp,
    isa: Isa,
}

/// Prepares convolution `c` (checked by the caller to be pointwise with one group) whose
/// filter constant is `filter` (`[out][in]`).
pub(crate) fn prepare(
    b: &Builder<'_, '_>,
    node: &NodeView<'_>,
    c: &ConvNode,
    filter: &[f32],
) -> Result<Step<PointwiseConv>, DelegateError> {
    let (cin, cout) = (c.group_in, c.group_out);
    let panels = b.alloc::<f32>(fgemm::packed_len(cout, cin))?;
    fgemm::pack(cout, cin, |o, i| filter[o * cin + i], panels);
    let bias = b.alloc::<f32>(fgemm::padded(cout))?;
    if let Some(v) = c.bias {
        let src = b
            .constant(v)
            .ok_or_else(|| b.invalid("the bias is not 4-byte aligned"))?;
        let src = src
            .get(..cout)
            .ok_or_else(|| b.invalid("the bias is shorter than the output channels"))?;
        bias[..cout].copy_from_slice(src);
    }
    let w = &c.window;
    Ok(Step {
        run,
        params: PointwiseConv {
            input: c.input,
            output: c.output,
            pixels: w.batch * w.out_h * w.out_w,
            channels_in: cin,
            channels_out: cout,
            panels: panels.as_ptr(),
            bias: bias.as_ptr(),
            clamp: Clamp::of(node),
            isa: Isa::detect(),
        },
    })
}

/// The method memory [`prepare`] takes for `cout` channels of `cin` (saturating).
pub(crate) fn packed_bound(cout: usize, cin: usize) -> usize {
    alloc_bound(fgemm::packed_len(cout, cin), 4).saturating_add(alloc_bound(fgemm::padded(cout), 4))
}

fn run(p: &PointwiseConv, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    let (cin, cout) = (p.channels_in, p.channels_out);
    // SAFETY: both packed at init in method memory with these lengths, read-only since,
    // living as long as the plan.
    let (panels, bias) = unsafe {
        (
            core::slice::from_raw_parts(p.panels, fgemm::packed_len(cout, cin)),
            core::slice::from_raw_parts(p.bias, fgemm::padded(cout)),
        )
    };
    let gemm = PackedGemm {
        n: cout,
        k: cin,
        panels,
        bias,
        min: p.clamp.min,
        max: p.clamp.max,
        isa: p.isa,
    };
    let x = x.get(..p.pixels * cin).ok_or(et_runtime::KernelError::new(
        et_runtime::Error::Internal,
        "a convolution's input is smaller than its pixels",
    ))?;
    frame.split(p.pixels, cout * cin, (out, cout), 0, |band, out, _| {
        gemm.rows(&x[band.start * cin..band.end * cin], band.len(), out)
    })
}
