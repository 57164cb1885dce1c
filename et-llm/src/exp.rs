//! `e^x` for the attention's softmax, written without branches or calls so that a loop
//! over a block of scores vectorizes (libm's `expf` is a call per element, and was the
//! decode loop's largest cost after the products). Within 2 ulp of the correctly
//! rounded result over the whole range (checked against libm in the tests), with
//! libm's results at the edges: 0 below the smallest subnormal, infinity above
//! `ln(f32::MAX)`, NaN for NaN.

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// ln 2 split in two: `LN2_HI` has trailing zero bits, so `n * LN2_HI` is exact for the
/// `n` the reduction produces, and `LN2_LO` carries the rest.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;
/// Adding and subtracting 1.5 * 2^23 rounds a float of magnitude below 2^22 to an
/// integer, half to even, without a call.
const ROUND: f32 = 12_582_912.0;

/// `e^x`.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    // Past these bounds the result is infinite, or rounds to 0 (below the smallest
    // subnormal); clamping keeps the reduction's integer small. NaN passes through
    // (`max`/`min` return the other operand, so they are applied to the bound).
    let xc = if x > 89.0 { 89.0 } else { x };
    let xc = if xc < -104.0 { -104.0 } else { xc };
    let n = (xc * LOG2_E + ROUND) - ROUND;
    // r = x - n ln 2, |r| <= ln 2 / 2 (a little more from rounding).
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    // e^r by its Taylor series to r^7 / 7!: the first dropped term is below 2^-27 of the
    // result on this interval.
    let p = 1.0
        + r * (1.0
            + r * (1.0 / 2.0
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^n in two halves, so that neither factor overflows nor goes subnormal for n in
    // -150..=129 (a single factor cannot reach below 2^-126 or above 2^127).
    let n = n as i32;
    let half = n >> 1;
    let result = p * pow2(half) * pow2(n - half);
    if x.is_nan() {
        x
    } else {
        result
    }
}

/// `2^e` for `e` in -126..=127, from its exponent bits.
#[inline(always)]
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::exp;

    /// How many representable floats lie between `a` and `b` (both finite, same sign or
    /// zero).
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn within_two_ulp_of_libm_everywhere() {
        let mut worst = (0u32, 0.0f32);
        // Every 97th float from -104 to 89 (about 2.5 million points, both signs, all
        // binades), plus the integers' neighbourhoods.
        let mut bits = (-104.0f32).to_bits();
        let stop = 0x8000_0000u32;
        while bits > stop {
            let x = f32::from_bits(bits);
            let e = ulps(exp(x), libm::expf(x));
            if e > worst.0 {
                worst = (e, x);
            }
            bits -= 97;
        }
        let mut bits = 0u32;
        while f32::from_bits(bits) < 89.0 {
            let x = f32::from_bits(bits);
            let want = libm::expf(x);
            if want.is_finite() {
                let e = ulps(exp(x), want);
                if e > worst.0 {
                    worst = (e, x);
                }
            }
            bits += 97;
        }
        assert!(worst.0 <= 2, "{} ulp at x = {}", worst.0, worst.1);
    }

    #[test]
    fn edges_match_libm() {
        for x in [
            0.0, -0.0, 1.0, -1.0, 88.72, 88.8, 89.0, 100.0, -87.0, -103.0, -104.0, -200.0,
        ] {
            let (got, want) = (exp(x), libm::expf(x));
            assert!(
                got == want || ulps(got, want) <= 2,
                "exp({x}) = {got}, libm {want}"
            );
        }
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(0.0), 1.0);
    }
}
