//! `aten::logical_not.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, Bool, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise `x == 0` for any input dtype (NaN counts as true, so it gives false).
/// The out tensor may have any dtype and receives 0 or 1.
#[kernel("aten::logical_not.out", accepts = [all])]
pub fn logical_not_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, Bool, Sel>(input, out, common, |x| Bool::from(!x.to_bool()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn negates_truth() {
        with_ctx(|ctx| {
            let b = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            logical_not_out::<AllDtypes>(ctx, &b, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[Bool(0), Bool(1)]);
            let x = TensorBuf::from_slice(&[3], &[0.0f32, -2.0, f32::NAN]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            logical_not_out::<AllDtypes>(ctx, &x, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[1.0, 0.0, 0.0]);
        });
    }
}
