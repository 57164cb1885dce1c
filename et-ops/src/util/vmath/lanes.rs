//! The vector operations every instruction set provides ([`Lanes`]), and the slice loops
//! written once over them: the elementwise map and the pieces of a softmax row.
//!
//! A slice's tail (fewer elements than a vector holds) is copied into a padded vector,
//! computed by the same code as the full vectors, and copied back: lanes never interact,
//! so an element's result does not depend on where a slice starts or ends.

use super::functions::Function;

/// The widest vector, in floats (AVX-512's 16): the size of the tails' buffers.
const MAX_LANES: usize = 16;

/// A vector of `N` f32 lanes and the operations the functions are written with. Each
/// instruction set implements it with its own registers and intrinsics; the portable
/// implementation is one plain `f32`.
pub(super) trait Lanes: Copy {
    /// A per-lane condition, as [`Lanes::gt`] makes it and [`Lanes::select`] reads it.
    type Mask: Copy;
    /// Lanes per vector, at most [`MAX_LANES`].
    const N: usize;

    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// The first `N` elements of `src`. Panics if it is shorter.
    fn load(src: &[f32]) -> Self;
    /// Into the first `N` elements of `dst`. Panics if it is shorter.
    fn store(self, dst: &mut [f32]);

    /// `self + b`, rounded.
    fn add(self, b: Self) -> Self;
    /// `self - b`, rounded.
    fn sub(self, b: Self) -> Self;
    /// `self * b`, rounded.
    fn mul(self, b: Self) -> Self;
    /// `self / b`, rounded.
    fn div(self, b: Self) -> Self;
    /// `self * b + c`: rounded once where the instruction set fuses it, twice elsewhere.
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// The smaller of the two; NaN when `b` is NaN (with the argument in `b`, a clamp lets
    /// NaN through). A NaN `self` gives `b` or NaN, depending on the instruction set.
    fn min(self, b: Self) -> Self;
    /// The larger of the two; NaN when `b` is NaN, like [`Lanes::min`].
    fn max(self, b: Self) -> Self;

    /// The bitwise and of the two vectors' bits.
    fn and_bits(self, b: Self) -> Self;
    /// The bitwise or of the two vectors' bits.
    fn or_bits(self, b: Self) -> Self;
    /// Lanes read as `i32`: `self + b`, wrapping.
    fn int_add(self, b: Self) -> Self;
    /// Lanes read as `i32`: `self - b`, wrapping.
    fn int_sub(self, b: Self) -> Self;
    /// Lanes read as `i32`: shifted left by 23, into a float's exponent field.
    fn shl_23(self) -> Self;
    /// Lanes read as `i32`: halved, rounding toward minus infinity (arithmetic shift).
    fn halve_int(self) -> Self;

    /// Lanes where `self > b` (false where either is NaN).
    fn gt(self, b: Self) -> Self::Mask;
    /// `a` in the lanes where `m` holds, `b` elsewhere.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;

    /// The sum of the lanes, in an order fixed for each instruction set.
    fn sum_lanes(self) -> f32;
    /// The largest lane (NaN lanes may or may not win).
    fn max_lanes(self) -> f32;

    /// `|self|`.
    #[inline(always)]
    fn abs(self) -> Self {
        self.and_bits(Self::splat(f32::from_bits(0x7fff_ffff)))
    }

    /// Just the sign bits of `self`.
    #[inline(always)]
    fn sign_bits(self) -> Self {
        self.and_bits(Self::splat(-0.0))
    }

    /// A float constant's bits as an `i32` lane.
    #[inline(always)]
    fn int(v: i32) -> Self {
        Self::splat(f32::from_bits(v as u32))
    }
}

/// `dst[i] = f(src[i])`, or `dst[i] = f(dst[i])` without `src`. Panics if `src` and
/// `dst` differ in length.
#[inline(always)]
pub(super) fn map<V: Lanes, F: Function>(f: F, src: Option<&[f32]>, dst: &mut [f32]) {
    if let Some(src) = src {
        assert_eq!(
            src.len(),
            dst.len(),
            "vmath: input and output lengths differ"
        );
    }
    let full = dst.len() - dst.len() % V::N;
    let mut i = 0;
    while i < full {
        let x = V::load(src.map_or(&dst[i..], |s| &s[i..]));
        f.apply(x).store(&mut dst[i..]);
        i += V::N;
    }
    if full < dst.len() {
        let tail = &mut dst[full..];
        let mut buf = [0.0f32; MAX_LANES];
        buf[..tail.len()].copy_from_slice(src.map_or(&*tail, |s| &s[full..]));
        f.apply(V::load(&buf)).store(&mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
    }
}

/// The largest element of `x` (`-inf` for an empty slice).
#[inline(always)]
pub(super) fn row_max<V: Lanes>(x: &[f32]) -> f32 {
    let mut acc = V::splat(f32::NEG_INFINITY);
    let mut chunks = x.chunks_exact(V::N);
    for c in &mut chunks {
        acc = acc.max(V::load(c));
    }
    let mut max = acc.max_lanes();
    for &v in chunks.remainder() {
        max = max.max(v);
    }
    max
}

/// The sum of `e^(x[i] - shift)` over `x`, each exponential also written to `out[i]`
/// when `out` is given (it then has `x`'s length). The exponentials are added in `N`
/// partial sums, then [`Lanes::sum_lanes`].
#[inline(always)]
pub(super) fn exp_sum<V: Lanes>(x: &[f32], shift: f32, mut out: Option<&mut [f32]>) -> f32 {
    let shift_v = V::splat(shift);
    let mut acc = V::splat(0.0);
    let full = x.len() - x.len() % V::N;
    let mut i = 0;
    while i < full {
        let e = super::functions::exp(V::load(&x[i..]).sub(shift_v));
        if let Some(out) = out.as_deref_mut() {
            e.store(&mut out[i..]);
        }
        acc = acc.add(e);
        i += V::N;
    }
    if full < x.len() {
        // Padding of -inf gives exponentials of 0, which leave the sum as it is.
        let tail = &x[full..];
        let mut buf = [f32::NEG_INFINITY; MAX_LANES];
        buf[..tail.len()].copy_from_slice(tail);
        let e = super::functions::exp(V::load(&buf).sub(shift_v));
        e.store(&mut buf);
        if let Some(out) = out {
            out[full..].copy_from_slice(&buf[..tail.len()]);
        }
        acc = acc.add(e);
    }
    acc.sum_lanes()
}
