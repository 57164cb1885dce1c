//! XNNPACK's int8 activations. ELU, Sigmoid, Tanh and Hardswish on qint8 have no integer
//! kernel in XNNPACK: at operator creation it runs its float reference of the function on
//! all 256 inputs (dequantize, compute, requantize with round-half-to-even and
//! saturation) and keeps the table, so the run is a byte lookup, bit-exact to it. This
//! builds the same table. LeakyReLU has its own kernel (`qs8-vlrelu`): a fixed-point
//! multiplier per sign with 8 fractional bits.

use super::quant::Quant;
use super::requant::round_half_even;

/// A function XNNPACK tabulates for int8, with its float reference's arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LutOp {
    /// `alpha * expm1(x)` below 0.
    Elu(f32),
    /// `e / (1 + e)` with `e = exp(x)` in f64, saturated to 0 and 1 beyond ±100.
    Sigmoid,
    Tanh,
    /// `(x / 6) * max(min(x + 3, 6), 0)`.
    Hardswish,
}

impl LutOp {
    fn eval(self, x: f32) -> f32 {
        match self {
            LutOp::Elu(alpha) => {
                if x < 0.0 {
                    alpha * libm::expm1f(x)
                } else {
                    x
                }
            }
            LutOp::Sigmoid => {
                if x > 100.0 {
                    1.0
                } else if x < -100.0 {
                    0.0
                } else {
                    let e = libm::exp(f64::from(x));
                    (e / (1.0 + e)) as f32
                }
            }
            LutOp::Tanh => libm::tanhf(x),
            LutOp::Hardswish => (x / 6.0) * (x + 3.0).clamp(0.0, 6.0),
        }
    }
}

/// XNNPACK's float-to-int8 rounding of its reference kernels: NaN to 0, round half to
/// even, saturate.
fn round_to_i8(v: f32) -> i8 {
    if v.is_nan() {
        return 0;
    }
    // Clamping first gives the same integer (the bounds are integers) and keeps the
    // value in `round_half_even`'s range.
    round_half_even(v.clamp(-128.0, 127.0)) as i8
}

/// The table of `op` from input quantization `x` to output `y`, indexed by the input's
/// byte, its entries clamped to `[min, max]` (the node's quantized output range).
pub(crate) fn table(op: LutOp, x: Quant, y: Quant, (min, max): (i8, i8)) -> [i8; 256] {
    let inv_scale = 1.0 / y.scale;
    core::array::from_fn(|byte| {
        let q = byte as u8 as i8;
        let real = (f32::from(q) - x.zero_point as f32) * x.scale;
        let out = round_to_i8(op.eval(real) * inv_scale + y.zero_point as f32);
        out.clamp(min, max)
    })
}

/// `out[i] = table[x[i]]`.
#[inline]
pub(crate) fn lookup(table: &[i8; 256], x: &[i8], out: &mut [i8]) {
    #[cfg(target_arch = "aarch64")]
    neon::lookup(table, x, out);
    #[cfg(not(target_arch = "aarch64"))]
    for (o, &v) in out.iter_mut().zip(x) {
        *o = table[usize::from(v as u8)];
    }
}

/// XNNPACK's qs8 LeakyReLU parameters (`xnn_init_qs8_lrelu_scalar_params`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeakyParams {
    pub(crate) input_zero_point: i32,
    /// `input_scale / output_scale` and that times the slope, times 256, rounded half
    /// to even.
    pub(crate) positive_multiplier: i32,
    pub(crate) negative_multiplier: i32,
    pub(crate) output_zero_point: i32,
    pub(crate) min: i8,
    pub(crate) max: i8,
}

impl LeakyParams {
    /// `None` outside the ranges XNNPACK's parameter setup asserts: the positive scale
    /// ratio in `[2^-8, 2^7]`, the negative one's magnitude in `[2^-8, 2^7]` (and above
    /// `-0x1.FFFCp6`, about -127.996), both multipliers within int16 and the negative one not 0.
    pub(crate) fn new(x: Quant, y: Quant, slope: f32, (min, max): (i8, i8)) -> Option<LeakyParams> {
        let positive = x.scale / y.scale;
        let negative = positive * slope;
        let ok = (1.0 / 256.0..=128.0).contains(&positive)
            && (-(128.0 - 1.0 / 256.0)..=128.0).contains(&negative)
            && negative.abs() >= 1.0 / 256.0;
        if !ok {
            return None;
        }
        let positive_multiplier = round_half_even(256.0 * positive);
        let negative_multiplier = round_half_even(256.0 * negative);
        let in_range = (1..=32768).contains(&positive_multiplier)
            && (-32767..=32768).contains(&negative_multiplier)
            && negative_multiplier != 0;
        in_range.then_some(LeakyParams {
            input_zero_point: x.zero_point,
            positive_multiplier,
            negative_multiplier,
            output_zero_point: y.zero_point,
            min,
            max,
        })
    }

    /// One output: `((x - zp) * multiplier + 128) >> 8` (arithmetic, so halves round
    /// toward +inf) plus the output zero point, saturated, then clamped to the range.
    #[inline(always)]
    pub(crate) fn apply(&self, v: i8) -> i8 {
        let d = i32::from(v) - self.input_zero_point;
        let m = if d >= 0 {
            self.positive_multiplier
        } else {
            self.negative_multiplier
        };
        let acc = (self.output_zero_point << 8) + 0x80 + d * m;
        ((acc >> 8).clamp(-128, 127) as i8).clamp(self.min, self.max)
    }
}

/// XNNPACK's qs8 LeakyReLU of `x` into `out`.
#[inline(always)]
pub(crate) fn leaky_relu(p: &LeakyParams, x: &[i8], out: &mut [i8]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = p.apply(v);
    }
}

/// [`leaky_relu`] compiled for AVX2 (16-lane 32-bit multiplies and selects).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn leaky_relu_avx2(p: &LeakyParams, x: &[i8], out: &mut [i8]) {
    leaky_relu(p, x, out);
}

#[cfg(target_arch = "aarch64")]
#[path = "neon_lut.rs"]
mod neon;

#[cfg(test)]
#[path = "lut_tests.rs"]
mod tests;
