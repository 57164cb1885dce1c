//! Clamp, Add and GlobalAvgPooling2d on qint8 values, in XNNPACK's arithmetic (see
//! `compute::qelementwise`). Each fp32 kind's `prepare` hands its node here when the
//! input is quantized.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_schema::xnnpack::NodeView;

use super::{wrong_params, Clamp, Params, Step};
use crate::compute::qelementwise::{AddParams, MeanParams};
use crate::compute::requant::quantize_bound;
use crate::exec::Frame;
use crate::plan::{Builder, Elem, Quant};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Quantized {
    /// Clamp to `[min, max]` (input and output share quantization).
    Clamp {
        input: u32,
        output: u32,
        min: i8,
        max: i8,
    },
    /// Add of two same-sized inputs.
    Add {
        a: u32,
        b: u32,
        output: u32,
        params: AddParams,
    },
    /// The mean over the `pixels` of each batch's each channel.
    Mean {
        input: u32,
        output: u32,
        batch: usize,
        pixels: usize,
        channels: usize,
        params: MeanParams,
    },
}

fn qs8(b: &Builder<'_, '_>, v: u32) -> Result<Quant, DelegateError> {
    match b.value(v).elem {
        Elem::Qs8(q) => Ok(q),
        _ => Err(b.fail(
            Error::NotSupported,
            "a quantized value of this node is not qint8 (the only quantized type it runs on)",
        )),
    }
}

fn checked_range(b: &Builder<'_, '_>, node: &NodeView<'_>) -> Result<Clamp, DelegateError> {
    let clamp = Clamp::of(node);
    if clamp.min.is_nan() || clamp.max.is_nan() || clamp.min > clamp.max {
        return Err(b.invalid("the output range is empty"));
    }
    Ok(clamp)
}

fn step(q: Quantized) -> Step {
    Step {
        run,
        params: Params::Quantized(q),
    }
}

/// Clamp: XNNPACK runs it only when input and output share scale and zero point (an
/// integer clamp of the quantized bounds) and refuses it otherwise, as this does.
pub(crate) fn prepare_clamp(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    output: u32,
) -> Result<Step, DelegateError> {
    let (x, y) = (qs8(b, input)?, qs8(b, output)?);
    if x != y {
        return Err(b.fail(
            Error::NotSupported,
            "a qint8 Clamp whose input and output quantization differ (XNNPACK refuses it too)",
        ));
    }
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    let clamp = checked_range(b, node)?;
    Ok(step(Quantized::Clamp {
        input,
        output,
        min: quantize_bound(clamp.min, y.scale, y.zero_point) as i8,
        max: quantize_bound(clamp.max, y.scale, y.zero_point) as i8,
    }))
}

/// Add with qint8 inputs and output of the same sizes.
pub(crate) fn prepare_add(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    x: u32,
    z: u32,
    output: u32,
) -> Result<Step, DelegateError> {
    let (qa, qb, qy) = (qs8(b, x)?, qs8(b, z)?, qs8(b, output)?);
    if b.shape(x) != b.shape(output) || b.shape(z) != b.shape(output) {
        return Err(b.fail(
            Error::NotSupported,
            "a qint8 Add with broadcasting is not implemented",
        ));
    }
    let clamp = checked_range(b, node)?;
    let params = AddParams::new(qa, qb, qy, clamp.min, clamp.max).ok_or_else(|| {
        b.fail(
            Error::NotSupported,
            "a qint8 Add whose input to output scale ratio is outside [2^-10, 2^8) (XNNPACK's range)",
        )
    })?;
    Ok(step(Quantized::Add {
        a: x,
        b: z,
        output,
        params,
    }))
}

/// GlobalAvgPooling2d on a qint8 `[n, h, w, c]` input (checked by the caller).
pub(crate) fn prepare_mean(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    output: u32,
) -> Result<Step, DelegateError> {
    let (x, y) = (qs8(b, input)?, qs8(b, output)?);
    let is = b.shape(input);
    let (batch, channels) = (is.dims()[0], is.dims()[3]);
    let pixels = is.dims()[1] * is.dims()[2];
    // 2^23 int8s at most keep the int32 sum exact and the count exact as a float.
    if pixels == 0 || pixels > 1 << 23 {
        return Err(b.fail(
            Error::NotSupported,
            "a qint8 GlobalAvgPooling2d over no pixels or more than 2^23",
        ));
    }
    let clamp = checked_range(b, node)?;
    b.scratch(mean_scratch(channels));
    Ok(step(Quantized::Mean {
        input,
        output,
        batch,
        pixels,
        channels,
        params: MeanParams::new(x, y, pixels, clamp.min, clamp.max),
    }))
}

#[inline(always)]
fn clamp(x: &[i8], out: &mut [i8], min: i8, max: i8) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v.clamp(min, max);
    }
}

/// [`clamp`] compiled for AVX2 (32-lane `vpmaxsb`/`vpminsb`; SSE2 has no signed byte
/// min and max).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn clamp_avx2(x: &[i8], out: &mut [i8], min: i8, max: i8) {
    clamp(x, out, min, max);
}

#[inline(always)]
fn add(params: &AddParams, a: &[i8], b: &[i8], out: &mut [i8]) {
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *o = params.apply(a, b);
    }
}

/// [`add`] compiled for AVX2 (8-lane `vpmulld`, which SSE2 lacks).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2(params: &AddParams, a: &[i8], b: &[i8], out: &mut [i8]) {
    add(params, a, b, out);
}

/// Scratch bytes of a mean over `channels`: one int32 accumulator each.
pub(crate) fn mean_scratch(channels: usize) -> usize {
    channels.saturating_mul(4).next_multiple_of(64)
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Quantized(q) = step.params else {
        return Err(wrong_params());
    };
    match q {
        Quantized::Clamp {
            input,
            output,
            min,
            max,
        } => {
            let x = frame.input::<i8>(input)?;
            let out = frame.output::<i8>(output)?;
            #[cfg(target_arch = "x86_64")]
            if et_ops::gemm::avx2_fma_available() {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above); the
                // function only compiles the same safe code for that instruction set.
                unsafe { clamp_avx2(x, out, min, max) };
                return Ok(());
            }
            clamp(x, out, min, max);
        }
        Quantized::Add {
            a,
            b,
            output,
            params,
        } => {
            let (a, b) = (frame.input::<i8>(a)?, frame.input::<i8>(b)?);
            let out = frame.output::<i8>(output)?;
            #[cfg(target_arch = "x86_64")]
            if et_ops::gemm::avx2_fma_available() {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above); the
                // function only compiles the same safe code for that instruction set.
                unsafe { add_avx2(&params, a, b, out) };
                return Ok(());
            }
            add(&params, a, b, out);
        }
        Quantized::Mean {
            input,
            output,
            batch,
            pixels,
            channels,
            params,
        } => {
            let x = frame.input::<i8>(input)?;
            let out = frame.output::<i8>(output)?;
            // A sum per channel, one pixel at a time: the int32 accumulators live in the
            // scratch (`channels` of them, registered at init).
            let (acc, _) = frame.scratch(channels)?;
            let acc = crate::plain::cast_mut::<f32, i32>(acc);
            for n in 0..batch {
                acc.fill(0);
                let image = &x[n * pixels * channels..(n + 1) * pixels * channels];
                for px in image.chunks_exact(channels.max(1)) {
                    for (a, &v) in acc.iter_mut().zip(px) {
                        *a += i32::from(v);
                    }
                }
                let y = &mut out[n * channels..(n + 1) * channels];
                for (y, &a) in y.iter_mut().zip(acc.iter()) {
                    *y = params.apply(a);
                }
            }
        }
    }
    Ok(())
}
