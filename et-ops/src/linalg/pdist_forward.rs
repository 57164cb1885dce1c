//! `aten::_pdist_forward.out`: distances between every pair of rows.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::{check_p, PNorm};
use crate::util::element::Num;

/// For `self` of shape `[N, M]`, the p-norm distance between rows `i < j`, for every pair
/// in row-major order of `(i, j)`: a `[N * (N - 1) / 2]` tensor. `p = 0` counts differing
/// coordinates, `p = inf` takes the largest difference. Computed in f64, rounded once.
#[kernel("aten::_pdist_forward.out", accepts = [floats])]
pub fn pdist_forward_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    p: f64,
    out: &mut Tensor,
) -> KernelResult {
    if input.dim() != 2 || out.dtype() != input.dtype() || !input.dtype().is_floating() {
        return Err(KernelError::invalid(
            "pdist needs a 2-d floating input and an out of its dtype",
        ));
    }
    check_p(p)?;
    let n = input.size(0);
    out.resize(&[n * n.saturating_sub(1) / 2])?;
    et_switch!(Sel, input.dtype(), @floats, T => pdist::<T>(input, p, out))
}

fn pdist<T: Num>(input: &Tensor, p: f64, out: &mut Tensor) -> KernelResult {
    let (n, m) = (input.size(0), input.size(1));
    let (rs, cs) = (input.strides()[0], input.strides()[1]);
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    let mut k = 0;
    for i in 0..n {
        for j in i + 1..n {
            let mut norm = PNorm::new(p);
            for c in 0..m {
                norm.add(x[i * rs + c * cs].to_f64() - x[j * rs + c * cs].to_f64());
            }
            y[k] = T::from_f64(norm.finish());
            k += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn pairwise() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3, 2], &[0.0f64, 0.0, 3.0, 4.0, 0.0, 1.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            pdist_forward_out::<AllDtypes>(ctx, &x, 2.0, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[5.0, 1.0, libm::sqrt(18.0)]);
            pdist_forward_out::<AllDtypes>(ctx, &x, 0.0, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[2.0, 1.0, 2.0]);
            pdist_forward_out::<AllDtypes>(ctx, &x, f64::INFINITY, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[4.0, 1.0, 3.0]);
            assert!(pdist_forward_out::<AllDtypes>(ctx, &x, -1.0, &mut o).is_err());
        });
    }
}
