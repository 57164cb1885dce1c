//! How a sum of products accumulates for each storage type.

use et_runtime::{bf16, f16};

use super::Num;

/// The accumulator of a sum of products (a matrix product, a convolution window, a pool
/// window). Floats accumulate in f64 and round once at the store. Integers follow PyTorch,
/// whose integer matmul and convolution accumulate in the element type itself and wrap
/// around: wrapping arithmetic is arithmetic modulo `2^bits`, so wrapping in i64 and
/// truncating once at the store gives exactly the bits of wrapping in the narrow type.
pub trait Dot: Num {
    /// The accumulator type (`f64` or `i64`).
    type Acc: Copy;
    /// The accumulator's zero.
    const ACC_ZERO: Self::Acc;
    /// Widens a value to the accumulator (exact).
    fn widen(self) -> Self::Acc;
    /// `acc + a * b` (wrapping for integers).
    fn mul_add(acc: Self::Acc, a: Self, b: Self) -> Self::Acc;
    /// `a + b` of accumulators (wrapping for integers).
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a * b` of accumulators (wrapping for integers).
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a / n` as PyTorch divides a window sum by its count: true division for floats,
    /// division truncating toward zero for integers (`n != 0`).
    fn div(a: Self::Acc, n: i64) -> Self::Acc;
    /// Rounds (floats) or truncates modulo `2^bits` (integers) to the storage type.
    fn narrow(acc: Self::Acc) -> Self;
    /// A scalar argument (`alpha`, `beta`) as an accumulator.
    fn scalar(s: et_runtime::Scalar) -> Self::Acc;
}

macro_rules! dot_float {
    ($($t:ty),*) => {$(
        impl Dot for $t {
            type Acc = f64;
            const ACC_ZERO: f64 = 0.0;
            #[inline(always)] fn widen(self) -> f64 { self.to_f64() }
            #[inline(always)] fn mul_add(acc: f64, a: Self, b: Self) -> f64 { acc + a.to_f64() * b.to_f64() }
            #[inline(always)] fn add(a: f64, b: f64) -> f64 { a + b }
            #[inline(always)] fn mul(a: f64, b: f64) -> f64 { a * b }
            #[inline(always)] fn div(a: f64, n: i64) -> f64 { a / n as f64 }
            #[inline(always)] fn narrow(acc: f64) -> Self { <$t as Num>::from_f64(acc) }
            #[inline(always)] fn scalar(s: et_runtime::Scalar) -> f64 { s.to_f64() }
        }
    )*};
}

macro_rules! dot_int {
    ($($t:ty),*) => {$(
        impl Dot for $t {
            type Acc = i64;
            const ACC_ZERO: i64 = 0;
            #[inline(always)] fn widen(self) -> i64 { self as i64 }
            #[inline(always)] fn mul_add(acc: i64, a: Self, b: Self) -> i64 {
                acc.wrapping_add((a as i64).wrapping_mul(b as i64))
            }
            #[inline(always)] fn add(a: i64, b: i64) -> i64 { a.wrapping_add(b) }
            #[inline(always)] fn mul(a: i64, b: i64) -> i64 { a.wrapping_mul(b) }
            #[inline(always)] fn div(a: i64, n: i64) -> i64 { a.wrapping_div(n) }
            #[inline(always)] fn narrow(acc: i64) -> Self { acc as $t }
            #[inline(always)] fn scalar(s: et_runtime::Scalar) -> i64 { s.to_i64() }
        }
    )*};
}

dot_float!(f16, bf16, f32, f64);
dot_int!(u8, i8, i16, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_like_the_narrow_type() {
        // 100 * 3 + 100 = 400 wraps to 144 in u8 and to -112 in i8.
        let acc = <u8 as Dot>::mul_add(100, 100u8, 3u8);
        assert_eq!(<u8 as Dot>::narrow(acc), 144);
        let acc = <i8 as Dot>::mul_add(100, 100i8, 3i8);
        assert_eq!(<i8 as Dot>::narrow(acc), -112);
        // i64 itself wraps instead of overflowing.
        let acc = <i64 as Dot>::mul_add(i64::MAX, 1, 1);
        assert_eq!(<i64 as Dot>::narrow(acc), i64::MIN);
        // Window means truncate toward zero.
        assert_eq!(<i64 as Dot>::div(-22, 9), -2);
        assert_eq!(<f64 as Dot>::div(-22.0, 8), -2.75);
    }
}
