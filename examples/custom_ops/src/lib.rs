#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use et_runtime::kernel;
use et_runtime::{Element, KernelContext, KernelError, KernelResult, Tensor};

/// Arithmetic the two kernels need, for the dtypes they are registered for.
pub trait Real: Element + core::ops::Mul<Output = Self> + core::ops::Add<Output = Self> {
    /// Converts a double (the `alpha` argument, the constant 3).
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// Elementwise `f(x, y)` over two same-shaped contiguous tensors into `out`.
fn zip_into<T: Real>(
    x: &Tensor,
    y: &Tensor,
    out: &mut Tensor,
    f: impl Fn(T, T) -> T,
) -> KernelResult {
    if x.sizes() != y.sizes() {
        return Err(KernelError::invalid(
            "my_ops: inputs must have the same shape",
        ));
    }
    if !(x.is_contiguous() && y.is_contiguous() && out.is_contiguous()) {
        return Err(KernelError::unsupported("my_ops: only contiguous tensors"));
    }
    out.resize(x.sizes())?;
    let (a, b) = (x.data::<T>()?, y.data::<T>()?);
    for ((o, &a), &b) in out.data_mut::<T>()?.iter_mut().zip(a).zip(b) {
        *o = f(a, b);
    }
    Ok(())
}

/// `my_ops::mul3.out(Tensor input, *, Tensor(a!) output)`: `output = input * 3`.
#[kernel("my_ops::mul3.out", dtype = [f32, f64])]
pub fn mul3<T: Real>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    output: &mut Tensor,
) -> KernelResult {
    let three = T::from_f64(3.0);
    zip_into::<T>(input, input, output, |a, _| a * three)
}

/// `my_ops::scale_add.out(Tensor x, Tensor y, float alpha, *, Tensor(a!) out)`:
/// `out = x + alpha * y`.
#[kernel("my_ops::scale_add.out", dtype = [f32, f64])]
pub fn scale_add<T: Real>(
    _ctx: &KernelContext<'_>,
    x: &Tensor,
    y: &Tensor,
    alpha: f64,
    out: &mut Tensor,
) -> KernelResult {
    let alpha = T::from_f64(alpha);
    zip_into::<T>(x, y, out, |a, b| a + alpha * b)
}
