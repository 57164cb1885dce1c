//! `aten::_cdist_forward.out`: distances between the rows of two sets.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use super::{check_p, PNorm};
use crate::util::element::Num;
use crate::util::elementwise::broadcast_shapes;
use crate::util::reduction::Space;

/// For `x1` of shape `[*, P, M]` and `x2` of shape `[*, R, M]` (batch dims broadcast), the
/// p-norm distance between every row of `x1` and every row of `x2`: `[*, P, R]`. `p = 0`
/// counts differing coordinates, `p = inf` takes the largest difference. Computed in f64
/// and rounded once (`compute_mode`, which picks a matrix-product path for `p = 2` in
/// PyTorch, changes nothing here).
#[kernel("aten::_cdist_forward.out", accepts = [floats])]
pub fn cdist_forward_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    _compute_mode: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    let dt = x1.dtype();
    let ok = x1.dim() >= 2
        && x2.dim() >= 2
        && x2.dtype() == dt
        && out.dtype() == dt
        && dt.is_floating()
        && x1.size(x1.dim() - 1) == x2.size(x2.dim() - 1);
    if !ok {
        return Err(KernelError::invalid(
            "cdist needs floating [*, P, M] and [*, R, M] inputs of one dtype",
        ));
    }
    check_p(p)?;
    let (n1, n2) = (x1.dim(), x2.dim());
    let batch = broadcast_shapes(&[&x1.sizes()[..n1 - 2], &x2.sizes()[..n2 - 2]])?;
    let b = batch.as_slice().len();
    if b + 2 > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..b].copy_from_slice(batch.as_slice());
    sizes[b] = x1.size(n1 - 2);
    sizes[b + 1] = x2.size(n2 - 2);
    out.resize(&sizes[..b + 2])?;
    et_switch!(Sel, dt, @floats, T => cdist::<T>(x1, x2, p, &sizes[..b], out))
}

/// The strides of `t`'s batch dims (all but the last two) broadcast to `batch`.
fn batch_strides(t: &Tensor, batch: &[usize]) -> [usize; MAX_DIM] {
    let own = t.dim() - 2;
    let lead = batch.len() - own;
    let mut s = [0usize; MAX_DIM];
    for d in 0..own {
        if t.size(d) != 1 {
            s[lead + d] = t.strides()[d];
        }
    }
    s
}

fn cdist<T: Num>(
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    batch: &[usize],
    out: &mut Tensor,
) -> KernelResult {
    let (n1, n2, b) = (x1.dim(), x2.dim(), batch.len());
    let (rows1, rows2, m) = (x1.size(n1 - 2), x2.size(n2 - 2), x1.size(n1 - 1));
    let (r1, c1) = (x1.strides()[n1 - 2], x1.strides()[n1 - 1]);
    let (r2, c2) = (x2.strides()[n2 - 2], x2.strides()[n2 - 1]);
    let (ro, co) = (out.strides()[b], out.strides()[b + 1]);
    let (s1, s2) = (batch_strides(x1, batch), batch_strides(x2, batch));
    let so = out.strides();
    let space = Space::new(batch, [&s1[..b], &s2[..b], &so[..b]]);
    let a = x1.data::<T>()?;
    let c = x2.data::<T>()?;
    let y = out.data_mut::<T>()?;
    space.for_each([0, 0, 0], |[b1, b2, bo]| {
        for i in 0..rows1 {
            for j in 0..rows2 {
                let mut norm = PNorm::new(p);
                for k in 0..m {
                    norm.add(a[b1 + i * r1 + k * c1].to_f64() - c[b2 + j * r2 + k * c2].to_f64());
                }
                y[bo + i * ro + j * co] = T::from_f64(norm.finish());
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn distances_with_broadcast_batches() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[2, 1, 1, 2], &[0.0f64, 0.0, 1.0, 1.0]).unwrap();
            let b = TensorBuf::from_slice(&[1, 2, 2], &[3.0f64, 4.0, 1.0, 1.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[2, 1, 1, 2]).unwrap();
            cdist_forward_out::<AllDtypes>(ctx, &a, &b, 2.0, None, &mut o).unwrap();
            assert_eq!(
                o.data::<f64>().unwrap(),
                &[5.0, libm::sqrt(2.0), libm::sqrt(13.0), 0.0]
            );
            cdist_forward_out::<AllDtypes>(ctx, &a, &b, 1.0, None, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[7.0, 2.0, 5.0, 0.0]);
            let c = TensorBuf::from_slice(&[1, 3], &[1.0f64, 2.0, 3.0]).unwrap();
            assert!(cdist_forward_out::<AllDtypes>(ctx, &a, &c, 2.0, None, &mut o).is_err());
        });
    }
}
