//! Vectorized f32 transcendental functions over slices: `exp`, the logistic sigmoid,
//! SiLU, `tanh`, GELU (erf and tanh forms), hardswish, ELU, and softmax and log-softmax
//! over a row. The portable kernels and the XNNPACK backend both run their float32
//! activations on these.
//!
//! Each call runs the widest code the CPU supports, picked at run time: AVX-512F, else
//! AVX2 with FMA on x86-64 (the CPU check is the matrix multiply's, done once); NEON on
//! aarch64; a portable scalar version elsewhere. All of them are the same algorithm
//! written once over a small vector interface, so they differ only where a fused
//! multiply-add rounds once and the portable version twice.
//!
//! # Algorithms
//!
//! * `exp`: `x = n ln 2 + r` with `n = round(x log2 e)` and `r` reduced with ln 2 in two
//!   parts (exact first step), `e^r - 1` by a degree-6 minimax polynomial, and the result
//!   `2^n (1 + (e^r - 1))` scaled in two power-of-two factors so that it reaches the
//!   subnormals and overflows to infinity correctly.
//! * `tanh` from `e^(2|x|) - 1` (the same reduction, with `e^r - 1` kept apart so there is
//!   no cancellation near 0); sigmoid and SiLU from `e^-|x|`; ELU from `e^x - 1`.
//! * GELU's `erf` by a rational minimax approximation on `|z| <= 3.92` (±1 beyond); the
//!   tanh form as the equal `x * sigmoid(2u)`.
//!
//! Every function is exact at its saturation points: `exp` gives 0 below about -103.97
//! and infinity above about 88.72, `sigmoid` 0 (through the subnormals) and 1, `tanh` ±1;
//! NaN gives NaN.
//!
//! # Accuracy
//!
//! Measured by `dense_sweep` in `tests.rs` over every 7th f32 of each function's useful
//! range plus its ends, against the f64 functions, in units in the last place (ULP) of
//! the f32 result; the bound is what the tests assert (the shorter sweep that always runs
//! included). GELU's unit is the ULP of `max(|result|, |x| / 2)`: for negative `x` its
//! formula `x/2 * (1 + erf)` (and the f32 argument of the tanh form) leaves an absolute
//! error of an ULP or so of `x/2`, whatever the approximation. SiLU's is the ULP of
//! `max(|result|, |x| * f32::MIN_POSITIVE)`, for results whose sigmoid is subnormal.
//!
//! | function | range | portable (no FMA) | AVX2+FMA and AVX-512F | bound |
//! | --- | --- | --- | --- | --- |
//! | `exp` | -104..89 | 0.985 | 1.022 | 1.05 |
//! | `sigmoid` | -104..17 | 2.402 | 2.402 | 2.5 |
//! | `silu` | -104..17 | 3.178 | 3.178 | 3.5 |
//! | `tanh` | -10..10 | 2.524 | 2.517 | 3 |
//! | `gelu` | -6..6 | 5.801 | 4.976 | 6.5 portable, 5.5 fused |
//! | `gelu_tanh` | -10..10 | 2.461 | 2.461 | 2.5 |
//! | `hardswish` | -4..4 | 1.913 | 1.913 | 2 |
//! | `elu` | -18..1 | 1.632 | 1.671 | 2 |
//!
//! The figures are from x86-64; NEON runs the fused code and the same tests hold it to
//! the fused bounds on aarch64 (`scripts/aarch64-tests.sh`). Softmax rows add the
//! reciprocal and the product (and an f32 sum of partial sums) to `exp`'s error;
//! log-softmax subtracts the logarithm of that sum.
//!
//! The slice functions give the same bits however a slice is split (threads split
//! elementwise work into bands): a tail shorter than a vector is computed as a padded
//! vector by the same code.

mod functions;
mod lanes;
mod portable;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;

#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;

use functions::{
    Elu, Exp, Function, Gelu, GeluTanh, Hardswish, Scale, Sigmoid, Silu, SubtractTwice, Tanh,
};

/// The entry points of one instruction set: the generic loops of [`lanes`], compiled
/// with the instruction set's target features (the attributes passed in) so that the
/// vector type's operations inline into them.
macro_rules! entry_points {
    ($(#[$attr:meta])* $lanes:ty) => {
        /// `dst[i] = f(src[i])`, or in place without `src`.
        $(#[$attr])*
        pub(super) fn map<F: super::functions::Function>(
            f: F,
            src: Option<&[f32]>,
            dst: &mut [f32],
        ) {
            super::lanes::map::<$lanes, F>(f, src, dst)
        }

        /// The largest element.
        $(#[$attr])*
        pub(super) fn row_max(x: &[f32]) -> f32 {
            super::lanes::row_max::<$lanes>(x)
        }

        /// The sum of `e^(x[i] - shift)`, the terms stored into `out` if given.
        $(#[$attr])*
        pub(super) fn exp_sum(x: &[f32], shift: f32, out: Option<&mut [f32]>) -> f32 {
            super::lanes::exp_sum::<$lanes>(x, shift, out)
        }
    };
}
use entry_points;

/// The instruction sets, narrowest first. A variant other than `Portable` is only made
/// by [`Isa::detected`] and [`Isa::available`], after checking that the CPU runs it:
/// the dispatch relies on that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    #[cfg_attr(
        target_arch = "aarch64",
        allow(
            dead_code,
            reason = "NEON is always present; tests run the portable code"
        )
    )]
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Isa {
    /// The widest instruction set this CPU runs.
    #[inline]
    fn detected() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            // AVX-512F is only reported together with AVX2 and FMA.
            if crate::util::gemm::avx512f_available() {
                Isa::Avx512
            } else if crate::util::gemm::avx2_fma_available() {
                Isa::Avx2
            } else {
                Isa::Portable
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            Isa::Neon
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Isa::Portable
        }
    }

    /// Every instruction set this CPU runs, the portable code first.
    #[cfg(test)]
    fn available() -> impl Iterator<Item = Isa> {
        const ALL: &[Isa] = &[
            Isa::Portable,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon,
        ];
        let widest = Isa::detected();
        let last = ALL.iter().position(|&i| i == widest).unwrap_or(0);
        ALL[..=last].iter().copied()
    }

    /// `dst[i] = f(src[i])`, or in place without `src`.
    #[inline]
    fn map(self, f: impl Function, src: Option<&[f32]>, dst: &mut [f32]) {
        match self {
            Isa::Portable => portable::map(f, src, dst),
            // SAFETY: `Isa::Avx2` exists only where the CPU has AVX2 and FMA (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::map(f, src, dst) },
            // SAFETY: `Isa::Avx512` exists only where the CPU has AVX-512F (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::map(f, src, dst) },
            // SAFETY: NEON is part of the aarch64 baseline (every aarch64 target Rust
            // supports has it), all the entry point requires.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => unsafe { neon::map(f, src, dst) },
        }
    }

    /// The largest element of `x`.
    #[inline]
    fn row_max(self, x: &[f32]) -> f32 {
        match self {
            Isa::Portable => portable::row_max(x),
            // SAFETY: `Isa::Avx2` exists only where the CPU has AVX2 and FMA (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::row_max(x) },
            // SAFETY: `Isa::Avx512` exists only where the CPU has AVX-512F (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::row_max(x) },
            // SAFETY: NEON is part of the aarch64 baseline (every aarch64 target Rust
            // supports has it), all the entry point requires.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => unsafe { neon::row_max(x) },
        }
    }

    /// The sum of `e^(x[i] - shift)`, each term also stored into `out` if given.
    #[inline]
    fn exp_sum(self, x: &[f32], shift: f32, out: Option<&mut [f32]>) -> f32 {
        match self {
            Isa::Portable => portable::exp_sum(x, shift, out),
            // SAFETY: `Isa::Avx2` exists only where the CPU has AVX2 and FMA (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::exp_sum(x, shift, out) },
            // SAFETY: `Isa::Avx512` exists only where the CPU has AVX-512F (see `Isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::exp_sum(x, shift, out) },
            // SAFETY: NEON is part of the aarch64 baseline (every aarch64 target Rust
            // supports has it), all the entry point requires.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => unsafe { neon::exp_sum(x, shift, out) },
        }
    }

    /// Softmax of the row `x` into `out`.
    fn softmax(self, x: &[f32], out: &mut [f32]) {
        assert_eq!(x.len(), out.len(), "vmath: input and output lengths differ");
        let max = self.row_max(x);
        let sum = self.exp_sum(x, max, Some(out));
        self.map(Scale(1.0 / sum), None, out);
    }

    /// Log-softmax of the row `x` into `out`.
    fn log_softmax(self, x: &[f32], out: &mut [f32]) {
        let max = self.row_max(x);
        let sum = self.exp_sum(x, max, None);
        self.map(SubtractTwice(max, libm::logf(sum)), Some(x), out);
    }
}

/// Declares the public slice function and its in-place twin for each function.
macro_rules! slice_functions {
    ($($(#[$doc:meta])* $name:ident, $in_place:ident => $f:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// Panics if `x` and `out` differ in length.
        #[inline]
        pub fn $name(x: &[f32], out: &mut [f32]) {
            Isa::detected().map($f, Some(x), out)
        }

        #[doc = concat!("[`", stringify!($name), "`] of `x`, in place.")]
        #[inline]
        pub fn $in_place(x: &mut [f32]) {
            Isa::detected().map($f, None, x)
        }
    )*};
}

slice_functions! {
    /// `out[i] = e^x[i]`: 0 below about -103.97, infinity above about 88.72.
    exp, exp_in_place => Exp;
    /// The logistic sigmoid `out[i] = 1 / (1 + e^-x[i])`.
    sigmoid, sigmoid_in_place => Sigmoid;
    /// SiLU (swish): `out[i] = x[i] * sigmoid(x[i])`.
    silu, silu_in_place => Silu;
    /// The hyperbolic tangent.
    tanh, tanh_in_place => Tanh;
    /// GELU, erf form (PyTorch's `approximate="none"`):
    /// `out[i] = x[i]/2 * (1 + erf(x[i] / sqrt 2))`.
    gelu, gelu_in_place => Gelu;
    /// GELU, tanh form (PyTorch's `approximate="tanh"`):
    /// `out[i] = x[i]/2 * (1 + tanh(sqrt(2/pi) (x[i] + 0.044715 x[i]^3)))`, computed as the
    /// equal `x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))`, which keeps the small values of
    /// negative `x` that `1 + tanh(..)` cancels to 0.
    gelu_tanh, gelu_tanh_in_place => GeluTanh;
    /// Hardswish: `out[i] = x[i] * min(max(x[i] + 3, 0), 6) / 6`.
    hardswish, hardswish_in_place => Hardswish;
}

/// ELU: `out[i] = x[i]` for `x[i] > 0`, else `alpha * (e^x[i] - 1)` (accurate near 0).
///
/// Panics if `x` and `out` differ in length.
#[inline]
pub fn elu(x: &[f32], alpha: f32, out: &mut [f32]) {
    Isa::detected().map(Elu(alpha), Some(x), out)
}

/// [`elu`] of `x`, in place.
#[inline]
pub fn elu_in_place(x: &mut [f32], alpha: f32) {
    Isa::detected().map(Elu(alpha), None, x)
}

/// Softmax of one row: `out[i] = e^(x[i] - max) / sum_j e^(x[j] - max)`, the maximum
/// subtracted first so that no exponential overflows. The sum is kept in a vector of
/// partial sums, and the exponentials are multiplied by its reciprocal. A NaN anywhere
/// makes the row NaN; a row of `-inf` gives NaN (0/0), as in PyTorch.
///
/// Panics if `x` and `out` differ in length.
pub fn softmax(x: &[f32], out: &mut [f32]) {
    Isa::detected().softmax(x, out)
}

/// Log-softmax of one row: `out[i] = (x[i] - max) - ln(sum_j e^(x[j] - max))`, computed
/// directly rather than as the log of a softmax (which underflows to `-inf`).
///
/// Panics if `x` and `out` differ in length.
pub fn log_softmax(x: &[f32], out: &mut [f32]) {
    Isa::detected().log_softmax(x, out)
}
