//! `aten::isinf.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, Bool, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise "is +inf or -inf", as bools: false for NaN and for every integer and bool
/// element (an int64 computed as `i64::MAX` is not an infinity).
#[kernel("aten::isinf.out", accepts = [all])]
pub fn isinf_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, Bool, Sel>(input, out, common, |x| {
            Bool::from(C::IS_FLOAT && x.to_f64().abs() == f64::INFINITY)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn finds_infinities() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(
                &[4],
                &[f64::NAN, f64::MAX, f64::INFINITY, f64::NEG_INFINITY],
            )
            .unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            isinf_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[0u8, 0, 1, 1].map(Bool));
            let i = TensorBuf::from_slice(&[2], &[i64::MAX, i64::MIN]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            isinf_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<Bool>().unwrap(), &[Bool(0), Bool(0)]);
        });
    }
}
