//! `aten::_conj_physical.out`: the complex conjugate, materialized.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::layout::{check_same_dtype, copy_same_shape};

/// `out = self.conj_physical()`: each complex element's imaginary part negated (a NaN's
/// sign flips too, as `-x` does). A real tensor is its own conjugate and is copied.
#[kernel("aten::_conj_physical.out")]
pub fn conj_physical_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let bytes = out.bytes_mut()?;
    match input.dtype() {
        ScalarType::ComplexFloat => {
            for pair in bytes.as_chunks_mut::<8>().0 {
                let (_, imag) = pair.split_at_mut(4);
                let v = f32::from_ne_bytes(imag.try_into().map_err(|_| bad_data())?);
                imag.copy_from_slice(&(-v).to_ne_bytes());
            }
        }
        ScalarType::ComplexDouble => {
            for pair in bytes.as_chunks_mut::<16>().0 {
                let (_, imag) = pair.split_at_mut(8);
                let v = f64::from_ne_bytes(imag.try_into().map_err(|_| bad_data())?);
                imag.copy_from_slice(&(-v).to_ne_bytes());
            }
        }
        _ => {}
    }
    Ok(())
}

fn bad_data() -> KernelError {
    KernelError::invalid("complex element of the wrong width")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::TensorBuf;

    fn complex64(parts: &[f32]) -> TensorBuf {
        let mut t = TensorBuf::zeros(ScalarType::ComplexFloat, &[parts.len() / 2]).unwrap();
        for (b, v) in t.bytes_mut().unwrap().chunks_exact_mut(4).zip(parts) {
            b.copy_from_slice(&v.to_ne_bytes());
        }
        t
    }

    fn parts(t: &Tensor) -> std::vec::Vec<f32> {
        t.bytes()
            .unwrap()
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
            .collect()
    }

    extern crate std;

    #[test]
    fn negates_imaginary_parts() {
        with_ctx(|ctx| {
            let x = complex64(&[1.0, 2.0, -3.0, -0.5]);
            let mut o = TensorBuf::zeros(ScalarType::ComplexFloat, &[2]).unwrap();
            conj_physical_out(ctx, &x, &mut o).unwrap();
            assert_eq!(parts(&o), &[1.0, -2.0, -3.0, 0.5]);
            let r = TensorBuf::from_slice(&[2], &[1.0f32, -2.0]).unwrap();
            let mut or = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            conj_physical_out(ctx, &r, &mut or).unwrap();
            assert_eq!(or.data::<f32>().unwrap(), &[1.0, -2.0]);
        });
    }
}
