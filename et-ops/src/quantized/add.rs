//! `quantized_decomposed::add.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::chunk::{load_i, store_i, LoadI, StoreI, CHUNK};
use super::{inv_scale, resize_like};
use crate::util::element::Float;

/// One input's quantization: scale (narrowed to float32 as ExecuTorch does) and zero
/// point (narrowed to int32).
#[derive(Clone, Copy)]
struct Side {
    scale: f32,
    zero_point: i32,
}

/// Checks one side's range: ExecuTorch's kernel is for 8-bit unsigned-range data,
/// `0 <= quant_min <= quant_max <= 255`.
fn check_range(quant_min: i64, quant_max: i64, what: &'static str) -> KernelResult {
    if (0..=quant_max).contains(&quant_min) && quant_max <= 255 {
        Ok(())
    } else {
        Err(KernelError::invalid(what))
    }
}

/// Quantized elementwise add, numerically `quantize(dequantize(a) + dequantize(b))`:
/// each side dequantized as `(q - zero_point) * scale` in float64 then rounded to
/// float32, the sum in float32, requantized with the out's parameters (float32 steps,
/// half-to-even rounding, clamped to the out's range). `a`, `b` and `out` have the same
/// shape, dim order and integer dtype; every range lies in `[0, 255]`.
#[kernel("quantized_decomposed::add.out", accepts = [ints])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn add_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    a_scale: f64,
    a_zero_point: i64,
    a_quant_min: i64,
    a_quant_max: i64,
    b: &Tensor,
    b_scale: f64,
    b_zero_point: i64,
    b_quant_min: i64,
    b_quant_max: i64,
    out_scale: f64,
    out_zero_point: i64,
    out_quant_min: i64,
    out_quant_max: i64,
    out: &mut Tensor,
) -> KernelResult {
    if a.sizes() != b.sizes() || a.dim_order() != b.dim_order() {
        return Err(KernelError::invalid(
            "quantized add: a and b must have the same shape and dim order",
        ));
    }
    if a.dtype() != b.dtype() || a.dtype() != out.dtype() {
        return Err(KernelError::invalid(
            "quantized add: a, b and out must have the same dtype",
        ));
    }
    resize_like(a, out)?;
    check_range(a_quant_min, a_quant_max, "quantized add: bad range for a")?;
    check_range(b_quant_min, b_quant_max, "quantized add: bad range for b")?;
    check_range(
        out_quant_min,
        out_quant_max,
        "quantized add: bad range for out",
    )?;
    let sa = Side {
        scale: a_scale as f32,
        zero_point: a_zero_point as i32,
    };
    let sb = Side {
        scale: b_scale as f32,
        zero_point: b_zero_point as i32,
    };
    let inv = inv_scale(out_scale);
    // ExecuTorch adds the int64 zero point to the rounded float32 value in float32.
    let zo = out_zero_point as f32;
    let load: LoadI =
        et_switch!(Sel, a.dtype(), [u8, i8, i16, i32, i64], T => Ok(load_i::<T> as LoadI))?;
    let store: StoreI =
        et_switch!(Sel, a.dtype(), [u8, i8, i16, i32, i64], T => Ok(store_i::<T> as StoreI))?;
    let dequantize = |q: i64, s: Side| {
        // The int64 difference times the scale in float64, rounded to float32.
        (q.wrapping_sub(s.zero_point as i64) as f64 * s.scale as f64) as f32
    };
    let n = a.numel();
    let (mut xs, mut ys) = ([0i64; CHUNK], [0i64; CHUNK]);
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        load(a, start, &mut xs[..len])?;
        load(b, start, &mut ys[..len])?;
        for (x, &y) in xs[..len].iter_mut().zip(&ys[..len]) {
            let sum = dequantize(*x, sa) + dequantize(y, sb);
            let q = (zo + Float::round_even(inv * sum)) as i64;
            *x = q.max(out_quant_min).min(out_quant_max);
        }
        store(out, start, &xs[..len])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, ScalarType, TensorBuf};

    #[test]
    fn dequantize_add_requantize() {
        with_ctx(|ctx| {
            // a: scale 0.5, zp 10; b: scale 0.25, zp 0; out: scale 1, zp 5, range [0, 20].
            let a = TensorBuf::from_slice(&[4], &[10u8, 13, 255, 0]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[2u8, 2, 0, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Byte, &[4]).unwrap();
            add_out::<AllDtypes>(
                ctx, &a, 0.5, 10, 0, 255, &b, 0.25, 0, 0, 255, 1.0, 5, 0, 20, &mut o,
            )
            .unwrap();
            // 0 + 0.5 -> 0 (tie to even) + 5; 1.5 + 0.5 = 2 -> 7; 122.5 -> 20; -5 -> 0.
            assert_eq!(o.data::<u8>().unwrap(), &[5, 7, 20, 0]);
            // Ranges outside [0, 255], mixed dtypes, shape mismatch.
            let call = |a: &TensorBuf, b: &TensorBuf, qmin, o: &mut TensorBuf| {
                add_out::<AllDtypes>(
                    ctx, a, 1.0, 0, qmin, 255, b, 1.0, 0, 0, 255, 1.0, 0, 0, 255, o,
                )
            };
            assert!(call(&a, &b, -1, &mut o).is_err());
            let bi = TensorBuf::from_slice(&[4], &[0i8; 4]).unwrap();
            assert!(call(&a, &bi, 0, &mut o).is_err());
            let b3 = TensorBuf::from_slice(&[3], &[0u8; 3]).unwrap();
            assert!(call(&a, &b3, 0, &mut o).is_err());
        });
    }
}
