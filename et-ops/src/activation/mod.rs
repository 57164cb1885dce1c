//! Activation functions: elementwise, through
//! the crate-private `util::elementwise::unary`.

use et_runtime::{KernelError, KernelResult, ScalarType, Tensor};

pub mod elu;
pub mod gelu;
pub mod glu;
pub mod hardtanh;
pub mod leaky_relu;
pub mod native_dropout;
pub mod relu;
pub mod sigmoid;

/// The dtype of a floating input; activations defined only on floats (as PyTorch's
/// kernels are) reject anything else.
pub(crate) fn float_input(input: &Tensor) -> KernelResult<ScalarType> {
    let t = input.dtype();
    if t.is_floating() {
        Ok(t)
    } else {
        Err(KernelError::invalid(
            "this activation needs a floating-point tensor",
        ))
    }
}
