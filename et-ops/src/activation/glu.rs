//! `aten::glu.out`: the gated linear unit.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use super::float_input;
use crate::util::element::{Float, OpMath};
use crate::util::layout::{istrides, normalize_dim, Walk};

/// `out = a * sigmoid(b)` where `a` and `b` are the first and second halves of `self`
/// along `dim` (whose size must be even). Floating inputs only; float16 computes in
/// float32 and rounds once.
#[kernel("aten::glu.out", accepts = [floats])]
pub fn glu_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    out: &mut Tensor,
) -> KernelResult {
    let dt = float_input(input)?;
    if out.dtype() != dt {
        return Err(KernelError::invalid(
            "glu out dtype differs from the input's",
        ));
    }
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid("glu needs at least one dim"));
    }
    let d = normalize_dim(dim, n)?;
    if !input.size(d).is_multiple_of(2) {
        return Err(KernelError::invalid("glu halves an even-sized dim"));
    }
    let half = input.size(d) / 2;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    sizes[d] = half;
    out.resize(&sizes[..n])?;
    let (is, os) = (istrides(input)?, istrides(out)?);
    let walk = Walk::new(&sizes[..n], [&os[..n], &is[..n], &is[..n]])?;
    let gate_base = half * input.strides()[d];
    et_switch!(Sel, dt, @floats, T => glu_impl::<T>(&walk, gate_base, input, out))
}

fn glu_impl<T: OpMath>(
    walk: &Walk<3>,
    gate_base: usize,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    let one = T::C::c(1.0);
    let lens = [y.len(), x.len(), x.len()];
    walk.for_each([0, 0, gate_base], lens, |[o, a, b]| {
        let gate = one / (one + Float::exp(-x[b].up()));
        y[o] = T::down(x[a].up() * gate);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn gates_the_first_half() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[3.0f64, 0.0, -2.0, 1000.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[2, 1]).unwrap();
            glu_out::<AllDtypes>(ctx, &x, -1, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[1.5, -2.0]);
            let mut o0 = TensorBuf::zeros(ScalarType::Double, &[1, 2]).unwrap();
            glu_out::<AllDtypes>(ctx, &x, 0, &mut o0).unwrap();
            assert_eq!(o0.data::<f64>().unwrap()[1], 0.0);
            let odd = TensorBuf::from_slice(&[3], &[1.0f64, 2.0, 3.0]).unwrap();
            let mut oo = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            assert!(glu_out::<AllDtypes>(ctx, &odd, 0, &mut oo).is_err());
        });
    }
}
