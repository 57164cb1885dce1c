//! `aten::prod.out`: the product of every element.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;
use crate::util::reduction::{
    all_dims, reduce_spaces, resize_reduced, store_at, val_storer, DimMask,
};

/// `out = self.prod(dtype=dtype)` over every element, as a 0-dim tensor. The result dtype
/// is `dtype`, else int64 for integer and bool inputs and the input's dtype for floats;
/// `out` must have it. Floats multiply in f64 and round once; integers wrap in int64. An
/// empty tensor gives 1.
#[kernel("aten::prod.out", accepts = [all])]
pub fn prod_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    prod_over::<Sel>(input, all_dims(input.dim()), false, dtype, out)
}

/// The product over the dims in `mask`: the body of both `prod` overloads.
pub(super) fn prod_over<Sel: DtypeSelection>(
    input: &Tensor,
    mask: DimMask,
    keepdim: bool,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    let default = if input.dtype().is_floating() {
        input.dtype()
    } else {
        ScalarType::Long
    };
    if out.dtype() != dtype.unwrap_or(default) {
        return Err(KernelError::invalid(
            "prod out dtype must be the dtype argument (int64 for integer inputs)",
        ));
    }
    resize_reduced(input, mask, keepdim, out)?;
    let st = val_storer::<Sel>(out.dtype())?;
    // Only element reads depend on the input dtype: one loop for every dtype.
    let acc = Accumulator::new::<Sel>(input.dtype())?;
    let float_acc = out.dtype().is_floating();
    let (outer, inner) = reduce_spaces(input, mask, out);
    let x = input.bytes()?;
    let y = out.bytes_mut()?;
    outer.for_each([0, 0], |[ib, ob]| {
        let v = if float_acc {
            let mut p = 1.0f64;
            inner.for_each([ib, 0], |[i, _]| p *= acc.get_f64(x, i));
            Val::Float(p)
        } else {
            let mut p = 1i64;
            inner.for_each([ib, 0], |[i, _]| {
                let v = match acc.get(x, i) {
                    Val::Int(v) => v,
                    // Float inputs only reach integer outs through an explicit dtype:
                    // truncate each factor, as the C++ cast of the input would.
                    Val::Float(f) => f as i64,
                };
                p = p.wrapping_mul(v);
            });
            Val::Int(p)
        };
        store_at(y, &st, ob, v);
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn products() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[2u8, 200, 3, 1]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[]).unwrap();
            prod_out::<AllDtypes>(ctx, &x, None, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1200]);
            let mut wrong = TensorBuf::zeros(ScalarType::Byte, &[]).unwrap();
            assert!(prod_out::<AllDtypes>(ctx, &x, None, &mut wrong).is_err());
            prod_out::<AllDtypes>(ctx, &x, Some(ScalarType::Byte), &mut wrong).unwrap();
            assert_eq!(wrong.data::<u8>().unwrap(), &[(1200 % 256) as u8]);
            let b = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            prod_out::<AllDtypes>(ctx, &b, None, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0]);
            let e = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
            prod_out::<AllDtypes>(ctx, &e, None, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[1.0]);
        });
    }
}
