//! `aten::neg.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise negation in the input's dtype. Integers wrap (`-MIN = MIN`); floats flip
/// the sign bit (`-0.0`, `-NaN`). Bool tensors are rejected, as in PyTorch.
#[kernel("aten::neg.out", accepts = [reals])]
pub fn neg_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    if common == ScalarType::Bool {
        return Err(KernelError::invalid(
            "negation is not supported for bool tensors",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, C, Sel>(input, out, common, |x| x.neg())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn negates() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[-2.5f64, 0.0, 3.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            neg_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            let o = o.data::<f64>().unwrap();
            assert_eq!(o, &[2.5, -0.0, -3.0]);
            assert!(o[1].is_sign_negative());
            let i = TensorBuf::from_slice(&[2], &[i8::MIN, 5]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Char, &[2]).unwrap();
            neg_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i8>().unwrap(), &[i8::MIN, -5]);
            let b = TensorBuf::from_slice(&[1], &[Bool(1)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[1]).unwrap();
            assert!(neg_out::<AllDtypes>(ctx, &b, &mut ob).is_err());
        });
    }
}
