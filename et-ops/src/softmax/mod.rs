//! softmax operators: `_softmax` and `_log_softmax` along one dim, computed per lane in
//! the element type's compute type (f32 for f16/f32, f64 for f64) with the maximum
//! subtracted first so `exp` never overflows.

pub mod log_softmax;
#[allow(
    clippy::module_inception,
    reason = "one file per operator, named after it"
)]
pub mod softmax;

use et_runtime::{f16, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::element::Float;
use crate::util::element::OpMath;
use crate::util::element::RawElement;
use crate::util::elementwise::CHUNK;
use crate::util::layout::normalize_dim;
use crate::util::reduction::{split, Space};

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
/// is `I`), for float32 and float64. NaN in a lane makes the whole lane NaN; a lane of all
/// `-inf` gives NaN (0/0), as in PyTorch.
fn softmax_lanes<I: OpMath, O: OpMath<C = I::C>>(
    input: &Tensor,
    dim: usize,
    out: &mut Tensor,
    log: bool,
) -> KernelResult {
    let (outer, inner) = spaces(input, dim, out);
    let x = input.data::<I>()?;
    let y = out.data_mut::<O>()?;
    if let (Some(len), Some(x)) = (inner.unit_run(), I::as_f32s(x)) {
        if let Some(y) = O::as_f32s_mut(y) {
            f32_rows(&outer, len, x, y, log);
            return Ok(());
        }
    }
    let y = out.data_mut::<O>()?;
    lanes(&outer, &inner, |i| x[i].up(), |i, v| y[i] = O::down(v), log);
    Ok(())
}

/// The float32 lanes when each is contiguous in input and out (rows of `len`): the
/// exponentials by the vectorized [`vmath::exp`](crate::vmath::exp), the rest as in
/// [`lanes`], whose order they keep (the sum added element by element, as ExecuTorch's
/// portable kernel adds it), so the results are [`lanes`]' but for the exponentials.
fn f32_rows(outer: &Space<2>, len: usize, x: &[f32], y: &mut [f32], log: bool) {
    outer.for_each([0, 0], |[xb, yb]| {
        let (Some(row), Some(dst)) = (x.get(xb..xb + len), y.get_mut(yb..yb + len)) else {
            return;
        };
        // The maximum, NaN-propagating: a NaN anywhere poisons the lane.
        let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| {
            if m.is_nan() || v.is_nan() {
                f32::NAN
            } else if v > m {
                v
            } else {
                m
            }
        });
        if log {
            let mut sum = 0.0f32;
            let mut buf = [0.0f32; CHUNK];
            for part in row.chunks(CHUNK) {
                let e = &mut buf[..part.len()];
                e.iter_mut().zip(part).for_each(|(e, &v)| *e = v - max);
                crate::vmath::exp_in_place(e);
                e.iter().for_each(|&e| sum += e);
            }
            let lse = Float::ln(sum);
            dst.iter_mut()
                .zip(row)
                .for_each(|(d, &v)| *d = v - max - lse);
        } else {
            dst.iter_mut().zip(row).for_each(|(d, &v)| *d = v - max);
            crate::vmath::exp_in_place(dst);
            let mut sum = 0.0f32;
            dst.iter().for_each(|&e| sum += e);
            dst.iter_mut().for_each(|e| *e /= sum);
        }
    });
}

/// Softmax of a float16 `input` into a float16 or (`half_to_float`) float32 `out`,
/// computed in f32 and rounded once at the store: one loop for both outs, which write
/// through a function picked once (this cut one of the four copies of the lane loops).
fn softmax_half(input: &Tensor, dim: usize, out: &mut Tensor, log: bool) -> KernelResult {
    let (outer, inner) = spaces(input, dim, out);
    let put: fn(&mut [u8], usize, f32) = if out.dtype() == ScalarType::Float {
        |b, i, v| v.write(b.get_mut(i * 4..).unwrap_or_default())
    } else {
        |b, i, v| f16::down(v).write(b.get_mut(i * 2..).unwrap_or_default())
    };
    let x = input.data::<f16>()?;
    let y = out.bytes_mut()?;
    lanes(&outer, &inner, |i| x[i].up(), |i, v| put(y, i, v), log);
    Ok(())
}

/// The lanes (outer) and the positions along one lane (inner) of input and out.
fn spaces(input: &Tensor, dim: usize, out: &Tensor) -> (Space<2>, Space<2>) {
    let nd = input.dim();
    let mask = if nd == 0 { 0 } else { 1 << dim };
    let os = {
        let mut s = [0usize; et_runtime::MAX_DIM];
        s[..nd].copy_from_slice(out.strides());
        s
    };
    split(input.sizes(), [input.strides(), &os[..nd]], mask)
}

/// The lane loops, reading element `i` of the input with `x(i)` and writing element `i`
/// of the out with `y(i, v)`.
fn lanes<
    C: Float + core::ops::AddAssign + core::ops::Sub<Output = C> + core::ops::Div<Output = C>,
>(
    outer: &Space<2>,
    inner: &Space<2>,
    x: impl Fn(usize) -> C,
    mut y: impl FnMut(usize, C),
    log: bool,
) {
    outer.for_each([0, 0], |[xb, yb]| {
        // The maximum, NaN-propagating: a NaN anywhere poisons the lane.
        let mut max: Option<C> = None;
        inner.for_each([xb, yb], |[xi, _]| {
            let v = x(xi);
            max = Some(match max {
                None => v,
                Some(m) if m.is_nan() || v.is_nan() => C::NAN,
                Some(m) if v > m => v,
                Some(m) => m,
            });
        });
        let Some(max) = max else { return };
        let mut sum = C::c(0.0);
        if log {
            inner.for_each([xb, yb], |[xi, _]| sum += (x(xi) - max).exp());
            let lse = sum.ln();
            inner.for_each([xb, yb], |[xi, yi]| y(yi, x(xi) - max - lse));
        } else {
            // Two passes recomputing `exp`, so a narrow out type never holds an
            // intermediate exponential.
            inner.for_each([xb, yb], |[xi, _]| sum += (x(xi) - max).exp());
            inner.for_each([xb, yb], |[xi, yi]| {
                let e = (x(xi) - max).exp();
                y(yi, e / sum);
            });
        }
    });
}
