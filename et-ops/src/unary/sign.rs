//! `aten::sign.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise sign: -1, 0 or 1 in the input's dtype. NaN gives 0 and both zeros give 0,
/// as PyTorch's `(0 < x) - (x < 0)`; a bool tensor is unchanged.
#[kernel("aten::sign.out", accepts = [all])]
pub fn sign_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        unary::<C, C, Sel>(input, out, common, |x| x.sign())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn signs() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[5], &[-2.5f32, 0.0, -0.0, 3.0, f32::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[5]).unwrap();
            sign_out::<AllDtypes>(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-1.0, 0.0, 0.0, 1.0, 0.0]);
            let i = TensorBuf::from_slice(&[3], &[i32::MIN, 0, 9]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            sign_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[-1, 0, 1]);
        });
    }
}
