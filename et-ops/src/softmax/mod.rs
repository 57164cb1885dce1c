//! softmax operators: `_softmax` and `_log_softmax` along one dim, computed per lane in
//! the element type's compute type (f32 for f16/f32, f64 for f64) with the maximum
//! subtracted first so `exp` never overflows.

pub mod log_softmax;
#[allow(
    clippy::module_inception,
    reason = "one file per operator, named after it"
)]
pub mod softmax;

use et_runtime::{KernelError, KernelResult, ScalarType, Tensor};

use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::element::OpMath;
use crate::util::layout::normalize_dim;
use crate::util::reduction::split;

/// Validates the dtypes and resizes `out`; returns the normalized dim.
fn prepare(input: &Tensor, dim: i64, half_to_float: bool, out: &mut Tensor) -> KernelResult<usize> {
    let d = normalize_dim(dim, input.dim())?;
    let ok = if half_to_float {
        input.dtype() == ScalarType::Half && out.dtype() == ScalarType::Float
    } else {
        out.dtype() == input.dtype()
    };
    if !ok {
        return Err(KernelError::invalid(
            "softmax out dtype must match the input (or be float32 for a float16 input with half_to_float)",
        ));
    }
    out.resize(input.sizes())?;
    Ok(d)
}

/// Softmax (or log-softmax) of `input` along `dim` into `out` (element type `O`, which
/// is `I` or, for `half_to_float`, f32 from f16). NaN in a lane makes the whole lane NaN;
/// a lane of all `-inf` gives NaN (0/0), as in PyTorch.
fn softmax_lanes<I: OpMath, O: OpMath<C = I::C>>(
    input: &Tensor,
    dim: usize,
    out: &mut Tensor,
    log: bool,
) -> KernelResult {
    let nd = input.dim();
    let mask = if nd == 0 { 0 } else { 1 << dim };
    let os = {
        let mut s = [0usize; et_runtime::MAX_DIM];
        s[..nd].copy_from_slice(out.strides());
        s
    };
    let (outer, inner) = split(input.sizes(), [input.strides(), &os[..nd]], mask);
    let x = input.data::<I>()?;
    let y = out.data_mut::<O>()?;
    outer.for_each([0, 0], |[xb, yb]| {
        // The maximum, NaN-propagating: a NaN anywhere poisons the lane.
        let mut max: Option<I::C> = None;
        inner.for_each([xb, yb], |[xi, _]| {
            let v = x[xi].up();
            max = Some(match max {
                None => v,
                Some(m) if m.is_nan() || v.is_nan() => I::C::NAN,
                Some(m) if v > m => v,
                Some(m) => m,
            });
        });
        let Some(max) = max else { return };
        let mut sum = I::C::c(0.0);
        if log {
            inner.for_each([xb, yb], |[xi, _]| sum += (x[xi].up() - max).exp());
            let lse = sum.ln();
            inner.for_each([xb, yb], |[xi, yi]| y[yi] = O::down(x[xi].up() - max - lse));
        } else {
            // Two passes recomputing `exp`, so a narrow out type never holds an
            // intermediate exponential.
            inner.for_each([xb, yb], |[xi, _]| sum += (x[xi].up() - max).exp());
            inner.for_each([xb, yb], |[xi, yi]| {
                let e = (x[xi].up() - max).exp();
                y[yi] = O::down(e / sum);
            });
        }
    });
    Ok(())
}
