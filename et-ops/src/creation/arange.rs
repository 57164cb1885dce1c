//! Evenly spaced values in a half-open interval.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, DtypeSet, KernelContext, KernelError, KernelResult, Scalar,
    ScalarType, Tensor,
};

use crate::util::convert::Val;
use crate::util::element::Num;
use crate::util::reduction::{store_at, unsupported_dtype, val_storer};

/// `out = torch.arange(start, end, step, dtype=out.dtype)`.
///
/// As PyTorch: the length is `ceil((end - start) / step)` computed in double (for
/// int64 outputs, in integer arithmetic on the truncated bounds), and element `i` is
/// `start + i * step` computed in the output's accumulation type (double for
/// float32/float64, float for float16, int64 for integers), then cast once.
#[kernel("aten::arange.start_out", accepts = [reals])]
pub fn arange_start_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    start: Scalar,
    end: Scalar,
    step: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let dt = out.dtype();
    if native_set(Sel::SET).contains(dt) {
        return et_switch!(in native_set(Sel::SET), dt, @reals, T => fill::<T>(start, end, step, out));
    }
    if dt == ScalarType::Bool {
        return Err(unsupported_dtype());
    }
    // The other dtypes share one loop storing through a function picked once.
    let st = val_storer::<Sel>(dt)?;
    let len = length(dt, start, end, step)?;
    out.resize(&[len])?;
    let data = out.bytes_mut()?;
    values(dt, start, step, len, |i, v| store_at(data, &st, i, v));
    Ok(())
}

/// The dtypes filled by a loop of their own: every selected one in narrow selections
/// (at most four dtypes, as the elementwise `fast_set`), else float32 alone; the others
/// share one loop (about 3 KB less in a build of every dtype).
const fn native_set(sel: DtypeSet) -> DtypeSet {
    if sel.0.count_ones() <= 4 {
        sel
    } else {
        DtypeSet(sel.0 & ScalarType::Float.bit())
    }
}

fn fill<T: Num>(start: Scalar, end: Scalar, step: Scalar, out: &mut Tensor) -> KernelResult {
    let len = length(T::DTYPE, start, end, step)?;
    out.resize(&[len])?;
    let data = out.data_mut::<T>()?;
    values(T::DTYPE, start, step, len, |i, v| data[i] = v.to());
    Ok(())
}

/// Calls `put(i, value)` for each of the `len` values of an arange into dtype `dt`:
/// float16 computes `start + step * i` in f32, other floats in f64, integers in wrapping
/// i64; each value is rounded (or wrapped) once at the store.
#[inline(always)]
fn values(
    dt: ScalarType,
    start: Scalar,
    step: Scalar,
    len: usize,
    mut put: impl FnMut(usize, Val),
) {
    if dt.is_floating() {
        if dt.element_size() == 2 {
            let (a, s) = (start.to_f64() as f32, step.to_f64() as f32);
            for i in 0..len {
                put(i, Val::Float((a + s * i as f32) as f64));
            }
        } else {
            let (a, s) = (start.to_f64(), step.to_f64());
            for i in 0..len {
                put(i, Val::Float(a + s * i as f64));
            }
        }
    } else {
        let (a, s) = (start.to_i64(), step.to_i64());
        for i in 0..len {
            put(i, Val::Int(a.wrapping_add(s.wrapping_mul(i as i64))));
        }
    }
}

/// The length of the arange into dtype `dt` (see the kernel's docs).
fn length(dt: ScalarType, start: Scalar, end: Scalar, step: Scalar) -> KernelResult<usize> {
    let (a, e, s) = if dt.is_floating() {
        (start.to_f64(), end.to_f64(), step.to_f64())
    } else {
        (
            start.to_i64() as f64,
            end.to_i64() as f64,
            step.to_i64() as f64,
        )
    };
    if s == 0.0 || s.is_nan() {
        return Err(KernelError::invalid("arange step must be nonzero"));
    }
    if !a.is_finite() || !e.is_finite() {
        return Err(KernelError::invalid("arange bounds must be finite"));
    }
    if (s > 0.0 && e < a) || (s < 0.0 && e > a) {
        return Err(KernelError::invalid(
            "arange bounds are inconsistent with the step sign",
        ));
    }
    let len = if dt == ScalarType::Long {
        let (a, e, s) = (start.to_i64(), end.to_i64(), step.to_i64());
        // ceil((e - a) / s) in integers: (e - a + s - sign(s)) / s.
        let sign = s.signum();
        let num = e
            .checked_sub(a)
            .and_then(|d| d.checked_add(s - sign))
            .ok_or(KernelError::invalid("arange size overflows"))?;
        (num / s) as f64
    } else {
        crate::util::element::Float::ceil((end.to_f64() - start.to_f64()) / step.to_f64())
    };
    if !(0.0..=i64::MAX as f64).contains(&len) {
        return Err(KernelError::invalid("arange size is invalid"));
    }
    Ok(len as usize)
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn ranges() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[5]).unwrap();
        arange_start_out::<AllDtypes>(&ctx, Scalar::Int(0), Scalar::Int(5), Scalar::Int(1), &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[0., 1., 2., 3., 4.]);
        let mut o = TensorBuf::zeros(ScalarType::Long, &[4]).unwrap();
        arange_start_out::<AllDtypes>(
            &ctx,
            Scalar::Int(10),
            Scalar::Int(2),
            Scalar::Int(-2),
            &mut o,
        )
        .unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[10, 8, 6, 4]);
        let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
        // (0.3 - 0) / 0.1 is 2.9999999999999996 in double: three elements, as in PyTorch.
        arange_start_out::<AllDtypes>(
            &ctx,
            Scalar::Double(0.),
            Scalar::Double(0.3),
            Scalar::Double(0.1),
            &mut o,
        )
        .unwrap();
        assert_eq!(o.data::<f64>().unwrap(), &[0., 0.1, 0.2]);
        let mut d =
            TensorBuf::with_layout(ScalarType::Double, &[8], &[0], ShapeDynamism::Bound).unwrap();
        arange_start_out::<AllDtypes>(
            &ctx,
            Scalar::Double(1.),
            Scalar::Double(2.),
            Scalar::Double(0.25),
            &mut d,
        )
        .unwrap();
        assert_eq!(d.data::<f64>().unwrap(), &[1., 1.25, 1.5, 1.75]);
        assert!(arange_start_out::<AllDtypes>(
            &ctx,
            Scalar::Int(0),
            Scalar::Int(5),
            Scalar::Int(0),
            &mut d
        )
        .is_err());
        assert!(arange_start_out::<AllDtypes>(
            &ctx,
            Scalar::Int(0),
            Scalar::Int(5),
            Scalar::Int(-1),
            &mut d
        )
        .is_err());
    }
}
