#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod bundled;
pub mod error;
/// Field offsets and enums of program.fbs (the `.pte` schema), derived from flatc's output.
#[allow(
    missing_docs,
    non_upper_case_globals,
    reason = "generated: the names are flatc's, the docs are program.fbs's"
)]
#[rustfmt::skip]
#[path = "program_fields.rs"]
pub mod fields;
/// Field offsets and enums of etdump.fbs (ETDump profiles, `.etdp`), derived from
/// flatc's output: what the runtime's ETDump writer lays its tables out by.
#[allow(
    missing_docs,
    non_upper_case_globals,
    reason = "generated: the names are flatc's, the docs are etdump.fbs's"
)]
#[rustfmt::skip]
pub mod etdump_fields;
pub mod flat_tensor;
/// Field offsets and enums of flat_tensor.fbs (the `.ptd` schema), derived from flatc's
/// output.
#[allow(
    missing_docs,
    non_upper_case_globals,
    reason = "generated: the names are flatc's, the docs are flat_tensor.fbs's"
)]
#[rustfmt::skip]
pub mod flat_tensor_fields;
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
pub use program::{DelegateEntry, PayloadLocation, ProgramView};
pub use scalar_type::{Bool, DtypeSet, Element, ScalarType};
pub use verify::{is_utf8, verify_flat_tensor, verify_program};
