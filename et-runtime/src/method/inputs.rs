//! Setting a tensor input with a diagnosis: which input, and what about the given tensor
//! does not fit it (the plain [`Method::set_input_bytes`] returns only the code).

use core::fmt;

use et_schema::scalar_type::ScalarType;

use super::Method;
use crate::error::Error;
use crate::tensor::{checked_numel, ShapeDynamism};

/// What about a given input does not fit the method's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputProblem {
    /// The method has only `count` inputs.
    NoSuchInput {
        /// How many inputs the method has.
        count: usize,
    },
    /// The input is not a tensor (or is a constant).
    NotATensor,
    /// The element type differs.
    Dtype {
        /// The method's.
        expected: ScalarType,
        /// The given one.
        found: ScalarType,
    },
    /// The number of dims differs.
    Rank {
        /// The method's.
        expected: usize,
        /// The given one.
        found: usize,
    },
    /// The input's shape is static and the given sizes differ from it.
    StaticShape,
    /// The input's shape is bounded and the given sizes hold more elements than the bound.
    AboveBound {
        /// Elements the given sizes hold.
        numel: usize,
        /// Elements the bound allows.
        bound: usize,
    },
    /// The data is not `numel * element size` bytes long.
    ByteCount {
        /// Bytes the sizes and dtype call for.
        expected: usize,
        /// Bytes given.
        found: usize,
    },
}

/// Why [`Method::set_input_checked`] refused an input: the code, the input, and what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputError {
    /// ExecuTorch's error code (`InvalidArgument` for every mismatch, `InvalidType` for a
    /// non-tensor input).
    pub error: Error,
    /// The input's index.
    pub input: usize,
    /// What does not fit.
    pub problem: InputProblem,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.input;
        match self.problem {
            InputProblem::NoSuchInput { count } => {
                write!(f, "input {i}: the method has {count} inputs")
            }
            InputProblem::NotATensor => write!(f, "input {i} is not a settable tensor"),
            InputProblem::Dtype { expected, found } => {
                write!(f, "input {i}: dtype {found}, the method expects {expected}")
            }
            InputProblem::Rank { expected, found } => {
                write!(f, "input {i}: {found} dims, the method expects {expected}")
            }
            InputProblem::StaticShape => {
                write!(f, "input {i}: the shape differs from its static shape")
            }
            InputProblem::AboveBound { numel, bound } => write!(
                f,
                "input {i}: {numel} elements, above its dynamic shape bound of {bound}"
            ),
            InputProblem::ByteCount { expected, found } => {
                write!(
                    f,
                    "input {i}: {found} bytes of data, the sizes call for {expected}"
                )
            }
        }
    }
}

impl Method<'_> {
    /// [`set_input_bytes`](Method::set_input_bytes), with an error that says what does not
    /// fit (the input index, the expected and given dtype, rank, bound or byte count).
    pub fn set_input_checked(
        &mut self,
        i: usize,
        dtype: ScalarType,
        sizes: &[usize],
        bytes: &[u8],
    ) -> Result<(), InputError> {
        let fail = |error, problem| InputError {
            error,
            input: i,
            problem,
        };
        let count = self.num_inputs();
        if i >= count {
            return Err(fail(
                Error::InvalidArgument,
                InputProblem::NoSuchInput { count },
            ));
        }
        let t = self
            .input_tensor_unmarked(i)
            .map_err(|e| fail(e, InputProblem::NotATensor))?;
        let bad = |problem| fail(Error::InvalidArgument, problem);
        if t.dtype() != dtype {
            let (expected, found) = (t.dtype(), dtype);
            return Err(bad(InputProblem::Dtype { expected, found }));
        }
        if t.dim() != sizes.len() {
            let (expected, found) = (t.dim(), sizes.len());
            return Err(bad(InputProblem::Rank { expected, found }));
        }
        let numel = checked_numel(sizes).unwrap_or(usize::MAX);
        if sizes != t.sizes() {
            if t.dynamism() == ShapeDynamism::Static {
                return Err(bad(InputProblem::StaticShape));
            }
            let bound = t.numel_bound();
            if numel > bound {
                return Err(bad(InputProblem::AboveBound { numel, bound }));
            }
        }
        let expected = numel.saturating_mul(dtype.element_size());
        if bytes.len() != expected {
            let found = bytes.len();
            return Err(bad(InputProblem::ByteCount { expected, found }));
        }
        self.set_input_bytes(i, dtype, sizes, bytes)
            .map_err(|e| fail(e, InputProblem::NotATensor))
    }
}
