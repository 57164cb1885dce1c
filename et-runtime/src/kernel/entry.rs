//! What the registry holds: one [`KernelEntry`] per registered kernel, its calling
//! convention ([`KernelFn`]), the dtype it serves ([`DtypeKey`]) and its name
//! ([`KernelName`]: a [`Namespace`] id and the rest) with that name's hash ([`op_hash`]).

use super::{KernelArgs, KernelContext, KernelSignature};
use crate::error::KernelResult;
use core::fmt;
use et_schema::op_name::op_hash_prefixed;
pub use et_schema::op_name::Namespace;
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
/// Thirty-two bytes on 64-bit targets: the name as a [`Namespace`] id and the rest of it
/// (a thin pointer and a 16-bit length, so that every binary's registry is a quarter
/// smaller than with a `&str`; the known namespaces' prefixes are stored once, not once
/// per kernel), a precomputed hash of the full name, the dtype key, the boxed function
/// and a pointer to the argument-kind descriptor. Built by [`KernelEntry::in_namespace`]
/// (what `#[kernel]` and the prim ops generate) or [`KernelEntry::new`].
pub struct KernelEntry {
    /// The start of the UTF-8 bytes after the namespace prefix ([`KernelName::rest`]).
    rest_start: *const u8,
    /// Their length in bytes.
    rest_len: u16,
    /// The namespace the name starts with, or [`Namespace::OTHER`] if the rest is the
    /// whole name.
    namespace: Namespace,
    /// [`op_hash`] of the full name: a compact key for tools (`registry::duplicates`).
    /// Lookups do not hash the program's name: they compare the namespace id and the
    /// length, then the text ([`KernelName::is_parts`]), which is less code.
    pub hash: u32,
    /// Which calls the entry serves.
    pub dtype: DtypeKey,
    /// The boxed wrapper.
    pub function: KernelFn,
    /// Declared parameters.
    pub signature: &'static KernelSignature,
}

// SAFETY: `rest_start` points into a `&'static str` (set only by `in_namespace`), which
// every thread may read; the other fields are `Sync` and `Send` themselves.
unsafe impl Sync for KernelEntry {}
// SAFETY: as above.
unsafe impl Send for KernelEntry {}

impl KernelEntry {
    /// The entry registering `name` (`namespace::op.overload`, as in the program) for
    /// `dtype`, served by `function`. A known namespace is split off at compile time, but
    /// the whole literal stays in the binary: generated entries use
    /// [`KernelEntry::in_namespace`] with the rest alone.
    pub const fn new(
        name: &'static str,
        dtype: DtypeKey,
        function: KernelFn,
        signature: &'static KernelSignature,
    ) -> KernelEntry {
        let (namespace, rest) = Namespace::split(name);
        KernelEntry::in_namespace(namespace, rest, dtype, function, signature)
    }

    /// The entry registering [`Namespace::prefix`] followed by `rest` (`op.overload`; at
    /// most 65,535 bytes, checked at compile time) for `dtype`, served by `function`.
    /// With [`Namespace::OTHER`], `rest` is the whole name, which must not start with a
    /// known namespace (checked at compile time): every name has one representation.
    pub const fn in_namespace(
        namespace: Namespace,
        rest: &'static str,
        dtype: DtypeKey,
        function: KernelFn,
        signature: &'static KernelSignature,
    ) -> KernelEntry {
        assert!(rest.len() <= u16::MAX as usize, "operator name too long");
        assert!(
            namespace.is_known() || !Namespace::split(rest).0.is_known(),
            "a name in a known namespace is registered with that namespace"
        );
        KernelEntry {
            rest_start: rest.as_ptr(),
            rest_len: rest.len() as u16,
            namespace,
            hash: op_hash_prefixed(namespace.prefix_bytes(), rest.as_bytes()),
            dtype,
            function,
            signature,
        }
    }

    /// `namespace::op.overload`, as in the program: compare it with a `&str`, print it
    /// with `Display`, or take its parts.
    #[inline]
    pub fn name(&self) -> KernelName {
        // SAFETY: `in_namespace` took the pointer and length from one `&'static str`, so
        // they describe valid UTF-8 that lives for the whole program.
        let rest = unsafe {
            core::str::from_utf8_unchecked(core::slice::from_raw_parts(
                self.rest_start,
                self.rest_len as usize,
            ))
        };
        KernelName {
            namespace: self.namespace,
            rest,
        }
    }
}

impl fmt::Debug for KernelEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelEntry")
            .field("name", &self.name())
            .field("hash", &self.hash)
            .field("dtype", &self.dtype)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

/// A registered kernel's full name, kept in two parts ([`KernelEntry::name`]): the
/// namespace's prefix and the rest. Equal to a `&str` holding the full name; `Display`
/// writes the full name.
#[derive(Clone, Copy)]
pub struct KernelName {
    namespace: Namespace,
    rest: &'static str,
}

impl KernelName {
    /// The namespace id ([`Namespace::OTHER`] when [`KernelName::rest`] is the whole
    /// name).
    pub fn namespace(self) -> Namespace {
        self.namespace
    }

    /// The name after the namespace's `::` (`add.out`), or the whole name for
    /// [`Namespace::OTHER`].
    pub fn rest(self) -> &'static str {
        self.rest
    }

    /// Whether this is `name` + `"."` + `overload` (or just `name` for an empty overload),
    /// the name split as the program stores it. No joining buffer: the program's name is
    /// split once into its namespace and the rest ([`Namespace::split_bytes`]) and
    /// compared with the stored parts ([`KernelName::is_parts`]).
    pub fn is_split(self, name: &str, overload: &str) -> bool {
        let (namespace, op) = Namespace::split_bytes(name.as_bytes());
        self.is_parts(namespace, op, overload.as_bytes())
    }

    /// Whether this is the name whose namespace is `namespace`, followed by `op` (the
    /// program's name after its namespace's `::`, [`Namespace::split_bytes`]), `"."` and
    /// `overload` (without the dot for an empty overload).
    ///
    /// The namespace id and the length are compared first: the registry runs this on
    /// every entry, and they turn nearly all of them away without comparing text.
    #[inline]
    pub fn is_parts(self, namespace: Namespace, op: &[u8], overload: &[u8]) -> bool {
        let rest = self.rest.as_bytes();
        let joined_len = match overload.len() {
            0 => op.len(),
            n => op.len() + 1 + n,
        };
        if self.namespace != namespace || rest.len() != joined_len {
            return false;
        }
        let Some((head, tail)) = rest.split_at_checked(op.len()) else {
            return false;
        };
        head == op
            && match tail {
                [] => true,
                [b'.', tail @ ..] => tail == overload,
                _ => false,
            }
    }
}

/// One name is stored one way: a known namespace is always split off (see
/// [`KernelEntry::in_namespace`]), so equal parts are equal names.
impl PartialEq for KernelName {
    fn eq(&self, other: &KernelName) -> bool {
        self.namespace == other.namespace && self.rest == other.rest
    }
}

impl Eq for KernelName {}

impl PartialEq<str> for KernelName {
    fn eq(&self, full: &str) -> bool {
        full.strip_prefix(self.namespace.prefix()) == Some(self.rest)
    }
}

impl PartialEq<&str> for KernelName {
    fn eq(&self, full: &&str) -> bool {
        *self == **full
    }
}

impl PartialEq<KernelName> for str {
    fn eq(&self, name: &KernelName) -> bool {
        *name == *self
    }
}

impl PartialEq<KernelName> for &str {
    fn eq(&self, name: &KernelName) -> bool {
        *name == **self
    }
}

impl fmt::Display for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace.prefix())?;
        f.write_str(self.rest)
    }
}

impl fmt::Debug for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// The registry hash of an operator name: et-schema's, the one definition.
pub use et_schema::op_name::op_hash;
