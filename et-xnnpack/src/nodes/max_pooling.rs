//! MaxPooling2d: the maximum over each window of an NHWC input; padding never wins (it
//! counts as -inf). The qint8 family is XNNPACK's `s8-maxpool` (`compute::qpool`): input
//! and output share quantization, the output range clamps in int8.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use super::pooling::{geometry, KEEP_DIMS};
use super::quantized::{checked_range, qs8};
use crate::builder::{check_flags, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::qpool;
use crate::compute::requant::quantize_bound;
use crate::compute::window::Window;
use crate::elem::Elem;
use crate::frame::{Frame, Step};

type P<'a> = xf::_XNNPooling2D<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) struct MaxPool {
    input: u32,
    output: u32,
    window: Window,
    channels: usize,
    clamp: Clamp,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantizedMaxPool {
    input: u32,
    output: u32,
    window: Window,
    channels: usize,
    min: i8,
    max: i8,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<MaxPool>, DelegateError> {
    check_flags(b, node.u32(P::VT_FLAGS), KEEP_DIMS)?;
    let input = b.read(node.u32(P::VT_INPUT_ID))?;
    let output = b.write(node.u32(P::VT_OUTPUT_ID), &[input])?;
    let (window, channels) = geometry(b, node, input, output)?;
    Ok(Step {
        run,
        params: MaxPool {
            input,
            output,
            window,
            channels,
            clamp: Clamp::of(node),
        },
    })
}

/// The qint8 family: XNNPACK defines it only when input and output share scale and zero
/// point, as this requires.
pub(super) fn prepare_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedMaxPool>, DelegateError> {
    check_flags(b, node.u32(P::VT_FLAGS), KEEP_DIMS)?;
    let input = b.read_any(node.u32(P::VT_INPUT_ID))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    let output = b.write_any(node.u32(P::VT_OUTPUT_ID), &[input])?;
    let (x, y) = (qs8(b, input)?, qs8(b, output)?);
    if x != y {
        return Err(b.fail(
            Error::NotSupported,
            "a qint8 MaxPooling2d whose input and output quantization differ (XNNPACK refuses it too)",
        ));
    }
    let (window, channels) = geometry(b, node, input, output)?;
    if window.in_h == 0 || window.in_w == 0 {
        return Err(b.invalid("the input has no pixels to pool"));
    }
    let clamp = checked_range(b, node)?;
    Ok(Step {
        run: run_qint8,
        params: QuantizedMaxPool {
            input,
            output,
            window,
            channels,
            min: quantize_bound(clamp.min, y.scale, y.zero_point) as i8,
            max: quantize_bound(clamp.max, y.scale, y.zero_point) as i8,
        },
    })
}

fn run_qint8(p: &QuantizedMaxPool, frame: &Frame<'_>) -> KernelResult {
    let x = frame.input::<i8>(p.input)?;
    let out = frame.output::<i8>(p.output)?;
    let range = (p.min, p.max);
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function only
        // compiles the same safe code for that instruction set.
        unsafe { qpool::max_pool_s8_avx2(&p.window, p.channels, range, x, out) };
        return Ok(());
    }
    qpool::max_pool_s8(&p.window, p.channels, range, x, out);
    Ok(())
}

fn run(p: &MaxPool, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    let (w, c) = (&p.window, p.channels);
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let at = ((n * w.out_h + oh) * w.out_w + ow) * c;
                let acc = &mut out[at..at + c];
                acc.fill(f32::NEG_INFINITY);
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let src = ((n * w.in_h + ih) * w.in_w + iw) * c;
                        for (a, &v) in acc.iter_mut().zip(&x[src..src + c]) {
                            *a = a.max(v);
                        }
                    }
                }
            }
        }
    }
    p.clamp.apply(out);
    Ok(())
}
