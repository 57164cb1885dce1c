//! Unary math: `out = f(self)` elementwise, through
//! the crate-private `util::elementwise::unary`.
//!
//! Floating functions (`exp`, `sin`, ...) promote bool and integer inputs to float32, as
//! PyTorch does, and compute float16 in float32. Rounding functions (`floor`, `round`,
//! ...) leave integer tensors unchanged.

use et_runtime::{et_switch, DtypeSelection, KernelResult, Tensor};

use crate::util::element::Float;
use crate::util::elementwise::{unary, unary_vectorized};
use crate::util::promote::{compute_dtype, compute_set, float_compute_set, to_float};

pub mod abs;
pub mod acos;
pub mod acosh;
pub mod asin;
pub mod asinh;
pub mod atan;
pub mod atanh;
pub mod bitwise_not;
pub mod ceil;
pub mod clamp;
pub mod clamp_tensor;
pub mod conj_physical;
pub mod cos;
pub mod cosh;
pub mod erf;
pub mod exp;
pub mod expm1;
pub mod floor;
pub mod isinf;
pub mod isnan;
pub mod log;
pub mod log10;
pub mod log1p;
pub mod log2;
pub mod logit;
pub mod neg;
pub mod reciprocal;
pub mod round;
pub mod rsqrt;
pub mod sign;
pub mod sin;
pub mod sinh;
pub mod sqrt;
pub mod tan;
pub mod tanh;
pub mod trunc;

/// A vectorized f32 function over slices (`out[i] = f(x[i])`), as [`vmath`](crate::vmath)
/// has them.
pub(crate) type F32Slices = fn(&[f32], &mut [f32]);

/// A function of one float, generic over the float compute types.
pub(crate) trait FloatFn {
    /// The function's value at `x`.
    fn apply<F: Float>(x: F) -> F;
    /// Its vectorized f32 form over slices ([`vmath`](crate::vmath)), where there is one:
    /// float32 (and float16, computed in float32) tensors then run it instead of `apply`.
    const F32_SLICES: Option<F32Slices> = None;
}

/// `out = O(input)` in float: bool and integer inputs give float32 results.
pub(crate) fn float_unary<O: FloatFn, Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = to_float(input.dtype());
    et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        match O::F32_SLICES {
            Some(f32_slices) => {
                unary_vectorized::<C, Sel>(input, out, common, O::apply::<C>, f32_slices)
            }
            None => unary::<C, C, Sel>(input, out, common, O::apply::<C>),
        }
    })
}

/// `out = O(input)` for floats, a copy for integers and bools (rounding to an integer
/// changes nothing there, and PyTorch keeps the dtype).
pub(crate) fn rounding_unary<O: FloatFn, Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    if common.is_floating() {
        et_switch!(in compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
            unary::<C, C, Sel>(input, out, common, O::apply::<C>)
        })
    } else {
        et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], C => {
            unary::<C, C, Sel>(input, out, common, |x: C| x)
        })
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    extern crate std;
    use et_runtime::{f16, KernelContext, KernelResult, ScalarType, Tensor, TensorBuf};
    use std::vec::Vec;

    use crate::util::elementwise::with_ctx;

    type Kernel<'k> = &'k dyn Fn(&KernelContext<'_>, &Tensor, &mut Tensor) -> KernelResult;

    fn run(k: Kernel<'_>, x: &Tensor, out_dtype: ScalarType) -> TensorBuf {
        with_ctx(|ctx| {
            let mut out = TensorBuf::zeros(out_dtype, x.sizes()).unwrap();
            k(ctx, x, &mut out).unwrap();
            out
        })
    }

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got.is_nan() && want.is_nan())
            || got == want
            || (got - want).abs() <= rel * want.abs().max(1.0)
    }

    /// Checks a float function on f64, f32 and f16 inputs against `want` (f64 values),
    /// and that integers promote to float32.
    pub(crate) fn check_float_unary(
        k: impl Fn(&KernelContext<'_>, &Tensor, &mut Tensor) -> KernelResult,
        input: &[f64],
        want: &[f64],
    ) {
        let n = [input.len()];
        let x = TensorBuf::from_slice(&n, input).unwrap();
        let got = run(&k, &x, ScalarType::Double);
        for (g, w) in got.data::<f64>().unwrap().iter().zip(want) {
            assert!(close(*g, *w, 1e-14), "f64: {g} vs {w}");
        }
        let x32: Vec<f32> = input.iter().map(|&v| v as f32).collect();
        let got = run(
            &k,
            &TensorBuf::from_slice(&n, &x32).unwrap(),
            ScalarType::Float,
        );
        for (g, w) in got.data::<f32>().unwrap().iter().zip(want) {
            assert!(close(*g as f64, *w, 1e-6), "f32: {g} vs {w}");
        }
        let x16: Vec<f16> = input.iter().map(|&v| f16::from_f64(v)).collect();
        let got = run(
            &k,
            &TensorBuf::from_slice(&n, &x16).unwrap(),
            ScalarType::Half,
        );
        for (g, w) in got.data::<f16>().unwrap().iter().zip(want) {
            assert!(close(g.to_f64(), *w, 2e-3), "f16: {g} vs {w}");
        }
        let ints = TensorBuf::from_slice(&[2], &[0i32, 1]).unwrap();
        let floats = TensorBuf::from_slice(&[2], &[0.0f32, 1.0]).unwrap();
        let bits = |t: &TensorBuf| -> Vec<u32> {
            t.data::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(
            bits(&run(&k, &ints, ScalarType::Float)),
            bits(&run(&k, &floats, ScalarType::Float))
        );
    }

    /// Checks a rounding function on f64 and f32 inputs (exact results, sign of zero
    /// included), and that integers pass through unchanged in their dtype.
    pub(crate) fn check_rounding(
        k: impl Fn(&KernelContext<'_>, &Tensor, &mut Tensor) -> KernelResult,
        input: &[f64],
        want: &[f64],
    ) {
        let n = [input.len()];
        let x = TensorBuf::from_slice(&n, input).unwrap();
        let got = run(&k, &x, ScalarType::Double);
        for (g, w) in got.data::<f64>().unwrap().iter().zip(want) {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{g} vs {w}"
            );
        }
        let x32: Vec<f32> = input.iter().map(|&v| v as f32).collect();
        let got = run(
            &k,
            &TensorBuf::from_slice(&n, &x32).unwrap(),
            ScalarType::Float,
        );
        for (g, w) in got.data::<f32>().unwrap().iter().zip(want) {
            let w = *w as f32;
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{g} vs {w}"
            );
        }
        let ints = TensorBuf::from_slice(&[3], &[-3i64, 0, i64::MAX]).unwrap();
        let got = run(&k, &ints, ScalarType::Long);
        assert_eq!(got.data::<i64>().unwrap(), &[-3, 0, i64::MAX]);
    }
}
