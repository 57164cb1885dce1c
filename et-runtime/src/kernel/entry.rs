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
/// Thirty-two bytes on 64-bit targets: the name (a thin pointer and a 16-bit length, so
/// that every binary's registry is a quarter smaller than with a `&str`), a precomputed
/// hash, the dtype key, the boxed function and a pointer to the argument-kind descriptor.
/// Built by [`KernelEntry::new`].
#[derive(Debug)]
pub struct KernelEntry {
    /// The start of the name's UTF-8 bytes ([`KernelEntry::name`]).
    name_start: *const u8,
    /// The name's length in bytes.
    name_len: u16,
    /// [`op_hash`] of the name, compared before the name itself.
    pub hash: u32,
    /// Which calls the entry serves.
    pub dtype: DtypeKey,
    /// The boxed wrapper.
    pub function: KernelFn,
    /// Declared parameters.
    pub signature: &'static KernelSignature,
}

// SAFETY: `name_start` points into a `&'static str` (set only by `new`), which every
// thread may read; the other fields are `Sync` and `Send` themselves.
unsafe impl Sync for KernelEntry {}
// SAFETY: as above.
unsafe impl Send for KernelEntry {}

impl KernelEntry {
    /// The entry registering `name` (`namespace::op.overload`, as in the program; at most
    /// 65,535 bytes, checked at compile time) for `dtype`, served by `function`.
    pub const fn new(
        name: &'static str,
        dtype: DtypeKey,
        function: KernelFn,
        signature: &'static KernelSignature,
    ) -> KernelEntry {
        assert!(name.len() <= u16::MAX as usize, "operator name too long");
        KernelEntry {
            name_start: name.as_ptr(),
            name_len: name.len() as u16,
            hash: op_hash(name),
            dtype,
            function,
            signature,
        }
    }

    /// `namespace::op.overload`, as in the program.
    #[inline]
    pub fn name(&self) -> &'static str {
        // SAFETY: `new` took the pointer and length from one `&'static str`, so they
        // describe valid UTF-8 that lives for the whole program.
        unsafe {
            core::str::from_utf8_unchecked(core::slice::from_raw_parts(
                self.name_start,
                self.name_len as usize,
            ))
        }
    }
}

/// The registry hash of an operator name: et-schema's, the one definition.
pub use et_schema::op_name::{op_hash, op_hash_parts};
