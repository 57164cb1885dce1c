//! What the registry holds: one [`KernelEntry`] per registered kernel, its calling
//! convention ([`KernelFn`]), the dtype it serves ([`DtypeKey`]) and the name hash it is
//! found by ([`op_hash`]).

use super::{KernelArgs, KernelContext, KernelSignature};
use crate::error::KernelResult;
use et_schema::scalar_type::ScalarType;

/// The boxed calling convention every registered kernel has.
pub type KernelFn = for<'a, 'b> fn(&'b KernelContext<'a>, &'b KernelArgs<'a>) -> KernelResult;

/// Which calls an entry serves, besides its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DtypeKey(u8);

impl DtypeKey {
    /// Serves any call of its operator that no dtype-specific entry serves.
    pub const FALLBACK: DtypeKey = DtypeKey(u8::MAX);

    /// Serves calls whose tensor arguments all have dtype `t`.
    pub const fn of(t: ScalarType) -> DtypeKey {
        DtypeKey(t as u8)
    }

    /// The dtype, or `None` for the fallback.
    pub const fn dtype(self) -> Option<ScalarType> {
        ScalarType::from_i8(self.0 as i8)
    }
}

/// One registered kernel: an element of `et_runtime::__private::KERNELS`.
///
/// Forty bytes on 64-bit targets: the name, a precomputed hash, the dtype key, the boxed
/// function and a pointer to the argument-kind descriptor.
#[derive(Debug)]
pub struct KernelEntry {
    /// `namespace::op.overload`, as in the program.
    pub name: &'static str,
    /// [`op_hash`] of the name, compared before the name itself.
    pub hash: u32,
    /// Which calls the entry serves.
    pub dtype: DtypeKey,
    /// The boxed wrapper.
    pub function: KernelFn,
    /// Declared parameters.
    pub signature: &'static KernelSignature,
}

/// The registry hash of an operator name: et-schema's, the one definition.
pub use et_schema::op_name::{op_hash, op_hash_parts};
