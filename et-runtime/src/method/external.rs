//! External tensors: tensors whose data the program expects from outside, bound by name
//! to the program's `.ptd` data files.
//!
//! As in ExecuTorch, external tensors come from the data files alone, never from the
//! program's own named data (a delegate's). Checked (by `NamedDataMap::bind_external`):
//! the key is found (a missing key, or no data file at all, is an error naming the key
//! and the file searched); the blob holds exactly the tensor's bytes; and when the data
//! file records a tensor layout, its dtype, sizes and dim order are the tensor's.
//! Constants are used in place (zero-copy); a planned (mutable) external tensor is
//! initialized by copying the blob into its place in the planned buffer.

use super::build::Builder;
use super::error::{note, LoadDetail};
use super::tensors::Data;
use crate::data::TensorRequest;
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
        // SAFETY: the caller's promise: `dim` initialized entries each.
        let (sizes, dim_order) = unsafe {
            (
                core::slice::from_raw_parts(shape.sizes.as_ptr(), dim),
                core::slice::from_raw_parts(shape.dim_order.as_ptr(), dim),
            )
        };
        let request = TensorRequest {
            key,
            dtype,
            sizes,
            dim_order,
            nbytes,
        };
        let bytes = match self.named.bind_external(&request) {
            Ok(bytes) => bytes,
            Err(f) => {
                let detail = LoadDetail::ExternalData {
                    key,
                    file: f.file,
                    problem: f.problem,
                };
                return Err(note(self.detail, f.error, detail));
            }
        };
        Ok(match t.table(fb::Tensor::VT_ALLOCATION_INFO) {
            // A constant: the blob in place. Tensors never write read-only data.
            None => Data {
                ptr: bytes.as_ptr().cast_mut(),
                read_only: true,
                planned: false,
            },
            Some(allocation) => {
                let ptr = self.planned_place(allocation, nbytes)?;
                // SAFETY: `ptr..ptr + nbytes` lies inside a planned buffer the method
                // borrows mutably (`planned_place`); the blob is loader memory, which
                // cannot overlap caller-provided planned memory; both are `nbytes` long
                // (`bind_external` checked the blob's length).
                unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, nbytes) };
                Data {
                    ptr,
                    read_only: false,
                    planned: true,
                }
            }
        })
    }
}
