//! Convert: between fp32 and XNNPACK's 8-bit datatypes, as XNNPACK computes it.
//!
//! - fp32 to qint8 / quint8: `x * (1 / scale)`, clamped to the integer range less the
//!   zero point, rounded half to even, plus the zero point.
//! - qint8 / quint8 to fp32: `(q - zero_point) * scale`.
//! - fp32 to qdint8 (dynamic): per row, the range `[min(0, row min), max(0, row max)]`
//!   maps onto `[-128, 127]`: multiplier `255 / range`, a zero point nudged to an integer
//!   (from whichever end loses less), then the same rounding as above. The row's real
//!   scale (`1 / multiplier`) and zero point are stored after the data for the
//!   FullyConnected that reads it.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, other_family, Builder};
use crate::compute::requant::round_half_even;
use crate::elem::{qd8_params_offset, Elem, Quant};
use crate::frame::{Frame, Step};
use crate::values::Shape;

/// What a Convert node computes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Conversion {
    /// fp32 to an 8-bit type with one scale and zero point (`signed`: qint8).
    Quantize { q: Quant, signed: bool },
    /// An 8-bit type with one scale and zero point to fp32.
    Dequantize { q: Quant, signed: bool },
    /// fp32 to qdint8, `rows` rows of `row_len` elements.
    Dynamic { rows: usize, row_len: usize },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Convert {
    input: u32,
    output: u32,
    how: Conversion,
}

/// The qint8 family (fp32 to and from qint8/quint8) or, with `DYNAMIC`, the qdint8 one
/// (fp32 to qdint8): separate registrations, each running only its own conversions.
pub(super) fn prepare<const DYNAMIC: bool>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Convert>, DelegateError> {
    type N<'a> = xf::_XNNNode1x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let input = b.read_any(node.u32(N::VT_INPUT_ID))?;
    let output = b.write_any(node.u32(N::VT_OUTPUT_ID), &[input])?;
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    let how = match (b.value(input).elem, b.value(output).elem) {
        (Elem::F32, Elem::Qs8(q)) => Conversion::Quantize { q, signed: true },
        (Elem::F32, Elem::Qu8(q)) => Conversion::Quantize { q, signed: false },
        (Elem::Qs8(q), Elem::F32) => Conversion::Dequantize { q, signed: true },
        (Elem::Qu8(q), Elem::F32) => Conversion::Dequantize { q, signed: false },
        (Elem::F32, Elem::Qd8 { .. }) => {
            let out = b.value(output);
            let rows = out.rows();
            Conversion::Dynamic {
                rows,
                row_len: out.numel() / rows.max(1),
            }
        }
        _ => {
            return Err(b.fail(
                Error::NotSupported,
                "the conversion between these datatypes is not implemented (fp32 to and from qint8 and quint8, fp32 to qdint8 are)",
            ))
        }
    };
    if matches!(how, Conversion::Dynamic { .. }) != DYNAMIC {
        return Err(other_family(b));
    }
    Ok(Step {
        run: run::<DYNAMIC>,
        params: Convert { input, output, how },
    })
}

/// The integer range of an 8-bit type.
fn range(signed: bool) -> (i32, i32) {
    if signed {
        (-128, 127)
    } else {
        (0, 255)
    }
}

/// `x * multiplier`, clamped to `[lo, hi] - zero_point`, rounded half to even, plus the
/// zero point: XNNPACK's float-to-8-bit conversion, bit for bit.
#[inline]
fn quantize(x: f32, multiplier: f32, zero_point: i32, (lo, hi): (i32, i32)) -> i32 {
    let v = (x * multiplier)
        .max((lo - zero_point) as f32)
        .min((hi - zero_point) as f32);
    round_half_even(v) + zero_point
}

/// [`quantize`]s `x` into `out` (as many as the shorter holds), with AVX2 where the CPU
/// has it: the same operations eight lanes at a time, so the same bytes.
fn quantize_into(x: &[f32], out: &mut [u8], multiplier: f32, zero_point: i32, range: (i32, i32)) {
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 (checked just now); the function is safe code.
        unsafe { quantize_avx2(x, out, multiplier, zero_point, range) };
        return;
    }
    quantize_loop(x, out, multiplier, zero_point, range);
}

/// [`quantize_loop`] compiled for AVX2, which the compiler vectorizes eight floats wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn quantize_avx2(x: &[f32], out: &mut [u8], multiplier: f32, zero_point: i32, range: (i32, i32)) {
    quantize_loop(x, out, multiplier, zero_point, range);
}

#[inline(always)]
fn quantize_loop(x: &[f32], out: &mut [u8], multiplier: f32, zero_point: i32, range: (i32, i32)) {
    for (o, &x) in out.iter_mut().zip(x) {
        // In range by the clamp; `as u8` keeps the two's-complement byte.
        *o = quantize(x, multiplier, zero_point, range) as u8;
    }
}

/// `(x - zero_point) * scale` of each int8 (`signed`) or uint8 of `x` into `out` (as
/// many as the shorter holds), with AVX2 where the CPU has it: the same operations eight
/// lanes at a time, so the same floats.
fn dequantize_into(x: &[u8], out: &mut [f32], scale: f32, zero_point: i32, signed: bool) {
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 (checked just now); the function is safe code.
        unsafe { dequantize_avx2(x, out, scale, zero_point, signed) };
        return;
    }
    dequantize_loop(x, out, scale, zero_point, signed);
}

/// [`dequantize_loop`] compiled for AVX2, which the compiler vectorizes eight wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dequantize_avx2(x: &[u8], out: &mut [f32], scale: f32, zero_point: i32, signed: bool) {
    dequantize_loop(x, out, scale, zero_point, signed);
}

#[inline(always)]
fn dequantize_loop(x: &[u8], out: &mut [f32], scale: f32, zero_point: i32, signed: bool) {
    if signed {
        for (o, &x) in out.iter_mut().zip(x) {
            *o = (i32::from(x as i8) - zero_point) as f32 * scale;
        }
    } else {
        for (o, &x) in out.iter_mut().zip(x) {
            *o = (i32::from(x) - zero_point) as f32 * scale;
        }
    }
}

/// XNNPACK's dynamic quantization parameters of a row with extremes `min`, `max`: the
/// multiplier (1 / scale) and the zero point.
fn dynamic_params(min: f32, max: f32) -> (f32, i32) {
    let (qmin, qmax) = (-128.0f32, 127.0f32);
    let rmin = min.min(0.0);
    let rmax = max.max(0.0);
    let multiplier = if rmin == rmax {
        1.0
    } else {
        (qmax - qmin) / (rmax - rmin)
    };
    let (low, high) = (rmin * multiplier, rmax * multiplier);
    // The end whose error is smaller gives the zero point.
    let zero_point = if (qmin + low) + (qmax + high) > 0.0 {
        qmin - low
    } else {
        qmax - high
    };
    let zero_point = zero_point.max(qmin).min(qmax);
    (multiplier, quantize(zero_point, 1.0, 0, (-128, 127)))
}

impl Convert {
    /// The output value and its sizes for this execute's input sizes: the input's.
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        Ok((self.output, shape(self.input)))
    }
}

fn run<const DYNAMIC: bool>(p: &Convert, frame: &Frame<'_>) -> KernelResult {
    match p.how {
        // Each family's step runs its own conversions only (the other's code is not
        // instantiated for it).
        Conversion::Dynamic { .. } if !DYNAMIC => return Err(wrong_params()),
        Conversion::Quantize { .. } | Conversion::Dequantize { .. } if DYNAMIC => {
            return Err(wrong_params())
        }
        // Both static conversions run in bands of elements for the pool.
        Conversion::Quantize { q, signed } => {
            let x = frame.input::<f32>(p.input)?;
            let out = frame.output::<u8>(p.output)?;
            return frame.split_elements(x.len(), out, |band, out| {
                quantize_into(&x[band], out, 1.0 / q.scale, q.zero_point, range(signed));
            });
        }
        Conversion::Dequantize { q, signed } => {
            let x = frame.input::<u8>(p.input)?;
            let out = frame.output::<f32>(p.output)?;
            return frame.split_elements(x.len(), out, |band, out| {
                dequantize_into(&x[band], out, q.scale, q.zero_point, signed);
            });
        }
        Conversion::Dynamic {
            rows: planned,
            row_len,
        } => {
            // The rows of this execute (fewer than planned under a dynamic input).
            let rows = frame.rows(p.output);
            debug_assert!(rows <= planned);
            let x = frame.input::<f32>(p.input)?;
            let out = frame.output::<u8>(p.output)?;
            let at = qd8_params_offset(rows * row_len).unwrap_or(usize::MAX);
            let (data, params) =
                out.split_at_mut_checked(at)
                    .ok_or(et_runtime::KernelError::new(
                        Error::Internal,
                        "qdint8 value too small",
                    ))?;
            for ((row, q), param) in x
                .chunks_exact(row_len.max(1))
                .zip(data.chunks_exact_mut(row_len.max(1)))
                .zip(params.chunks_exact_mut(8))
            {
                let (min, max) = row
                    .iter()
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                        (lo.min(v), hi.max(v))
                    });
                let (multiplier, zero_point) = dynamic_params(min, max);
                quantize_into(row, q, multiplier, zero_point, (-128, 127));
                param[..4].copy_from_slice(&(1.0 / multiplier).to_le_bytes());
                param[4..].copy_from_slice(&zero_point.to_le_bytes());
            }
        }
    }
    Ok(())
}

/// The error for a step of one family run on a conversion of the other (a planning
/// bug).
fn wrong_params() -> et_runtime::KernelError {
    et_runtime::KernelError::new(
        et_runtime::Error::Internal,
        "step has another node's parameters",
    )
}

/// A qdint8 row's real scale and zero point, as [`run`] stored them.
pub(crate) fn row_params(params: &[u8], row: usize) -> (f32, i32) {
    let p = &params[8 * row..8 * row + 8];
    (
        f32::from_le_bytes([p[0], p[1], p[2], p[3]]),
        i32::from_le_bytes([p[4], p[5], p[6], p[7]]),
    )
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn quantize_rounds_half_to_even_and_saturates() {
        let q = |x| quantize(x, 1.0, 0, (-128, 127));
        assert_eq!([q(0.5), q(1.5), q(2.5), q(-0.5), q(-1.5)], [0, 2, 2, 0, -2]);
        assert_eq!(
            [q(1e9), q(-1e9), q(127.4), q(-128.6)],
            [127, -128, 127, -128]
        );
        // The clamp is on x * multiplier less the zero point.
        assert_eq!(quantize(200.0, 1.0, -5, (-128, 127)), 127);
        assert_eq!(quantize(0.26, 10.0, 3, (0, 255)), 6);
    }

    #[test]
    fn vector_quantization_matches_each_element() {
        // Halves, saturating values, infinities, NaN and signed zeros, at lengths around
        // whole vectors.
        let special = [
            0.5,
            1.5,
            -2.5,
            1e9,
            -1e9,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -0.0,
        ];
        let x: std::vec::Vec<f32> = (0..133)
            .map(|i| {
                special
                    .get(i % 19)
                    .copied()
                    .unwrap_or((i as f32 - 60.0) * 0.37)
            })
            .collect();
        for (multiplier, zero_point, range) in [
            (1.0, 0, (-128, 127)),
            (2.7, -9, (-128, 127)),
            (0.3, 130, (0, 255)),
        ] {
            for len in [0, 1, 7, 8, 9, 31, 32, 33, 133] {
                let mut got = std::vec![0xa5u8; len + 1];
                quantize_into(&x[..len], &mut got, multiplier, zero_point, range);
                for (i, (&g, &v)) in got.iter().zip(&x[..len]).enumerate() {
                    let want = quantize(v, multiplier, zero_point, range) as u8;
                    assert_eq!(g, want, "element {i} ({v}) of {len}");
                }
                assert_eq!(got[len], 0xa5, "wrote past {len} elements");
            }
        }
    }

    #[test]
    fn dynamic_params_follow_xnnpack() {
        // [-1, 3]: multiplier 255/4; -1 * 63.75 = -63.75, zero point -128 + 63.75 = -64.25
        // (from the min end, whose error sum is positive) rounds to -64.
        let (m, z) = dynamic_params(-1.0, 3.0);
        assert_eq!(m, 63.75);
        assert_eq!(z, -64);
        // All-positive rows still include 0; a constant row gets multiplier 1.
        assert_eq!(dynamic_params(2.0, 4.0), (255.0 / 4.0, -128));
        assert_eq!(dynamic_params(0.0, 0.0), (1.0, 127));
    }
}
