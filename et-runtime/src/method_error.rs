//! How loading and executing a method fail: an ExecuTorch error code plus what, and where.
//!
//! `load_method`'s checks return plain codes; the ones that know more record it with
//! [`note`], so the common path carries no detail around. Without the feature `messages`
//! `note` records nothing (the detail is only ever explained to a reader), and the
//! details' construction compiles out.

use core::cell::Cell;
use core::fmt;

use crate::error::Error;
use crate::kernel::ArgKind;
use crate::value::Tag;
use et_schema::op_name::OperatorName;
use et_schema::scalar_type::ScalarType;

/// Why `load_method` failed: the code plus what, and where.
#[derive(Clone, Copy, Debug)]
pub struct LoadError<'d> {
    /// ExecuTorch's error code.
    pub error: Error,
    /// What was wrong, and where (with the feature `messages`; without it a load error
    /// is its code alone and this is always [`LoadDetail::None`], so the failure points
    /// build no detail and no binary that reports codes only pays for them).
    pub detail: LoadDetail<'d>,
}

/// The specifics of a [`LoadError`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum LoadDetail<'d> {
    /// Nothing more specific is known.
    None,
    /// No method has this name.
    NoSuchMethod,
    /// Value `index` of the value table is malformed or does not fit in memory.
    Value {
        /// Index in the value table.
        index: usize,
    },
    /// Instruction `index` is malformed.
    Instruction {
        /// Instruction index (chains concatenated).
        index: usize,
    },
    /// Some kernel calls have no registered kernel. Use
    /// [`missing_kernels`](crate::registry::missing_kernels) to list all of them with their kernel
    /// keys.
    MissingKernels {
        /// How many calls are unserved.
        count: usize,
        /// The instruction of the first unserved call.
        first_instruction: usize,
        /// Its operator.
        first_operator: OperatorName<'d>,
    },
    /// A kernel's declared parameter count does not match the call.
    ArgumentCount {
        /// Instruction index.
        instruction: usize,
        /// The operator.
        operator: OperatorName<'d>,
        /// Values the kernel takes (parameters plus return slot).
        expected: usize,
        /// Values the program passes.
        found: usize,
    },
    /// A value passed to a kernel has the wrong kind.
    ArgumentKind {
        /// Instruction index.
        instruction: usize,
        /// The operator.
        operator: OperatorName<'d>,
        /// Parameter position (0-based, after the context).
        position: usize,
        /// What the kernel declares.
        expected: ArgKind,
        /// What the program passes.
        found: Tag,
    },
    /// A delegate names a backend that is not registered (or not available).
    MissingBackend {
        /// The backend id.
        id: &'d str,
    },
    /// A backend refused a delegate's payload.
    BackendInit {
        /// The backend id.
        id: &'d str,
        /// The delegate's index in the method's delegate list.
        delegate: usize,
        /// What the backend found wrong (may be empty).
        message: &'static str,
        /// The payload node concerned, if any.
        node: Option<NodeRef>,
    },
    /// An external tensor's data is missing or does not fit the tensor.
    ExternalData {
        /// The tensor's fully qualified name, the key its data is looked up by.
        key: &'d str,
        /// The data file that held the key (or the last one searched when none did);
        /// `None` for the program's own named data or when no file was given.
        file: Option<&'d str>,
        /// What is wrong.
        problem: ExternalDataProblem,
    },
    /// A backend asked for named data that no source holds
    /// ([`BackendInitContext::require_named_data`](crate::backend::BackendInitContext::require_named_data)).
    MissingNamedData {
        /// The backend id.
        backend: &'d str,
        /// The key it asked for.
        key: &'d str,
        /// The last data file searched (`None` when none was given).
        file: Option<&'d str>,
        /// `NoDataFiles` or `NotFound`.
        problem: ExternalDataProblem,
    },
    /// Fewer planned buffers than the method needs, or one too small.
    PlannedBuffer {
        /// Buffer index.
        index: usize,
        /// Bytes the method needs.
        required: usize,
        /// Bytes provided (0 when missing).
        provided: usize,
    },
}

/// Why an external tensor could not be bound ([`LoadDetail::ExternalData`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExternalDataProblem {
    /// The program was loaded without data files and does not hold the key itself.
    NoDataFiles,
    /// Neither the program nor any of the `searched` data files holds the key.
    NotFound {
        /// How many data files were searched.
        searched: usize,
    },
    /// The program's named-data entry for the key is malformed.
    Malformed,
    /// The blob is not the tensor's byte size.
    Size {
        /// Bytes the tensor takes.
        expected: usize,
        /// Bytes the blob holds.
        found: usize,
    },
    /// The data file's layout gives another dtype.
    Dtype {
        /// The tensor's dtype.
        expected: ScalarType,
        /// The data file's.
        found: ScalarType,
    },
    /// The data file's layout gives other sizes or another dim order.
    Shape,
}

/// Writes where external data came from: a data file by name, or the program.
struct Source<'d>(Option<&'d str>);

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(file) => write!(f, "data file {file}"),
            None => f.write_str("the program's named data"),
        }
    }
}

fn write_external(
    f: &mut fmt::Formatter<'_>,
    key: &str,
    file: Option<&str>,
    problem: ExternalDataProblem,
) -> fmt::Result {
    let source = Source(file);
    match problem {
        ExternalDataProblem::NoDataFiles => write!(
            f,
            "external tensor `{key}` needs its data from a .ptd data file, but none was given"
        ),
        ExternalDataProblem::NotFound { searched: 1 } => {
            write!(f, "external tensor `{key}` is not in {source}")
        }
        ExternalDataProblem::NotFound { searched } => write!(
            f,
            "external tensor `{key}` is in none of the {searched} data files (last searched: {source})"
        ),
        ExternalDataProblem::Malformed => {
            write!(f, "the named data entry `{key}` of {source} is malformed")
        }
        ExternalDataProblem::Size { expected, found } => write!(
            f,
            "external tensor `{key}` takes {expected} bytes but {source} holds {found} for it"
        ),
        ExternalDataProblem::Dtype { expected, found } => write!(
            f,
            "external tensor `{key}` is {expected} but {source} stores it as {found}"
        ),
        ExternalDataProblem::Shape => write!(
            f,
            "external tensor `{key}` has other sizes or another dim order than {source} records"
        ),
    }
}

impl From<Error> for LoadError<'_> {
    fn from(error: Error) -> Self {
        LoadError {
            error,
            detail: LoadDetail::None,
        }
    }
}

impl fmt::Display for LoadError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail {
            LoadDetail::None => write!(f, "{}", self.error),
            LoadDetail::NoSuchMethod => write!(f, "no method with that name: {}", self.error),
            LoadDetail::Value { index } => write!(f, "value {index} is malformed or does not fit: {}", self.error),
            LoadDetail::Instruction { index } => write!(f, "instruction {index} is malformed: {}", self.error),
            LoadDetail::MissingKernels { count, first_instruction, first_operator } => write!(
                f,
                "{count} kernel call(s) have no registered kernel (for their operator and dtypes), first {first_operator} at instruction {first_instruction}: {}",
                self.error
            ),
            LoadDetail::ArgumentCount { instruction, operator, expected, found } => write!(
                f,
                "instruction {instruction}: {operator} is called with {found} values but its kernel takes {expected}: {}",
                self.error
            ),
            LoadDetail::ArgumentKind { instruction, operator, position, expected, found } => write!(
                f,
                "instruction {instruction}: argument {position} of {operator} should be {} but the program passes a value of kind `{found}`: {}",
                expected.describe(),
                self.error
            ),
            LoadDetail::MissingBackend { id } => {
                write!(f, "backend {id} is not registered in this binary: {}", self.error)
            }
            LoadDetail::BackendInit { id, delegate, message, node } => {
                write!(f, "delegate {delegate} ({id})")?;
                if let Some(node) = node {
                    write!(f, ", node {} ({})", node.index, node.kind)?;
                }
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                write!(f, ": {}", self.error)
            }
            LoadDetail::ExternalData { key, file, problem } => {
                write_external(f, key, file, problem)?;
                write!(f, ": {}", self.error)
            }
            LoadDetail::MissingNamedData { backend, key, file, problem } => {
                write!(f, "backend {backend} needs named data `{key}`, ")?;
                match (problem, file) {
                    (ExternalDataProblem::NotFound { searched }, Some(file)) if searched > 1 => write!(
                        f,
                        "which neither the program nor any of the {searched} data files holds (last searched: {file})"
                    )?,
                    (_, Some(file)) => write!(f, "which neither the program nor data file {file} holds")?,
                    (_, None) => f.write_str("which the program does not hold, and no .ptd data file was given")?,
                }
                write!(f, ": {}", self.error)
            }
            LoadDetail::PlannedBuffer { index, required, provided } => write!(
                f,
                "planned buffer {index} needs {required} bytes but {provided} were provided: {}",
                self.error
            ),
        }
    }
}

impl core::error::Error for LoadError<'_> {}

/// Why `execute` failed: the code, the instruction, and the operator when it was a kernel.
#[derive(Clone, Copy, Debug)]
pub struct ExecuteError<'d> {
    /// ExecuTorch's error code.
    pub error: Error,
    /// The failing instruction (chains concatenated), if any.
    pub instruction: Option<usize>,
    /// The operator of a failing KernelCall (with the feature `messages`; without it
    /// always `None`, and `instruction` says which call failed).
    pub operator: Option<OperatorName<'d>>,
    /// The kernel's explanation (may be empty).
    pub message: &'static str,
}

impl fmt::Display for ExecuteError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.instruction {
            write!(f, "instruction {i}")?;
            if let Some(op) = self.operator {
                write!(f, " ({op})")?;
            }
            f.write_str(": ")?;
        }
        if !self.message.is_empty() {
            write!(f, "{}: ", self.message)?;
        }
        write!(f, "{}", self.error)
    }
}

impl core::error::Error for ExecuteError<'_> {}

impl<'d> From<Error> for ExecuteError<'d> {
    fn from(error: Error) -> Self {
        ExecuteError {
            error,
            instruction: None,
            operator: None,
            message: "",
        }
    }
}

/// Records `d` as the detail of a failure with code `error` (unless a more specific
/// detail was already recorded) and returns the code.
#[cfg(feature = "messages")]
#[cold]
#[inline(never)]
pub(crate) fn note<'a>(detail: &Cell<LoadDetail<'a>>, error: Error, d: LoadDetail<'a>) -> Error {
    if matches!(detail.get(), LoadDetail::None) {
        detail.set(d);
    }
    error
}

/// Without the feature `messages` a load error is its code alone: no detail is recorded.
#[cfg(not(feature = "messages"))]
#[inline(always)]
pub(crate) fn note<'a>(_detail: &Cell<LoadDetail<'a>>, error: Error, _d: LoadDetail<'a>) -> Error {
    error
}

/// A node of a delegate's payload, named in errors: its position and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRef {
    /// The node's index in the payload's execution order.
    pub index: u32,
    /// The node's kind as the payload names it (`Conv2d`).
    pub kind: &'static str,
}
