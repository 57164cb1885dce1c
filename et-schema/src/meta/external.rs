//! Tensors whose data lives outside the program (`ExtraTensorInfo.location = EXTERNAL`):
//! the runtime binds them by name to named data (a `.ptd` file, usually) at load.

use super::tags::{tag, value_at};
use super::{MethodMeta, Plan, TensorInfo};
use crate::error::Error;
use crate::fields as fb;
use crate::reader::{Fields, Vector};

/// `TensorDataLocation::EXTERNAL` (program.fbs).
const EXTERNAL: u64 = 1;

/// The name an external tensor's data is found by, or `None` when the tensor's data is
/// in the program (or planned). `InvalidProgram` when the tensor is external but has no
/// fully qualified name.
// Inline outside size-first builds: `load_method` asks for every tensor, and most have no
// extra info (the answer is then one field read).
#[cfg_attr(not(etch_size_first), inline)]
pub fn external_data_name(tensor: Fields<'_>) -> Result<Option<&str>, Error> {
    type X<'x> = fb::ExtraTensorInfo<'x>;
    match tensor.table(fb::Tensor::VT_EXTRA_TENSOR_INFO) {
        Some(extra) if extra.uint(X::VT_LOCATION, 1) == EXTERNAL => extra
            .string(X::VT_FULLY_QUALIFIED_NAME)
            .filter(|name| !name.is_empty())
            .map(Some)
            .ok_or(Error::InvalidProgram),
        _ => Ok(None),
    }
}

/// A tensor of a method whose data the program expects from outside.
#[derive(Clone, Copy, Debug)]
pub struct ExternalTensor<'d> {
    /// Its index in the method's value table.
    pub value: usize,
    /// The key its data is looked up by (its fully qualified name).
    pub name: &'d str,
    /// Its dtype and shape (the bytes it needs are `info.nbytes()`).
    pub info: TensorInfo,
    /// Whether it is a planned, writable tensor initialized from the data (a mutable
    /// buffer) rather than a constant used in place.
    pub mutable: bool,
}

impl<'d> MethodMeta<'d> {
    /// The method's external tensors in value-table order; an `Err` for one whose
    /// metadata is malformed.
    pub fn external_tensors(&self) -> impl Iterator<Item = Result<ExternalTensor<'d>, Error>> {
        let values = self.list(Plan::VT_VALUES).unwrap_or(Vector::EMPTY);
        (0..values.len()).filter_map(move |value| {
            let (kind, t) = value_at(values, value as i64)?;
            let t = t.filter(|_| kind == tag::TENSOR)?;
            let name = match external_data_name(t.fields()) {
                Ok(name) => name?,
                Err(e) => return Some(Err(e)),
            };
            Some(TensorInfo::read(t).map(|info| ExternalTensor {
                value,
                name,
                info,
                mutable: t.table(fb::Tensor::VT_ALLOCATION_INFO).is_some(),
            }))
        })
    }
}
