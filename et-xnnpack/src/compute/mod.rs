//! NHWC compute shared by the node kinds: broadcasting, permutes, the window geometry,
//! the depthwise convolution kernel and 8-bit integer arithmetic (`requant`). The matrix multiplies are et-ops' `gemm`.

pub(crate) mod broadcast;
pub(crate) mod clamp;
pub(crate) mod cpu;
pub(crate) mod depthwise;
pub(crate) mod direct;
pub(crate) mod fgemm;
pub(crate) mod lut;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_dot;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_qd8;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon_qgemm;
pub(crate) mod permute;
pub(crate) mod qb4_gemm;
pub(crate) mod qconv;
pub(crate) mod qd8_gemm;
pub(crate) mod qdepthwise;
pub(crate) mod qelementwise;
pub(crate) mod qgemm;
pub(crate) mod qmul;
pub(crate) mod qpool;
pub(crate) mod quant;
pub(crate) mod requant;
pub(crate) mod shape;
pub(crate) mod sweep;
pub(crate) mod window;

/// `len` pseudo-random bytes over all of `i8` for the int8 kernels' tests: a fixed
/// generator, so every run and target sees the same data for a `seed`.
#[cfg(test)]
pub(crate) fn test_bytes(len: usize, seed: u32) -> std::vec::Vec<i8> {
    test_bytes_in(len, seed, i8::MIN.into(), i8::MAX.into())
}

/// [`test_bytes`] in `lo..=hi`.
#[cfg(test)]
pub(crate) fn test_bytes_in(len: usize, seed: u32, lo: i32, hi: i32) -> std::vec::Vec<i8> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(7);
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (lo + (s >> 8) as i32 % (hi - lo + 1)) as i8
        })
        .collect()
}

#[cfg(test)]
extern crate std;
