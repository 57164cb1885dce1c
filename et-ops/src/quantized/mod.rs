//! quantized operators: ExecuTorch's quantized kernel library
//! (`kernels/quantized/quantized.yaml`, the `quantized_decomposed::*` out variants).
//!
//! The arithmetic follows ExecuTorch's reference kernels step by step, because programs
//! exported with these operators are checked bit for bit against them:
//!
//! * quantize: `q = clamp(zp + nearbyint(x * (1 / scale)), quant_min, quant_max)` where the
//!   reciprocal, the product and the addition of the zero point are all float32 and
//!   `nearbyint` rounds half to even;
//! * dequantize: `x = (q - zp) * scale`, an int32 difference times a float32 scale;
//! * scales given as tensors are float64 where ExecuTorch requires it (quantize,
//!   choose_qparams) and float32 or float64 where it accepts both (dequantize).
//!
//! Elementwise kernels walk the input and the out in memory order, so they need the same
//! dim order (checked); per-channel kernels find a position's channel from the axis's
//! stride, which works for every dense dim order. Per-token, embedding and matmul kernels
//! address rows directly and need contiguous tensors, as ExecuTorch's do.
//!
//! Where ExecuTorch aborts (`ET_CHECK`) these kernels return a `KernelError`: wrong
//! dtypes, a scale tensor of the wrong length, an axis or index out of range, `quant_min
//! > quant_max`. Where C++ is undefined (a NaN or huge value converted to an integer),
//! Rust's saturating conversion decides (NaN becomes 0, then the clamp applies).
//! ExecuTorch's `Bits16` quantized dtype is not accepted: etch has no element type for it
//! (`UInt16` is).

pub mod add;
pub mod choose_qparams;
pub mod choose_qparams_per_token_asymmetric;
pub mod dequantize_per_channel;
pub mod dequantize_per_tensor;
pub mod dequantize_per_tensor_tensor;
pub mod dequantize_per_token;
pub mod embedding_2bit;
pub mod embedding_2bit_dtype;
pub mod embedding_4bit;
pub mod embedding_4bit_dtype;
pub mod embedding_byte;
pub mod embedding_byte_dtype;
pub mod mixed_linear;
pub mod mixed_mm;
pub mod quantize_per_channel;
pub mod quantize_per_tensor;
pub mod quantize_per_tensor_tensor;
pub mod quantize_per_token;

mod chunk;
mod embed;
mod floats;
mod qparams;

pub(crate) use chunk::{dequantize_with, quantize_with};

pub(crate) use qparams::{Params, Scales, Zeros};

use et_runtime::{KernelError, KernelResult, ScalarType, Tensor};

use crate::util::element::Float;

/// The representable range of a quantized dtype: the integer dtypes ExecuTorch's
/// quantize and dequantize kernels accept (int64 is not one of them).
pub(crate) fn dtype_range(dtype: ScalarType) -> Option<(i64, i64)> {
    Some(match dtype {
        ScalarType::Byte => (0, 255),
        ScalarType::Char => (-128, 127),
        ScalarType::UInt16 => (0, 65535),
        ScalarType::Short => (-32768, 32767),
        ScalarType::Int => (i32::MIN as i64, i32::MAX as i64),
        _ => return None,
    })
}

/// Checks the arguments every quantize kernel shares: a float input, an out whose dtype
/// is the `dtype` argument and one of the quantized dtypes, and a `[quant_min,
/// quant_max]` range inside that dtype. ExecuTorch does not reject `quant_min >
/// quant_max` for quantize (its clamp then yields `quant_max` everywhere); that range
/// can only come from a malformed program, so it is an error here.
pub(crate) fn check_quantize(
    input: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out: &Tensor,
) -> KernelResult {
    if !matches!(
        input.dtype(),
        ScalarType::Half | ScalarType::Float | ScalarType::Double
    ) {
        return Err(KernelError::invalid(
            "quantize input must be float16, float32 or float64",
        ));
    }
    if out.dtype() != dtype {
        return Err(KernelError::invalid(
            "quantize out dtype must equal the dtype argument",
        ));
    }
    let (lo, hi) = dtype_range(dtype).ok_or(KernelError::invalid(
        "quantized dtype must be uint8, int8, uint16, int16 or int32",
    ))?;
    if quant_min < lo || quant_max > hi {
        return Err(KernelError::invalid(
            "quant_min/quant_max outside the quantized dtype's range",
        ));
    }
    if quant_min > quant_max {
        return Err(KernelError::invalid("quant_min is greater than quant_max"));
    }
    Ok(())
}

/// Checks the arguments every dequantize kernel shares: a quantized input whose dtype is
/// the `dtype` argument, a float out (matching `out_dtype` when given) and `quant_min <=
/// quant_max` (the range itself is metadata: dequantize does not clamp).
pub(crate) fn check_dequantize(
    input: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out_dtype: Option<ScalarType>,
    out: &Tensor,
) -> KernelResult {
    if dtype_range(input.dtype()).is_none() {
        return Err(KernelError::invalid(
            "dequantize input must be uint8, int8, uint16, int16 or int32",
        ));
    }
    if input.dtype() != dtype {
        return Err(KernelError::invalid(
            "dequantize input dtype must equal the dtype argument",
        ));
    }
    if out_dtype.is_some_and(|d| d != out.dtype()) {
        return Err(KernelError::invalid(
            "dequantize out dtype must equal the out_dtype argument",
        ));
    }
    if !matches!(
        out.dtype(),
        ScalarType::Half | ScalarType::Float | ScalarType::Double
    ) {
        return Err(KernelError::invalid(
            "dequantize out must be float16, float32 or float64",
        ));
    }
    if quant_min > quant_max {
        return Err(KernelError::invalid("quant_min is greater than quant_max"));
    }
    Ok(())
}

/// Sizes `out` like `input` and checks that both lay their elements out alike, so that
/// memory offset `i` is the same logical element in both.
pub(crate) fn resize_like(input: &Tensor, out: &mut Tensor) -> KernelResult {
    out.resize(input.sizes())?;
    if out.dim_order() != input.dim_order() {
        return Err(KernelError::invalid("out must have the input's dim order"));
    }
    Ok(())
}

/// Channel `c` of the position at memory offset `i` along a dim of `size` values and
/// `stride` elements: in a dense tensor the dims outside the axis (in memory order) step
/// by multiples of `stride * size` and those inside sum to less than `stride`.
#[inline(always)]
pub(crate) fn channel_of(i: usize, stride: usize, size: usize) -> usize {
    (i / stride.max(1)) % size.max(1)
}

/// One quantized value, as ExecuTorch computes it: the product `x * inv_scale` rounded
/// to float32 (exact from f64 for f32 and f16 inputs: the f64 product of two narrower
/// floats is exact), rounded half to even, the int32 zero point added in float32, then
/// clamped. Float-to-integer conversion saturates (NaN gives 0, then the clamp), where C++
/// leaves out-of-range conversions undefined.
#[inline(always)]
pub(crate) fn quantize_val(inv_scale: f32, zero_point: i32, x: f64, qmin: i64, qmax: i64) -> i64 {
    let rounded = Float::round_even((inv_scale as f64 * x) as f32);
    let q = (zero_point as f32 + rounded) as i64;
    q.max(qmin).min(qmax)
}

/// The float32 reciprocal ExecuTorch multiplies by: `1.0f / (float)scale`.
#[inline(always)]
pub(crate) fn inv_scale(scale: f64) -> f32 {
    1.0f32 / scale as f32
}

/// One dequantized value: the int32 difference (wrapping as the C++ int arithmetic does
/// on real hardware) converted to float32 and multiplied by the float32 scale.
#[inline(always)]
pub(crate) fn dequantize_val(q: i64, zero_point: i32, scale: f32) -> f32 {
    (q as i32).wrapping_sub(zero_point) as f32 * scale
}

/// The number of rows ("tokens") of a per-token tensor: the product of every size but
/// the last. The tensor must have a dim and be contiguous (rows are read directly).
pub(crate) fn token_rows(t: &Tensor) -> KernelResult<(usize, usize)> {
    let d = t.dim();
    if d == 0 {
        return Err(KernelError::invalid(
            "per-token input needs at least one dim",
        ));
    }
    if !t.is_contiguous() {
        return Err(KernelError::invalid("per-token input must be contiguous"));
    }
    let width = t.size(d - 1);
    Ok((t.sizes()[..d - 1].iter().product(), width))
}
