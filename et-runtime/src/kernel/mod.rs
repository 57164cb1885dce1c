//! The kernel calling convention, by concern:
//!
//! - [`signature`]: what a kernel declares about its parameters ([`ArgKind`],
//!   [`ReturnKind`], [`KernelSignature`]) and the check `load_method` runs on each
//!   KernelCall against it;
//! - [`args`]: how a generated wrapper reads a call's values ([`KernelArgs`]), and
//!   [`outs`]: how it borrows the out tensors mutably ([`TensorListMut`]) without aliasing;
//! - [`context`]: what a kernel may use besides its arguments ([`KernelContext`]), and
//!   [`parallel`]: splitting its work over the caller's pool ([`Parallel`]);
//! - [`entry`]: what the registry holds ([`KernelEntry`], [`KernelFn`], [`DtypeKey`],
//!   [`op_hash`]);
//! - `direct` (with `alloc`): calling an entry on hand-built arguments, for tests.
//!
//! Nothing here knows about methods or programs: `method` builds on these types, not the
//! other way round.

mod args;
mod context;
#[cfg(feature = "alloc")]
mod direct;
mod entry;
mod outs;
mod parallel;
mod pool;
mod signature;

pub use args::KernelArgs;
pub(crate) use args::ALIAS_PROOFS;
pub use context::{KernelContext, StepStart};
#[cfg(feature = "alloc")]
pub use direct::{call_entry, CallArg};
pub use entry::{
    op_hash, DtypeKey, EntryKey, KernelEntry, KernelFn, KernelName, Namespace, KERNELS,
};
pub use outs::TensorListMut;
pub use pool::Parallel;
pub(crate) use signature::Mismatch;
pub use signature::{ArgKind, CrateName, KernelSignature, ReturnKind};
