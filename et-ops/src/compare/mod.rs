//! Comparisons: `out = a OP b` as bools, with broadcasting and type promotion, through
//! the crate-private `util::elementwise::binary`.
//!
//! Both operands are converted to their common dtype (PyTorch's `result_type`) and compared
//! there, so `int32 < 2.5` compares in float32; NaN compares false except under `ne`. The
//! out tensor is usually bool but may be any dtype (it receives 0 or 1).

use et_runtime::{et_switch, Bool, DtypeSelection, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_as;
use crate::util::elementwise::{binary, unary};
use crate::util::promote::{compute_dtype, compute_set, result_type, result_type_scalar};

pub mod eq_scalar;
pub mod eq_tensor;
pub mod ge_scalar;
pub mod ge_tensor;
pub mod gt_scalar;
pub mod gt_tensor;
pub mod le_scalar;
pub mod le_tensor;
pub mod lt_scalar;
pub mod lt_tensor;
pub mod ne_scalar;
pub mod ne_tensor;

/// One comparison, generic over the compute types.
pub(crate) trait Cmp {
    /// The comparison's truth for `x OP y`.
    fn test<C: PartialOrd>(x: C, y: C) -> bool;
}

/// `out = a OP b` for two tensors.
pub(crate) fn compare_tensors<O: Cmp, Sel: DtypeSelection>(
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary::<C, Bool, Sel>(a, b, out, common, |x, y| Bool::from(O::test(x, y)))
    })
}

/// `out = a OP s` for a tensor and a scalar (the scalar is first cast to the common dtype).
pub(crate) fn compare_scalar<O: Cmp, Sel: DtypeSelection>(
    a: &Tensor,
    s: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, s)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let s = scalar_as::<C, Sel>(s, common)?;
        unary::<C, Bool, Sel>(a, out, common, move |x| Bool::from(O::test(x, s)))
    })
}
