//! Float operands of the mixed-precision matmuls, read and rounded without per-dtype
//! copies of the loops: the values are carried as f64 and each arithmetic step is
//! rounded to the precision its C++ type would have (see [`Prec::round`]).

use et_runtime::{f16, KernelError, KernelResult, ScalarType, Tensor};

/// A float type's precision, ordered narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Prec {
    Half,
    Single,
    Double,
}

impl Prec {
    /// The precision of a float16, float32 or float64 dtype.
    pub(crate) fn of(dtype: ScalarType) -> Option<Prec> {
        match dtype {
            ScalarType::Half => Some(Prec::Half),
            ScalarType::Float => Some(Prec::Single),
            ScalarType::Double => Some(Prec::Double),
            _ => None,
        }
    }

    /// `v` rounded to this precision: one arithmetic step done in that type. A step of
    /// two narrower operands computed in f64 and rounded once is exactly the narrow
    /// type's own result (f64 has more than twice float32's precision, so the double
    /// rounding is innocuous), which lets one f64 loop stand for every C++ element type.
    #[inline(always)]
    pub(crate) fn round(self, v: f64) -> f64 {
        match self {
            Prec::Half => f16::from_f64(v).to_f64(),
            Prec::Single => v as f32 as f64,
            Prec::Double => v,
        }
    }
}

/// The values of a contiguous float32 or float16 tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Floats<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
}

impl<'a> Floats<'a> {
    pub(crate) fn of(t: &'a Tensor) -> KernelResult<Self> {
        match t.dtype() {
            ScalarType::Float => Ok(Floats::F32(t.data::<f32>()?)),
            ScalarType::Half => Ok(Floats::F16(t.data::<f16>()?)),
            _ => Err(KernelError::invalid("expected float32 or float16")),
        }
    }

    /// Value `i` (0 past the end; callers index within the shape).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> f64 {
        match self {
            Floats::F32(d) => d.get(i).map_or(0.0, |&v| v as f64),
            Floats::F16(d) => d.get(i).map_or(0.0, |v| v.to_f64()),
        }
    }
}
