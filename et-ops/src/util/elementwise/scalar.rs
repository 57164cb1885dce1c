//! Scalar arguments as operands.

use et_runtime::{DtypeSelection, KernelResult, Scalar, ScalarType};

use crate::util::element::Compute;

use super::narrow_fn;

/// The value of a `Scalar` argument as an operand of dtype `dt` (PyTorch casts a scalar
/// operand to the result dtype before computing), in compute type `C`.
pub fn scalar_as<C: Compute, Sel: DtypeSelection>(s: Scalar, dt: ScalarType) -> KernelResult<C> {
    let mut v = [C::from_scalar(s)];
    if let Some(nf) = narrow_fn::<C, Sel>(dt)? {
        nf(&mut v);
    }
    Ok(v[0])
}

/// The value of a `Scalar` argument as PyTorch's arithmetic kernels use it: converted
/// straight to the compute type for floating results (a float16 tensor times 0.1 multiplies
/// by the float32 0.1, not by 0.1 rounded to float16), and wrapped to the result dtype for
/// integer results (which equals wrapping after computing in int64).
pub fn scalar_opmath<C: Compute, Sel: DtypeSelection>(
    s: Scalar,
    dt: ScalarType,
) -> KernelResult<C> {
    if dt.is_floating() {
        Ok(C::from_scalar(s))
    } else {
        scalar_as::<C, Sel>(s, dt)
    }
}
