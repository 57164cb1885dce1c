//! The crate's error type.

use core::fmt;

/// Why a selection could not be built. Every variant says what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The YAML text is not a valid `selected_operators.yaml`: a syntax error, a value of
    /// the wrong type, an invalid operator name or kernel key. `message` is serde_yaml's,
    /// which names the key path (`et_kernel_metadata.aten::add.out[0]`) and the line and
    /// column.
    Yaml {
        /// What was wrong, with the key path and location.
        message: String,
        /// 1-based line and column of the problem, when known.
        location: Option<(usize, usize)>,
    },
    /// An operator name in an op list (or a kernel library entry) is malformed.
    InvalidOperatorName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An op list names no operator at all.
    EmptyOpList,
    /// A `.pte` file could not be read as an ExecuTorch program.
    Program {
        /// The label the caller gave the program (usually its path).
        label: String,
        /// What was wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn program(label: &str, message: impl Into<String>) -> Error {
        Error::Program {
            label: label.to_owned(),
            message: message.into(),
        }
    }
}

impl From<serde_yaml::Error> for Error {
    fn from(e: serde_yaml::Error) -> Error {
        Error::Yaml {
            message: e.to_string(),
            location: e.location().map(|l| (l.line(), l.column())),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Yaml { message, .. } => {
                write!(f, "invalid selected_operators.yaml: {message}")
            }
            Error::InvalidOperatorName { name, reason } => {
                write!(f, "invalid operator name `{name}`: {reason}")
            }
            Error::EmptyOpList => f.write_str(
                "the operator list is empty; expected names like `aten::add.out,aten::mm.out`",
            ),
            Error::Program { label, message } => {
                write!(f, "{label}: not a readable ExecuTorch program: {message}")
            }
        }
    }
}

impl std::error::Error for Error {}
