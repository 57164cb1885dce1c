//! External tensors: tensors whose data the program expects from outside, bound by name
//! to the program's named data map (its own named data, then its `.ptd` files).
//!
//! Checked here: the key is found (a missing key, or no data file at all, is an error
//! naming the key and the file searched); the blob holds exactly the tensor's bytes; and
//! when the data file records a tensor layout, its dtype, sizes and dim order are the
//! tensor's. Constants are used in place (zero-copy); a planned (mutable) external tensor
//! is initialized by copying the blob into its place in the planned buffer.

use super::build::Builder;
use super::error::{note, ExternalDataProblem, LoadDetail};
use super::tensors::Data;
use crate::data::{DataLayout, DataSource};
use crate::error::Error;
use crate::program::Table;
use crate::tensor::ShapeStorage;
use et_schema::fields as fb;
use et_schema::scalar_type::ScalarType;

impl<'a> Builder<'a, '_> {
    /// Binds the data of the external tensor `t`, named `key`, of `dtype` and `nbytes`.
    ///
    /// # Safety
    /// `shape` must hold `dim` initialized sizes and dim-order entries.
    pub(super) unsafe fn external_data(
        &self,
        t: Table<'a>,
        key: &'a str,
        dtype: ScalarType,
        shape: &ShapeStorage,
        dim: usize,
        nbytes: usize,
    ) -> Result<Data, Error> {
        let fail = |error, file, problem| {
            let detail = LoadDetail::ExternalData { key, file, problem };
            Err(note(self.detail, error, detail))
        };
        let (data, source) = match self.named.lookup(key) {
            Ok(Some(found)) => found,
            Ok(None) => {
                let files = self.named.files();
                let problem = if files.is_empty() {
                    ExternalDataProblem::NoDataFiles
                } else {
                    ExternalDataProblem::NotFound {
                        searched: files.len(),
                    }
                };
                return fail(Error::NotFound, files.last().map(|f| f.name()), problem);
            }
            Err(e) => return fail(e, None, ExternalDataProblem::Malformed),
        };
        let file = match source {
            DataSource::File(name) => Some(name),
            DataSource::Program => None,
        };
        if let Some(layout) = data.layout {
            if layout.dtype() != dtype {
                let problem = ExternalDataProblem::Dtype {
                    expected: dtype,
                    found: layout.dtype(),
                };
                return fail(Error::InvalidExternalData, file, problem);
            }
            // SAFETY: the caller's promise.
            if !unsafe { same_shape(&layout, shape, dim) } {
                return fail(Error::InvalidExternalData, file, ExternalDataProblem::Shape);
            }
        }
        if data.bytes.len() != nbytes {
            let problem = ExternalDataProblem::Size {
                expected: nbytes,
                found: data.bytes.len(),
            };
            return fail(Error::InvalidExternalData, file, problem);
        }
        Ok(match t.table(fb::Tensor::VT_ALLOCATION_INFO) {
            // A constant: the blob in place. Tensors never write read-only data.
            None => Data {
                ptr: data.bytes.as_ptr().cast_mut(),
                read_only: true,
                planned: false,
            },
            Some(allocation) => {
                let ptr = self.planned_place(allocation, nbytes)?;
                // SAFETY: `ptr..ptr + nbytes` lies inside a planned buffer the method
                // borrows mutably (`planned_place`); the blob is loader memory, which
                // cannot overlap caller-provided planned memory; both are `nbytes` long.
                unsafe { core::ptr::copy_nonoverlapping(data.bytes.as_ptr(), ptr, nbytes) };
                Data {
                    ptr,
                    read_only: false,
                    planned: true,
                }
            }
        })
    }
}

/// Whether a data file's layout has the tensor's sizes and dim order.
///
/// # Safety
/// `shape` must hold `dim` initialized sizes and dim-order entries.
unsafe fn same_shape(layout: &DataLayout<'_>, shape: &ShapeStorage, dim: usize) -> bool {
    // SAFETY: the caller's promise: `dim` initialized entries each.
    let (sizes, order) = unsafe {
        (
            core::slice::from_raw_parts(shape.sizes.as_ptr(), dim),
            core::slice::from_raw_parts(shape.dim_order.as_ptr(), dim),
        )
    };
    layout.rank() == dim && layout.sizes().eq(sizes.iter().copied()) && layout.dim_order() == order
}
