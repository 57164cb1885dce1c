//! Dtype conversion plus dim-order change (`Tensor.to(dtype, memory_format)`).

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::convert::{loader, storer};
use crate::util::layout::{check_dim_order_arg, copy_same_shape};

/// `out = self.to(out.dtype)` laid out in `dim_order` (which must be `out`'s dim order).
/// Conversions follow C++ casts as PyTorch does: float to integer truncates toward zero,
/// integer narrowing wraps, anything to bool is "non-zero" (NaN is true).
#[kernel("dim_order_ops::_to_dim_order_copy.out")]
pub fn to_dim_order_copy_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    _non_blocking: bool,
    dim_order: Option<&[i64]>,
    out: &mut Tensor,
) -> KernelResult {
    check_dim_order_arg(dim_order, out)?;
    out.resize(input.sizes())?;
    if input.dtype() == out.dtype() {
        return copy_same_shape(out, input, None, None);
    }
    let from = et_switch!(Sel, input.dtype(), @all, T => Ok(loader::<T>()))?;
    let to = et_switch!(Sel, out.dtype(), @all, T => Ok(storer::<T>()))?;
    copy_same_shape(out, input, Some(from), Some(to))
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{f16, Arena, Bool, ScalarType, ShapeDynamism, TensorBuf};

    fn ctx_run(f: impl FnOnce(&KernelContext<'_>)) {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        f(&KernelContext::new(&arena));
    }

    #[test]
    fn converts_dtypes() {
        ctx_run(|ctx| {
            let x = TensorBuf::from_slice(&[5], &[1.7f32, -2.9, 300.5, f32::NAN, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[5]).unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &x, false, Some(&[0]), &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap()[..3], [1, -2, 300]);
            let mut b = TensorBuf::zeros(ScalarType::Bool, &[5]).unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &x, false, None, &mut b).unwrap();
            assert_eq!(
                b.data::<Bool>().unwrap(),
                &[Bool(1), Bool(1), Bool(1), Bool(1), Bool(0)]
            );
            let mut h = TensorBuf::zeros(ScalarType::Half, &[5]).unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &x, false, None, &mut h).unwrap();
            assert_eq!(h.data::<f16>().unwrap()[0], f16::from_f32(1.7));
            let i = TensorBuf::from_slice(&[3], &[-1i32, 256, 7]).unwrap();
            let mut u = TensorBuf::zeros(ScalarType::Byte, &[3]).unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &i, false, None, &mut u).unwrap();
            assert_eq!(u.data::<u8>().unwrap(), &[255, 0, 7]);
        });
    }

    #[test]
    fn changes_dim_order() {
        ctx_run(|ctx| {
            let v: std::vec::Vec<f64> = (0..12).map(f64::from).collect();
            let x = TensorBuf::from_slice(&[1, 3, 2, 2], &v).unwrap();
            let mut o = TensorBuf::with_layout(
                ScalarType::Double,
                &[1, 3, 2, 2],
                &[0, 2, 3, 1],
                ShapeDynamism::Static,
            )
            .unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &x, false, Some(&[0, 2, 3, 1]), &mut o)
                .unwrap();
            assert_eq!(
                o.data::<f64>().unwrap(),
                &[0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
            );
            assert!(to_dim_order_copy_out::<AllDtypes>(
                ctx,
                &x,
                false,
                Some(&[0, 1, 2, 3]),
                &mut o
            )
            .is_err());
            // And converting while changing order.
            let mut f = TensorBuf::with_layout(
                ScalarType::Float,
                &[1, 3, 2, 2],
                &[0, 2, 3, 1],
                ShapeDynamism::Static,
            )
            .unwrap();
            to_dim_order_copy_out::<AllDtypes>(ctx, &x, false, None, &mut f).unwrap();
            assert_eq!(f.data::<f32>().unwrap()[..4], [0., 4., 8., 1.]);
        });
    }
}
