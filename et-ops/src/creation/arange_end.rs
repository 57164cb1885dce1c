//! `aten::arange.out`: `0, 1, ..., end - 1`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::arange::arange_start_out;

/// `out = torch.arange(end, dtype=out.dtype)`: `arange.start_out` with start 0 and step 1
/// (so the same length and rounding rules).
#[kernel("aten::arange.out", accepts = [reals])]
pub fn arange_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    end: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    arange_start_out::<Sel>(ctx, Scalar::Int(0), end, Scalar::Int(1), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn counts_up() {
        with_ctx(|ctx| {
            let mut o = TensorBuf::with_layout(ScalarType::Float, &[8], &[0], ShapeDynamism::Bound)
                .unwrap();
            arange_out::<AllDtypes>(ctx, Scalar::Double(3.5), &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
            assert!(arange_out::<AllDtypes>(ctx, Scalar::Int(-1), &mut o).is_err());
        });
    }
}
