//! `aten::where.self_out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::element::Num;
use crate::util::elementwise::ternary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `condition ? a : b` with broadcasting over all three; `a` and `b` promote
/// to their common dtype. The condition must be a bool tensor.
#[kernel("aten::where.self_out", accepts = [all])]
pub fn where_self_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    condition: &Tensor,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    if condition.dtype() != ScalarType::Bool {
        return Err(KernelError::invalid("where needs a bool condition"));
    }
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        // The condition arrives converted to `C` (0 or 1); NaN never appears there.
        ternary::<C, C, Sel>(condition, a, b, out, common, |c, x, y| {
            if c != C::ZERO { x } else { y }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn selects() {
        with_ctx(|ctx| {
            let c = TensorBuf::from_slice(&[2, 2], &[Bool(1), Bool(0), Bool(0), Bool(1)]).unwrap();
            let a = TensorBuf::from_slice(&[2], &[1.0f32, f32::NAN]).unwrap();
            let b = TensorBuf::from_slice(&[], &[-1.0f32]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            where_self_out::<AllDtypes>(ctx, &c, &a, &b, &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..3], &[1.0, -1.0, -1.0]);
            assert!(v[3].is_nan());
            // int32 and int64 0-dim promote to int32.
            let x = TensorBuf::from_slice(&[2], &[5i32, 6]).unwrap();
            let y = TensorBuf::from_slice(&[], &[-7i64]).unwrap();
            let c1 = TensorBuf::from_slice(&[2], &[Bool(0), Bool(1)]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            where_self_out::<AllDtypes>(ctx, &c1, &x, &y, &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[-7, 6]);
            let bad = TensorBuf::from_slice(&[2], &[1i32, 0]).unwrap();
            assert!(where_self_out::<AllDtypes>(ctx, &bad, &x, &y, &mut oi).is_err());
        });
    }
}
