//! `aten::isnan.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, Bool, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise "is NaN", as bools: false for every integer and bool element.
#[kernel("aten::isnan.out", accepts = [all])]
pub fn isnan_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, Bool, Sel>(input, out, common, |x| Bool::from(Num::is_nan(x)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{f16, ScalarType, TensorBuf};

    #[test]
    fn finds_nans() {
        with_ctx(|ctx| {
            let x =
                TensorBuf::from_slice(&[4], &[f32::NAN, 1.0, f32::INFINITY, -f32::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            isnan_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[1u8, 0, 0, 1].map(Bool));
            let h = TensorBuf::from_slice(&[2], &[f16::from_f64(f64::NAN), f16::ONE]).unwrap();
            let mut oh = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            isnan_out::<AllDtypes>(ctx, &h, &mut oh).unwrap();
            assert_eq!(oh.data::<Bool>().unwrap(), &[Bool(1), Bool(0)]);
            let i = TensorBuf::from_slice(&[2], &[i32::MAX, 0]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            isnan_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<Bool>().unwrap(), &[Bool(0), Bool(0)]);
        });
    }
}
