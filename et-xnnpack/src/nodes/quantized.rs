//! Clamp, Add and GlobalAvgPooling2d on qint8 values (Add also on quint8, with NumPy
//! broadcasting), in XNNPACK's arithmetic (see `compute::qelementwise`). Each kind's
//! qint8 registration hands its node here.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::NodeView;

#[cfg(target_arch = "x86_64")]
use super::bands::Shapes;
use super::bands::{channel_runs, elementwise, image_pixels};
use crate::builder::Builder;
use crate::compute::clamp::Clamp;
use crate::compute::qelementwise::{self, AddParams, MeanParams, Q8};
use crate::compute::requant::quantize_bound;
use crate::elem::{Elem, Quant};
use crate::frame::{Frame, Step, ELEMENT_WORK, MAX_BANDS};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Quantized {
    /// Clamp to `[min, max]` (input and output share quantization).
    Clamp {
        input: u32,
        output: u32,
        min: i8,
        max: i8,
    },
    /// Add of two inputs broadcast to the output's sizes, all qint8 (`signed`) or all
    /// quint8.
    Add {
        a: u32,
        b: u32,
        output: u32,
        params: AddParams,
        signed: bool,
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

pub(crate) fn qs8(b: &Builder<'_, '_>, v: u32) -> Result<Quant, DelegateError> {
    match b.value(v).elem {
        Elem::Qs8(q) => Ok(q),
        _ => Err(b.fail(
            Error::NotSupported,
            "a quantized value of this node is not qint8 (the only quantized type it runs on)",
        )),
    }
}

pub(crate) fn checked_range(
    b: &Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Clamp, DelegateError> {
    let clamp = Clamp::of(node);
    if clamp.min.is_nan() || clamp.max.is_nan() || clamp.min > clamp.max {
        return Err(b.invalid("the output range is empty"));
    }
    Ok(clamp)
}

fn step(q: Quantized) -> Step<Quantized> {
    Step { run, params: q }
}

/// Clamp: XNNPACK runs it only when input and output share scale and zero point (an
/// integer clamp of the quantized bounds) and refuses it otherwise, as this does.
pub(crate) fn prepare_clamp(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    output: u32,
) -> Result<Step<Quantized>, DelegateError> {
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

/// Add (or, `subtract`, Subtract: XNNPACK's Add with the second input negated) with
/// inputs and output all qint8 or all quint8, the inputs' sizes broadcasting to the
/// output's.
pub(crate) fn prepare_add(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    (x, z, output): (u32, u32, u32),
    subtract: bool,
) -> Result<Step<Quantized>, DelegateError> {
    let (qa, qb, qy, signed) = match (b.value(x).elem, b.value(z).elem, b.value(output).elem) {
        (Elem::Qs8(qa), Elem::Qs8(qb), Elem::Qs8(qy)) => (qa, qb, qy, true),
        (Elem::Qu8(qa), Elem::Qu8(qb), Elem::Qu8(qy)) => (qa, qb, qy, false),
        _ => {
            return Err(b.fail(
                Error::NotSupported,
                "a quantized Add whose inputs and output are not all qint8 or all quint8",
            ))
        }
    };
    qelementwise::check_broadcast(&b.shape(x), &b.shape(z), &b.shape(output))
        .map_err(|message| b.invalid(message))?;
    let clamp = checked_range(b, node)?;
    let range = if signed { i8::RANGE } else { u8::RANGE };
    let range_of = (clamp.min, clamp.max);
    let params = AddParams::with_sign(qa, qb, qy, range_of, range, subtract).ok_or_else(|| {
        b.fail(
            Error::NotSupported,
            "a qint8 Add or Subtract whose larger input to output scale ratio is outside [2^-10, 2^8) (XNNPACK's range)",
        )
    })?;
    Ok(step(Quantized::Add {
        a: x,
        b: z,
        output,
        params,
        signed,
    }))
}

/// GlobalAvgPooling2d on a qint8 `[n, h, w, c]` input (checked by the caller).
pub(crate) fn prepare_mean(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    output: u32,
) -> Result<Step<Quantized>, DelegateError> {
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

/// [`qelementwise::add`] compiled for AVX2 (8-lane `vpmulld`, which SSE2 lacks).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2<T: Q8>(
    params: &AddParams,
    operands: (&[T], &[T], &mut [T]),
    shapes: Shapes<'_>,
) {
    qelementwise::add(params, operands, shapes);
}

/// An Add step on elements `T`.
fn run_add<T: Q8 + crate::plain::Plain + Send + Sync>(
    frame: &Frame<'_>,
    (a, b, output): (u32, u32, u32),
    params: &AddParams,
) -> KernelResult {
    let shapes = (frame.shape(a), frame.shape(b), frame.shape(output));
    let (a, b) = (frame.input::<T>(a)?, frame.input::<T>(b)?);
    let out = frame.output::<T>(output)?;
    elementwise(frame, (a, b), out, shapes, |a, b, out, shapes| {
        #[cfg(target_arch = "x86_64")]
        if et_ops::gemm::avx2_fma_available() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only compiles the same safe code for that instruction set.
            unsafe { add_avx2(params, (a, b, out), shapes) };
            return;
        }
        qelementwise::add(params, (a, b, out), shapes);
    })
}

/// Scratch bytes of a mean over `channels`: one int32 accumulator each, for each band
/// of a split.
pub(crate) fn mean_scratch(channels: usize) -> usize {
    channels
        .saturating_mul(4)
        .checked_next_multiple_of(64)
        .unwrap_or(usize::MAX)
        .saturating_mul(MAX_BANDS)
}

fn run(q: &Quantized, frame: &Frame<'_>) -> KernelResult {
    match *q {
        Quantized::Clamp {
            input,
            output,
            min,
            max,
        } => {
            let x = frame.input::<i8>(input)?;
            let out = frame.output::<i8>(output)?;
            let avx2 = et_ops::gemm::avx2_fma_available();
            // Large clamps (the early layers' activations) are cut into bands of
            // elements for the pool.
            frame.split_elements(x.len(), out, |band, out| {
                let x = &x[band];
                #[cfg(target_arch = "x86_64")]
                if avx2 {
                    // SAFETY: the CPU supports AVX2 and FMA (checked above); the
                    // function only compiles the same safe code for that instruction set.
                    unsafe { clamp_avx2(x, out, min, max) };
                    return;
                }
                let _ = avx2;
                clamp(x, out, min, max);
            })
        }
        Quantized::Add {
            a,
            b,
            output,
            params,
            signed,
        } => {
            if signed {
                run_add::<i8>(frame, (a, b, output), &params)
            } else {
                run_add::<u8>(frame, (a, b, output), &params)
            }
        }
        Quantized::Mean {
            input,
            output,
            batch,
            pixels,
            channels,
            params,
        } => {
            let channels = channels.max(1);
            let means = batch * channels;
            let x = frame.input::<i8>(input)?;
            let x = x.get(..means * pixels).ok_or(et_runtime::KernelError::new(
                Error::Internal,
                "a mean's input is smaller than its images",
            ))?;
            let out = frame.output::<i8>(output)?;
            // Bands of the outputs (images by channels) for the pool, as the fp32 mean
            // runs. A sum per channel, one pixel at a time: the band's int32 accumulators
            // live in its scratch (`mean_scratch` per band, registered at init).
            frame.split(
                means,
                pixels * ELEMENT_WORK,
                (out, 1),
                channels,
                |band, y, acc| {
                    let acc = crate::plain::cast_mut::<f32, i32>(acc);
                    for (image, run, at) in channel_runs(band, channels) {
                        let acc = &mut acc[..run.len()];
                        acc.fill(0);
                        for px in image_pixels(x, image, (pixels, channels)) {
                            for (a, &v) in acc.iter_mut().zip(&px[run.clone()]) {
                                *a += i32::from(v);
                            }
                        }
                        for (y, &a) in y[at..].iter_mut().zip(acc.iter()) {
                            *y = params.apply(a);
                        }
                    }
                },
            )
        }
    }
}
