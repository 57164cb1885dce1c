//! `aten::view_as_real_copy.out`: complex numbers as (real, imaginary) pairs.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM};

use crate::util::layout::{istrides, Walk};

/// `out = torch.view_as_real(self)`, materialized: a complex64 (complex128) tensor of
/// sizes `s` becomes a float32 (float64) tensor of sizes `[*s, 2]` holding each element's
/// real and imaginary parts.
#[kernel("aten::view_as_real_copy.out")]
pub fn view_as_real_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let part = match input.dtype() {
        ScalarType::ComplexFloat => ScalarType::Float,
        ScalarType::ComplexDouble => ScalarType::Double,
        _ => return Err(KernelError::invalid("view_as_real needs a complex tensor")),
    };
    let n = input.dim();
    if out.dtype() != part || n >= MAX_DIM {
        return Err(KernelError::invalid(
            "view_as_real out must be the complex type's real dtype",
        ));
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    sizes[n] = 2;
    out.resize(&sizes[..=n])?;
    // Both sides in units of one part: a complex element is two parts wide.
    let (is, os) = (istrides(input)?, istrides(out)?);
    let mut src = [0isize; MAX_DIM];
    for (s, &i) in src.iter_mut().zip(&is[..n]) {
        *s = i * 2;
    }
    src[n] = 1;
    let walk = Walk::copy(&sizes[..=n], &os[..=n], &src[..=n])?;
    walk.move_bytes(part.element_size(), out.bytes_mut()?, 0, input.bytes()?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::TensorBuf;

    #[test]
    fn splits_parts() {
        with_ctx(|ctx| {
            let mut x = TensorBuf::zeros(ScalarType::ComplexDouble, &[2]).unwrap();
            let parts = [1.0f64, -2.0, 3.5, 0.25];
            for (b, v) in x.bytes_mut().unwrap().chunks_exact_mut(8).zip(parts) {
                b.copy_from_slice(&v.to_ne_bytes());
            }
            let mut o = TensorBuf::zeros(ScalarType::Double, &[2, 2]).unwrap();
            view_as_real_copy_out(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &parts);
            let real = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            assert!(view_as_real_copy_out(ctx, &real, &mut of).is_err());
        });
    }
}
