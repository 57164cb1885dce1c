//! `et_copy::_h2d_copy.out`: ExecuTorch's copy from host (CPU) memory to device memory, which its
//! device-placement pass inserts at the boundary of a delegate with a target device.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor};

use crate::util::layout::check_same_dtype;

/// The copy from host (CPU) memory to device memory as ExecuTorch's portable kernel defines it:
/// its destination (`out`) must be on a non-CPU device, else the call fails with `InvalidArgument`. etch
/// has no device memory (no device allocator, and every tensor lives in host memory), so
/// after the dtype check every call fails as ExecuTorch's kernel does for CPU tensors.
/// Registered so that programs naming the operator load and report the failure where
/// ExecuTorch does, at execute.
#[kernel("et_copy::_h2d_copy.out")]
pub fn h2d_copy_out(_ctx: &KernelContext<'_>, input: &Tensor, out: &mut Tensor) -> KernelResult {
    check_same_dtype(input, out)?;
    Err(KernelError::invalid(
        "_h2d_copy: every etch tensor is in host memory, and this copy needs a device tensor",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{Error, ScalarType, TensorBuf};

    #[test]
    fn host_tensors_are_invalid_arguments() {
        with_ctx(|ctx| {
            let x = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            let e = h2d_copy_out(ctx, &x, &mut o).unwrap_err();
            assert_eq!(e.error, Error::InvalidArgument);
        });
    }
}
