//! `aten::randn.out`: standard normal random values.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::element::Num;
use crate::util::layout::sizes_from_i64;
use crate::util::random::Rng;

/// `out = torch.randn(size)`: independent standard normal values (mean 0, variance 1),
/// drawn in f64 and rounded to the dtype. The numbers differ from PyTorch's (its
/// generator is not reproduced; only the distribution is specified).
#[kernel("aten::randn.out", accepts = [floats])]
pub fn randn_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    out.resize(&sizes[..n])?;
    let mut rng = Rng::new();
    et_switch!(Sel, out.dtype(), @floats, T => {
        for x in out.data_mut::<T>()? {
            *x = T::from_f64(rng.normal());
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn normal_values() {
        with_ctx(|ctx| {
            let mut o = TensorBuf::zeros(ScalarType::Double, &[4096]).unwrap();
            randn_out::<AllDtypes>(ctx, &[4096], &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            let mean = v.iter().sum::<f64>() / 4096.0;
            let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 4096.0;
            assert!(mean.abs() < 0.1 && (var - 1.0).abs() < 0.1);
        });
    }
}
