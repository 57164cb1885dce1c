//! Pseudo-random numbers for the random operators (`rand`, `randn`, training-mode
//! `native_dropout`): a SplitMix64 stream per kernel call, seeded from a process-wide
//! counter so that successive calls draw different numbers. Not cryptographic, and not
//! PyTorch's generator: only the distribution is specified (as in ExecuTorch, whose
//! portable kernels draw from their own engine).

use core::sync::atomic::{AtomicU32, Ordering};

/// Advanced once per stream. A plain load and store rather than `fetch_add`, so targets
/// without atomic read-modify-write have it too; two threads racing may draw the same
/// stream, which costs independence, not memory safety.
static CALLS: AtomicU32 = AtomicU32::new(0);

/// A SplitMix64 stream.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    /// A new stream, different from the previous call's.
    pub fn new() -> Rng {
        let n = CALLS.load(Ordering::Relaxed).wrapping_add(1);
        CALLS.store(n, Ordering::Relaxed);
        // Spread the counter over the state so nearby seeds start far apart.
        Rng(u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `[0, 1)` with `bits` random mantissa bits (at most 53): a
    /// multiple of `2^-bits`, so it rounds to below 1 in a type with that many bits.
    pub fn uniform(&mut self, bits: u32) -> f64 {
        let bits = bits.clamp(1, 53);
        (self.next_u64() >> (64 - bits)) as f64 * libm::ldexp(1.0, -(bits as i32))
    }

    /// A standard normal value (Box-Muller on two 53-bit uniforms).
    pub fn normal(&mut self) -> f64 {
        // 1 - u is in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.uniform(53);
        let u2 = self.uniform(53);
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(core::f64::consts::TAU * u2)
    }
}

impl Default for Rng {
    fn default() -> Self {
        Rng::new()
    }
}

/// The significand bits (with the implicit one) of a floating dtype: how many random
/// bits a uniform value of that dtype can hold exactly.
pub fn mantissa_bits(dtype: et_runtime::ScalarType) -> u32 {
    match dtype {
        et_runtime::ScalarType::Half => 11,
        et_runtime::ScalarType::BFloat16 => 8,
        et_runtime::ScalarType::Float => 24,
        _ => 53,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_and_normal_ranges() {
        let mut r = Rng::new();
        let mut sum = 0.0;
        for _ in 0..10_000 {
            let u = r.uniform(11);
            assert!((0.0..1.0).contains(&u));
            assert_eq!(u * 2048.0, libm::floor(u * 2048.0));
            sum += r.normal();
        }
        assert!((sum / 10_000.0).abs() < 0.05);
        assert_ne!(Rng::new().next_u64(), Rng::new().next_u64());
    }
}
