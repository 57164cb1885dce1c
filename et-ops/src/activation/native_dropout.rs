//! `aten::native_dropout.out`: dropout with its keep mask.

use et_runtime::kernel;
use et_runtime::{
    et_switch, Bool, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use super::float_input;
use crate::util::element::OpMath;
use crate::util::layout::copy_same_shape;
use crate::util::random::Rng;

/// `(out, mask) = native_dropout(input, p, train)`. Training (`train` true or absent):
/// each element is kept with probability `1 - p` (`mask` true) and scaled by `1 / (1 -
/// p)`, else zeroed; `p = 1` zeroes everything. PyTorch scales the kept elements;
/// ExecuTorch's portable kernel does not, and PyTorch is followed here. Evaluation
/// (`train` false): `out` is a copy and `mask` all true.
#[kernel("aten::native_dropout.out", accepts = [f16, f32, f64, bool])]
pub fn native_dropout_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    p: f64,
    train: Option<bool>,
    out: &mut Tensor,
    mask: &mut Tensor,
) -> KernelResult {
    let dt = float_input(input)?;
    if out.dtype() != dt || mask.dtype() != ScalarType::Bool {
        return Err(KernelError::invalid(
            "dropout outs must be the input's dtype and bool",
        ));
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(KernelError::invalid(
            "dropout probability must be in [0, 1]",
        ));
    }
    out.resize(input.sizes())?;
    mask.resize(input.sizes())?;
    if train == Some(false) {
        copy_same_shape(out, input, None, None)?;
        mask.data_mut::<Bool>()?.fill(Bool(1));
        return Ok(());
    }
    // Masks follow `out`'s memory order, which is the input's when the layouts agree.
    if out.dim_order() != input.dim_order() || mask.dim_order() != input.dim_order() {
        return Err(KernelError::unsupported(
            "dropout outs must share the input's dim order",
        ));
    }
    let keep = 1.0 - p;
    let scale = if keep == 0.0 { 0.0 } else { 1.0 / keep };
    et_switch!(Sel, dt, @floats, T => drop_impl::<T>(input, keep, scale, out, mask))
}

fn drop_impl<T: OpMath>(
    input: &Tensor,
    keep: f64,
    scale: f64,
    out: &mut Tensor,
    mask: &mut Tensor,
) -> KernelResult {
    let mut rng = Rng::new();
    let x = input.data::<T>()?;
    let m = mask.data_mut::<Bool>()?;
    let y = out.data_mut::<T>()?;
    let s = <T::C as crate::util::element::Float>::c(scale);
    for ((y, m), &x) in y.iter_mut().zip(m.iter_mut()).zip(x) {
        // `uniform < keep` is always true for keep = 1 and never for keep = 0.
        let kept = rng.uniform(53) < keep;
        *m = Bool::from(kept);
        *y = if kept { T::down(x.up() * s) } else { T::ZERO };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn drops_and_scales() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1000], &[2.0f32; 1000]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1000]).unwrap();
            let mut m = TensorBuf::zeros(ScalarType::Bool, &[1000]).unwrap();
            native_dropout_out::<AllDtypes>(ctx, &x, 0.5, Some(true), &mut o, &mut m).unwrap();
            let kept = m.data::<Bool>().unwrap().iter().filter(|b| b.get()).count();
            assert!((400..600).contains(&kept));
            for (y, b) in o
                .data::<f32>()
                .unwrap()
                .iter()
                .zip(m.data::<Bool>().unwrap())
            {
                assert_eq!(*y, if b.get() { 4.0 } else { 0.0 });
            }
            native_dropout_out::<AllDtypes>(ctx, &x, 1.0, None, &mut o, &mut m).unwrap();
            assert!(o.data::<f32>().unwrap().iter().all(|&y| y == 0.0));
            native_dropout_out::<AllDtypes>(ctx, &x, 0.0, None, &mut o, &mut m).unwrap();
            assert!(o.data::<f32>().unwrap().iter().all(|&y| y == 2.0));
            native_dropout_out::<AllDtypes>(ctx, &x, 0.9, Some(false), &mut o, &mut m).unwrap();
            assert!(m.data::<Bool>().unwrap().iter().all(|b| b.get()));
            assert!(native_dropout_out::<AllDtypes>(ctx, &x, 1.5, None, &mut o, &mut m).is_err());
        });
    }
}
