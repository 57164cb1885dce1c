//! GlobalAvgPooling2d: the mean over H and W of an NHWC input, per batch and channel
//! (`[n, h, w, c] -> [n, 1, 1, c]`, or `[n, c]`).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{Graph, NodeView};

use super::bands::{channel_runs, image_pixels};
use super::pooling::KEEP_DIMS;
use super::quantized::Quantized;
use crate::builder::{check_flags, graph_shape, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::elem::Elem;
use crate::frame::{Frame, Step, ELEMENT_WORK};

#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalAvg {
    input: u32,
    output: u32,
    batch: usize,
    pixels: usize,
    channels: usize,
    clamp: Clamp,
}

/// The fp32 family, or (`QUANTIZED`) the qint8 one of `quantized::prepare_mean` (`S`
/// is either step).
pub(super) fn prepare<const QUANTIZED: bool, S>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<S, DelegateError>
where
    S: From<Step<GlobalAvg>> + From<Step<Quantized>>,
{
    type N<'a> = xf::_XNNNode1x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), KEEP_DIMS)?;
    let input = b.read_any(node.u32(N::VT_INPUT_ID))?;
    let output = b.write_any(node.u32(N::VT_OUTPUT_ID), &[input])?;
    let quantized = b.value(input).elem != Elem::F32;
    if quantized != QUANTIZED {
        return Err(other_family(b));
    }
    if !QUANTIZED {
        b.require_f32(output)?;
    }
    let is = b.shape(input);
    if is.rank() != 4 {
        return Err(b.invalid("the input is not 4-D (NHWC)"));
    }
    let (batch, channels) = (is.dims()[0], is.dims()[3]);
    let os = b.shape(output);
    if os.dims() != [batch, 1, 1, channels] && os.dims() != [batch, channels] {
        return Err(b.invalid("the output is not [n, 1, 1, c] or [n, c]"));
    }
    if QUANTIZED {
        return super::quantized::prepare_mean(b, node, input, output).map(S::from);
    }
    Ok(S::from(Step {
        run,
        params: GlobalAvg {
            input,
            output,
            batch,
            pixels: is.dims()[1] * is.dims()[2],
            channels,
            clamp: Clamp::of(node),
        },
    }))
}

/// The qint8 family's accumulators (the fp32 one takes no scratch).
pub(super) fn scratch(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    type N<'a> = xf::_XNNNode1x1<'a>;
    let channels = graph_shape(graph, node.u32(N::VT_OUTPUT_ID)).map_or(0, |s| s.last());
    super::quantized::mean_scratch(channels)
}

fn run(p: &GlobalAvg, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    let (pixels, channels, clamp) = (p.pixels, p.channels.max(1), p.clamp);
    let scale = 1.0 / pixels as f32;
    let means = p.batch * channels;
    let x = x.get(..means * pixels).ok_or(et_runtime::KernelError::new(
        et_runtime::Error::Internal,
        "a mean's input is smaller than its images",
    ))?;
    // Bands of the outputs (images by channels) for the pool; each mean adds its
    // channel's pixels in order, whatever the band.
    frame.split(means, pixels * ELEMENT_WORK, (out, 1), 0, |band, out, _| {
        for (image, run, at) in channel_runs(band, channels) {
            let acc = &mut out[at..][..run.len()];
            acc.fill(0.0);
            for px in image_pixels(x, image, (pixels, channels)) {
                for (a, &v) in acc.iter_mut().zip(&px[run.clone()]) {
                    *a += v;
                }
            }
            for a in acc.iter_mut() {
                *a *= scale;
            }
            clamp.apply(acc);
        }
    })
}
