//! What this CPU offers the integer kernels beyond AVX2 (x86-64, checked once with
//! `cpuid`) or beyond NEON (aarch64: `dotprod` and `i8mm`), and the step the x86
//! `vpdpbusd`-shaped loops are generic over.

#[cfg(target_arch = "x86_64")]
pub(crate) use steps::{Avx2Nibbles, Avx512Vnni, AvxVnni, Dot4};

/// An encoding of `vpdpbusd` (4 unsigned bytes times 4 signed bytes, added to an int32
/// lane) this CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86-64 only"))]
pub(crate) enum Vnni {
    /// AVX-VNNI: the VEX encoding (`_mm256_dpbusd_avx_epi32`).
    Avx,
    /// AVX-512 VNNI with VL: the EVEX encoding on 256-bit vectors
    /// (`_mm256_dpbusd_epi32`).
    Avx512,
}

/// The `vpdpbusd` this CPU (and OS) can run, if any; AVX-512 VNNI preferred, as it
/// comes with twice the vector registers.
pub(crate) fn vnni() -> Option<Vnni> {
    #[cfg(target_arch = "x86_64")]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        // 0: not checked yet; 1: none; 2: AVX-VNNI; 3: AVX-512 VNNI.
        static DETECTED: AtomicU8 = AtomicU8::new(0);
        let found = match DETECTED.load(Ordering::Relaxed) {
            0 => {
                let found = detect();
                DETECTED.store(found, Ordering::Relaxed);
                found
            }
            found => found,
        };
        match found {
            3 => Some(Vnni::Avx512),
            2 => Some(Vnni::Avx),
            _ => None,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// The int8 dot-product instructions an aarch64 CPU offers beyond NEON, in the order the
/// kernels prefer them.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ArmDot {
    /// NEON only (ARMv8.0, e.g. Cortex-A53/A57/A72): widening multiplies (`smull`,
    /// `smlal`) and pairwise accumulation (`sadalp`).
    Neon,
    /// `sdot` (FEAT_DotProd, standard from ARMv8.4): 4 signed bytes times 4 signed bytes
    /// added to an int32 lane.
    DotProd,
    /// `dotprod` and FEAT_I8MM (ARMv8.6), whose `usdot` multiplies unsigned by signed
    /// bytes: the exact counterpart of x86's `vpdpbusd`.
    I8mm,
}

#[cfg(target_arch = "aarch64")]
impl ArmDot {
    /// The levels this CPU runs, lowest first (the tests run each of them).
    #[cfg(test)]
    pub(crate) fn available() -> impl Iterator<Item = ArmDot> {
        let best = arm_dot();
        [ArmDot::Neon, ArmDot::DotProd, ArmDot::I8mm]
            .into_iter()
            .filter(move |&level| level <= best)
    }
}

/// The dot-product level of this aarch64 CPU, checked once: at run time through `std`'s
/// detection (the `std` feature, and the unit tests), else what the build's target
/// features promise (a `no_std` build for a core with dotprod enables it with
/// `-C target-feature=+dotprod`).
#[cfg(target_arch = "aarch64")]
pub(crate) fn arm_dot() -> ArmDot {
    use core::sync::atomic::{AtomicU8, Ordering};
    // 0: not checked yet; else 1 + the level.
    static DETECTED: AtomicU8 = AtomicU8::new(0);
    let found = match DETECTED.load(Ordering::Relaxed) {
        0 => {
            let found = 1 + detect_arm() as u8;
            DETECTED.store(found, Ordering::Relaxed);
            found
        }
        found => found,
    };
    match found {
        3 => ArmDot::I8mm,
        2 => ArmDot::DotProd,
        _ => ArmDot::Neon,
    }
}

#[cfg(target_arch = "aarch64")]
#[cold]
fn detect_arm() -> ArmDot {
    #[cfg(any(test, feature = "std"))]
    let (dotprod, i8mm) = {
        extern crate std;
        (
            std::arch::is_aarch64_feature_detected!("dotprod"),
            std::arch::is_aarch64_feature_detected!("i8mm"),
        )
    };
    #[cfg(not(any(test, feature = "std")))]
    let (dotprod, i8mm) = (
        cfg!(target_feature = "dotprod"),
        cfg!(target_feature = "i8mm"),
    );
    match (dotprod, i8mm) {
        (true, true) => ArmDot::I8mm,
        (true, false) => ArmDot::DotProd,
        _ => ArmDot::Neon,
    }
}

/// Whether this CPU has an aarch64 int8 dot product (`sdot`), the condition for the
/// 4-byte-quad packing of the int8 GEMM there.
pub(crate) fn arm_dotprod() -> bool {
    #[cfg(target_arch = "aarch64")]
    {
        arm_dot() >= ArmDot::DotProd
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        false
    }
}

/// The int8 GEMM kernels this CPU runs (see [`int8_kernels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Int8Kernels {
    /// The GEMM of qint8 convolutions and fully-connected nodes.
    pub gemm: &'static str,
    /// The qdint8 x qc8w/qb4w GEMM of dynamically quantized fully-connected nodes.
    pub qd8_gemm: &'static str,
}

/// The int8 GEMM kernels chosen on this CPU, for reports such as `etch run --profile`
/// (so that a run under emulation or on a device shows which paths it took).
pub fn int8_kernels() -> Int8Kernels {
    let (gemm, qd8_gemm) = int8_levels();
    Int8Kernels { gemm, qd8_gemm }
}

fn int8_levels() -> (&'static str, &'static str) {
    #[cfg(target_arch = "aarch64")]
    {
        match arm_dot() {
            ArmDot::I8mm => ("usdot (i8mm)", "sdot (dotprod)"),
            ArmDot::DotProd => ("sdot (dotprod)", "sdot (dotprod)"),
            ArmDot::Neon => ("neon smlal", "neon smull+sadalp"),
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        match vnni() {
            Some(Vnni::Avx512) => ("avx512-vnni", "avx512-vnni"),
            Some(Vnni::Avx) => ("avx-vnni", "avx-vnni"),
            None if et_ops::gemm::avx2_fma_available() => {
                ("avx2 pmaddwd", "avx2 (4-bit weights), portable (int8)")
            }
            None => ("portable", "portable"),
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        ("portable", "portable")
    }
}

#[cfg(target_arch = "x86_64")]
#[cold]
fn detect() -> u8 {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // AVX2 and FMA with the OS saving ymm state: both encodings need it.
    if !et_ops::gemm::avx2_fma_available() || __cpuid(0).eax < 7 {
        return 1;
    }
    let leaf7 = __cpuid_count(7, 0);
    let avx512_vnni = leaf7.ecx & (1 << 11) != 0;
    let avx512_vl = leaf7.ebx & (1 << 31) != 0;
    let avx512_bw = leaf7.ebx & (1 << 30) != 0;
    // `avx512f_available` also checks that the OS saves the opmask and zmm state, which
    // EVEX instructions need even on 256-bit vectors.
    if avx512_vnni && avx512_vl && avx512_bw && et_ops::gemm::avx512f_available() {
        return 3;
    }
    if (__cpuid_count(7, 1).eax >> 4) & 1 == 1 {
        return 2;
    }
    1
}

#[cfg(target_arch = "x86_64")]
mod steps {
    use core::arch::x86_64::*;

    /// One step of a kernel: the 4 unsigned bytes of each lane of `x` times the 4 signed
    /// bytes of the same lane of `w`, added to `acc`'s int32 lanes.
    pub(crate) trait Dot4 {
        /// # Safety
        /// The CPU has the instructions the implementation uses.
        unsafe fn dot4(acc: __m256i, x: __m256i, w: __m256i) -> __m256i;
    }

    /// AVX2's `vpmaddubsw` + `vpmaddwd`: exact for 4-bit weights only.
    pub(crate) struct Avx2Nibbles;
    impl Dot4 for Avx2Nibbles {
        #[inline(always)]
        unsafe fn dot4(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            // SAFETY: AVX2 (the caller's contract). Exact for weights in -8..=7: a pair
            // of products is at most 2 * 255 * 8 in magnitude, inside int16.
            unsafe {
                let pairs = _mm256_maddubs_epi16(x, w);
                _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
            }
        }
    }

    /// AVX-VNNI's `vpdpbusd`.
    pub(crate) struct AvxVnni;
    impl Dot4 for AvxVnni {
        #[inline(always)]
        unsafe fn dot4(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            // SAFETY: AVX-VNNI (the caller's contract).
            unsafe { _mm256_dpbusd_avx_epi32(acc, x, w) }
        }
    }

    /// AVX-512 VNNI's `vpdpbusd` on 256-bit vectors.
    pub(crate) struct Avx512Vnni;
    impl Dot4 for Avx512Vnni {
        #[inline(always)]
        unsafe fn dot4(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            // SAFETY: AVX-512 VNNI and VL (the caller's contract).
            unsafe { _mm256_dpbusd_epi32(acc, x, w) }
        }
    }
}

/// Whether the AVX2 and FMA kernels may run.
pub(crate) fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        et_ops::gemm::avx2_fma_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
