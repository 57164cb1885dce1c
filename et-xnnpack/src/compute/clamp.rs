//! The output range a node clamps its results to.

use et_xnnpack_schema::NodeView;

/// The output range a node clamps to, `(-inf, inf)` when it has none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clamp {
    pub(crate) min: f32,
    pub(crate) max: f32,
}

impl Clamp {
    pub(crate) fn of(node: &NodeView<'_>) -> Clamp {
        Clamp {
            min: node.output_min_max.0,
            max: node.output_min_max.1,
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        self.min == f32::NEG_INFINITY && self.max == f32::INFINITY
    }

    /// Clamps in place.
    #[inline]
    pub(crate) fn apply(&self, out: &mut [f32]) {
        if self.is_none() {
            return;
        }
        let (lo, hi) = (self.min, self.max);
        for x in out {
            *x = x.max(lo).min(hi);
        }
    }

    /// `x` clamped to the range: the same value as `x.max(min).min(max)` for a range of
    /// numbers (a NaN `x` gives `min`), written as plain compares so that it compiles to
    /// one vector max and min instead of `f32::max`'s NaN fix-ups.
    #[inline(always)]
    pub(crate) fn clamp(&self, x: f32) -> f32 {
        let y = if x > self.min { x } else { self.min };
        if y < self.max {
            y
        } else {
            self.max
        }
    }

    /// Adds `bias` to each row of `out` (rows of `bias.len()`) and clamps, in one pass:
    /// what follows a GEMM that computed `out` without its bias.
    #[inline]
    pub(crate) fn bias_rows(&self, out: &mut [f32], bias: Option<&[f32]>) {
        let Some(bias) = bias else {
            return self.apply(out);
        };
        #[cfg(target_arch = "x86_64")]
        if et_ops::gemm::avx2_fma_available() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only adds that instruction set to safe code.
            unsafe { self.bias_rows_avx2(out, bias) };
            return;
        }
        self.bias_rows_with(out, bias);
    }

    /// [`Clamp::bias_rows_with`] compiled for AVX2 (8 floats per vector instead of 4).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn bias_rows_avx2(&self, out: &mut [f32], bias: &[f32]) {
        self.bias_rows_with(out, bias);
    }

    #[inline(always)]
    fn bias_rows_with(&self, out: &mut [f32], bias: &[f32]) {
        for row in out.chunks_exact_mut(bias.len().max(1)) {
            for (x, &b) in row.iter_mut().zip(bias) {
                *x = self.clamp(*x + b);
            }
        }
    }
}
