//! Quantization parameters as the kernels read them: one (scale, zero point) pair for a
//! whole tensor, or one per channel read from parameter tensors.

use et_runtime::{KernelError, KernelResult, ScalarType, Tensor};

use super::channel_of;

/// Scales: a scalar argument or a float32/float64 tensor's values.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scales<'a> {
    /// One scale for every position.
    One(f64),
    /// float32 scales.
    F32(&'a [f32]),
    /// float64 scales.
    F64(&'a [f64]),
}

impl<'a> Scales<'a> {
    /// Reads `n` scales from `t`: float64, or float32 too when `allow_f32` (ExecuTorch's
    /// quantize kernels insist on float64, its dequantize kernels take both).
    pub(crate) fn of(t: &'a Tensor, allow_f32: bool, n: usize) -> KernelResult<Self> {
        if t.numel() != n {
            return Err(KernelError::invalid(
                "scale tensor must have one value per channel",
            ));
        }
        if !t.is_contiguous() {
            return Err(KernelError::invalid("scale tensor must be contiguous"));
        }
        match t.dtype() {
            ScalarType::Double => Ok(Scales::F64(t.data::<f64>()?)),
            ScalarType::Float if allow_f32 => Ok(Scales::F32(t.data::<f32>()?)),
            _ if allow_f32 => Err(KernelError::invalid(
                "scale tensor must be float32 or float64",
            )),
            _ => Err(KernelError::invalid("scale tensor must be float64")),
        }
    }

    /// Scale `c` (in range by construction; 0 past the end).
    #[inline(always)]
    pub(crate) fn get(&self, c: usize) -> f64 {
        match self {
            Scales::One(s) => *s,
            Scales::F32(d) => d.get(c).map_or(0.0, |&s| s as f64),
            Scales::F64(d) => d.get(c).copied().unwrap_or(0.0),
        }
    }
}

/// Zero points: a scalar argument, an int64/int32 tensor's values, or none (all 0).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Zeros<'a> {
    /// One zero point for every position (0 when the operator has none).
    One(i64),
    /// int64 zero points.
    I64(&'a [i64]),
    /// int32 zero points.
    I32(&'a [i32]),
}

impl<'a> Zeros<'a> {
    /// Reads `n` zero points from `t` (none: all 0): int64, or int32 too when
    /// `allow_i32` (ExecuTorch's per-channel dequantize accepts both).
    pub(crate) fn of(t: Option<&'a Tensor>, allow_i32: bool, n: usize) -> KernelResult<Self> {
        let Some(t) = t else {
            return Ok(Zeros::One(0));
        };
        if t.numel() != n {
            return Err(KernelError::invalid(
                "zero point tensor must have one value per channel",
            ));
        }
        if !t.is_contiguous() {
            return Err(KernelError::invalid("zero point tensor must be contiguous"));
        }
        match t.dtype() {
            ScalarType::Long => Ok(Zeros::I64(t.data::<i64>()?)),
            ScalarType::Int if allow_i32 => Ok(Zeros::I32(t.data::<i32>()?)),
            _ if allow_i32 => Err(KernelError::invalid(
                "zero point tensor must be int64 or int32",
            )),
            _ => Err(KernelError::invalid("zero point tensor must be int64")),
        }
    }

    /// Zero point `c`, narrowed to int32 as ExecuTorch's `static_cast<int32_t>` does.
    #[inline(always)]
    pub(crate) fn get(&self, c: usize) -> i32 {
        match self {
            Zeros::One(z) => *z as i32,
            Zeros::I64(d) => d.get(c).map_or(0, |&z| z as i32),
            Zeros::I32(d) => d.get(c).copied().unwrap_or(0),
        }
    }
}

/// Where each memory offset finds its scale and zero point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params<'a> {
    scales: Scales<'a>,
    zeros: Zeros<'a>,
    /// The channel axis's stride and size (size 1: one pair for everything).
    stride: usize,
    size: usize,
}

impl<'a> Params<'a> {
    /// One pair for every position.
    pub(crate) fn per_tensor(scale: f64, zero_point: i64) -> Self {
        Params {
            scales: Scales::One(scale),
            zeros: Zeros::One(zero_point),
            stride: 1,
            size: 1,
        }
    }

    /// One pair per index along an axis of `size` values `stride` elements apart.
    pub(crate) fn per_channel(
        scales: Scales<'a>,
        zeros: Zeros<'a>,
        stride: usize,
        size: usize,
    ) -> Self {
        Params {
            scales,
            zeros,
            stride,
            size,
        }
    }

    /// The channel of memory offset `i`.
    #[inline(always)]
    pub(crate) fn channel(&self, i: usize) -> usize {
        if self.size <= 1 {
            0
        } else {
            channel_of(i, self.stride, self.size)
        }
    }

    /// Channel `c`'s scale.
    #[inline(always)]
    pub(crate) fn scale(&self, c: usize) -> f64 {
        self.scales.get(c)
    }

    /// Channel `c`'s zero point.
    #[inline(always)]
    pub(crate) fn zero_point(&self, c: usize) -> i32 {
        self.zeros.get(c)
    }
}
