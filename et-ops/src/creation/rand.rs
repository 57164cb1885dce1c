//! `aten::rand.out`: uniform random values.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::element::Num;
use crate::util::layout::sizes_from_i64;
use crate::util::random::{mantissa_bits, Rng};

/// `out = torch.rand(size)`: independent uniform values in `[0, 1)`, each a multiple of
/// the dtype's precision so that none rounds up to 1. The numbers differ from PyTorch's
/// (its generator is not reproduced; only the distribution is specified).
#[kernel("aten::rand.out", accepts = [floats])]
pub fn rand_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    out.resize(&sizes[..n])?;
    let bits = mantissa_bits(out.dtype());
    let mut rng = Rng::new();
    et_switch!(Sel, out.dtype(), @floats, T => {
        for x in out.data_mut::<T>()? {
            *x = T::from_f64(rng.uniform(bits));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{f16, ScalarType, TensorBuf};

    #[test]
    fn uniform_values() {
        with_ctx(|ctx| {
            let mut o = TensorBuf::zeros(ScalarType::Half, &[64]).unwrap();
            rand_out::<AllDtypes>(ctx, &[64], &mut o).unwrap();
            let v = o.data::<f16>().unwrap();
            assert!(v.iter().all(|x| (0.0..1.0).contains(&x.to_f64())));
            assert!(v.iter().any(|x| x.to_f64() != v[0].to_f64()));
            let mut i = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            assert!(rand_out::<AllDtypes>(ctx, &[2], &mut i).is_err());
        });
    }
}
