//! External tensors: tensors whose data the program expects from outside, bound by name
//! to the program's `.ptd` data files.
//!
//! As in ExecuTorch, external tensors come from the data files alone, never from the
//! program's own named data (a delegate's). Checked (by `NamedDataMap::bind_external`):
//! the key is found (a missing key, or no data file at all, is an error naming the key
//! and the file searched); the blob holds exactly the tensor's bytes; and when the data
//! file records a tensor layout, its dtype, sizes and dim order are the tensor's.
//! The blob then takes the path of program data (`tensors`): a constant is used in place
//! (zero-copy), a planned (mutable) external tensor is initialized by copying the blob
//! into its place in the planned buffer.

use super::build::Builder;
use crate::data::TensorRequest;
use crate::error::Error;
use crate::tensor::ShapeStorage;
use et_schema::scalar_type::ScalarType;

impl<'a> Builder<'a, '_> {
    /// The bytes of the external tensor named `key`, of `dtype` and `nbytes`, checked
    /// against the tensor; a failure is noted as the load error's detail
    /// ([`LoadDetail::ExternalData`](super::LoadDetail::ExternalData)).
    ///
    /// # Safety
    /// `shape` must hold `dim` initialized sizes and dim-order entries.
    pub(super) unsafe fn external_data(
        &self,
        key: &'a str,
        dtype: ScalarType,
        shape: &ShapeStorage,
        dim: usize,
        nbytes: usize,
    ) -> Result<&'a [u8], Error> {
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
            detail: self.detail,
        };
        self.named.bind_external(&request)
    }
}
