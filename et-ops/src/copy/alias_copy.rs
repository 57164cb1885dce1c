//! `aten::alias_copy.out`: a materialized alias (what export leaves of `x[...]` views
//! it cannot express otherwise, e.g. in every decoder language model's KV-cache path).

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use crate::util::layout::{check_same_dtype, copy_same_shape};

/// `out = self`, copied: same dtype, same sizes, `out`'s own dim order.
#[kernel("aten::alias_copy.out")]
pub fn alias_copy_out(_ctx: &KernelContext<'_>, input: &Tensor, out: &mut Tensor) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn copies_and_checks_dtype() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1i64, -2, 3, i64::MIN]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[2, 2]).unwrap();
            alias_copy_out(ctx, &x, &mut out).unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[1, -2, 3, i64::MIN]);
            let mut wrong = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            assert!(alias_copy_out(ctx, &x, &mut wrong).is_err());
            let mut wrong_shape = TensorBuf::zeros(ScalarType::Long, &[4]).unwrap();
            assert!(alias_copy_out(ctx, &x, &mut wrong_shape).is_err());
        });
    }
}
