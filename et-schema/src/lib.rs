#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod error;
#[allow(
    missing_docs,
    non_upper_case_globals,
    reason = "generated: the names are flatc's, the docs are program.fbs's"
)]
#[rustfmt::skip]
pub mod fields;
#[cfg(any(test, feature = "flatbuffers"))]
pub mod generated;
pub mod header;
pub mod meta;
pub mod op_name;
pub mod program;
pub mod reader;
pub mod scalar_type;
mod verify;

pub use error::Error;
pub use header::{ExtendedHeader, ProgramError, Verification};
pub use meta::{KernelCallInfo, KernelKey, MethodMeta, ShapeDynamism, Tag, TensorInfo, MAX_DIM};
pub use op_name::{check_op_name, op_hash, OperatorName};
pub use program::ProgramView;
pub use scalar_type::{Bool, DtypeSet, Element, ScalarType};
pub use verify::{is_utf8, verify_program};
