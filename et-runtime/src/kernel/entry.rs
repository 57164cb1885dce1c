//! What the registry holds: one [`KernelEntry`] per registered kernel, its calling
//! convention ([`KernelFn`]), the dtype it serves ([`DtypeKey`]) and its name
//! ([`KernelName`]: a [`Namespace`] id and the rest), kept together in its [`EntryKey`].

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

/// Every kernel in the binary. `#[kernel]` adds one const element per selected entry.
#[linkme::distributed_slice]
pub static KERNELS: [KernelEntry];

/// One registered kernel: an element of `et_runtime::__private::KERNELS`.
///
/// Twenty-four bytes on 64-bit targets, three pointers: the entry's [`EntryKey`] (what a
/// call is matched against: the name as a [`Namespace`] id and the rest of it, and the
/// dtype key), the boxed function and the argument-kind descriptor. The key's small
/// fields sit in front of the name's bytes rather than in the entry, where with the
/// name's length they would take a word of their own (the known namespaces' prefixes are
/// stored once, not once per kernel). Built
/// by [`KernelEntry::new`] from a key (what `#[kernel]` and the prim ops generate), or
/// with [`kernel_entry!`](crate::kernel_entry) from a full name.
pub struct KernelEntry {
    /// The start of a `'static` [`EntryKey`], taken from a reference to all of it (so
    /// it may read the name's bytes after the [`KeyHead`]).
    key: *const KeyHead,
    /// The boxed wrapper.
    pub function: KernelFn,
    /// Declared parameters.
    pub signature: &'static KernelSignature,
}

// SAFETY: `key` points into an `EntryKey` borrowed shared for `'static` (set only by
// `new`), which nothing writes and every thread may read; the other fields are `Sync` and
// `Send` themselves.
unsafe impl Sync for KernelEntry {}
// SAFETY: as above.
unsafe impl Send for KernelEntry {}

/// The fixed part of an [`EntryKey`], in front of the name's bytes.
#[repr(C)]
struct KeyHead {
    /// The length of the name's rest in bytes (at most 255, checked at compile time).
    rest_len: u8,
    /// The namespace the name starts with, or [`Namespace::OTHER`] if the rest is the
    /// whole name.
    namespace: Namespace,
    /// Which calls the entry serves.
    dtype: DtypeKey,
}

/// What a registry entry serves: the operator name [`Namespace::prefix`] followed by the
/// `N` bytes of its rest (`op.overload`), for calls of dtype key `dtype`. One `static`
/// per entry, which [`KernelEntry::new`] points at.
#[repr(C)]
pub struct EntryKey<const N: usize> {
    head: KeyHead,
    rest: [u8; N],
}

impl<const N: usize> EntryKey<N> {
    /// The key of `namespace`'s operator `rest` (`op.overload`, `N` bytes, at most 255)
    /// for `dtype`. With [`Namespace::OTHER`], `rest` is the whole name, which must not
    /// start with a known namespace: every name has one representation. All checked at
    /// compile time in a `static`.
    pub const fn new(namespace: Namespace, rest: &str, dtype: DtypeKey) -> EntryKey<N> {
        assert!(rest.len() == N, "the key's length is not the name's");
        assert!(N <= u8::MAX as usize, "operator name too long");
        assert!(
            namespace.is_known() || !Namespace::split(rest).0.is_known(),
            "a name in a known namespace is registered with that namespace"
        );
        let mut bytes = [0; N];
        bytes.copy_from_slice(rest.as_bytes());
        EntryKey {
            head: KeyHead {
                rest_len: N as u8,
                namespace,
                dtype,
            },
            rest: bytes,
        }
    }
}

impl<const N: usize> fmt::Debug for EntryKey<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntryKey")
            .field("namespace", &self.head.namespace)
            .field("rest", &core::str::from_utf8(&self.rest))
            .field("dtype", &self.head.dtype)
            .finish()
    }
}

/// A [`KernelEntry`] constant for the full operator name `$name`
/// (`namespace::op.overload`, as in the program; a known namespace is stored as its id),
/// dtype key `$dtype`, function `$function` and `&'static` signature `$signature`:
///
/// ```ignore
/// #[linkme::distributed_slice(et_runtime::__private::KERNELS)]
/// static MY_ADD: KernelEntry =
///     et_runtime::kernel_entry!("mylib::add.out", DtypeKey::FALLBACK, my_add, &MY_SIG);
/// ```
#[macro_export]
macro_rules! kernel_entry {
    ($name:expr, $dtype:expr, $function:expr, $signature:expr $(,)?) => {{
        const SPLIT: ($crate::__private::Namespace, &str) =
            $crate::__private::Namespace::split($name);
        static KEY: $crate::__private::EntryKey<{ SPLIT.1.len() }> =
            $crate::__private::EntryKey::new(SPLIT.0, SPLIT.1, $dtype);
        $crate::__private::KernelEntry::new(&KEY, $function, $signature)
    }};
}

impl KernelEntry {
    /// The entry serving the calls `key` names, with `function`.
    pub const fn new<const N: usize>(
        key: &'static EntryKey<N>,
        function: KernelFn,
        signature: &'static KernelSignature,
    ) -> KernelEntry {
        KernelEntry {
            key: (key as *const EntryKey<N>).cast::<KeyHead>(),
            function,
            signature,
        }
    }

    /// Which calls the entry serves, besides its name.
    #[inline]
    pub fn dtype(&self) -> DtypeKey {
        // SAFETY: `new` took `key` from a `&'static EntryKey<N>` (a shared borrow for the
        // whole program, so nothing writes it), which is `repr(C)` and starts with a
        // `KeyHead`. (Each field is read on its own: copying the 3-byte head whole took
        // shifts to assemble it.)
        unsafe { (*self.key).dtype }
    }

    /// `namespace::op.overload`, as in the program: compare it with a `&str`, print it
    /// with `Display`, or take its parts.
    #[inline]
    pub fn name(&self) -> KernelName {
        // SAFETY: `new` took `key` from a `&'static EntryKey<N>` (a shared borrow for the
        // whole program, whose provenance covers all of it), which is `repr(C)`: a
        // `KeyHead`, then the `rest_len == N` bytes of a `str` that `EntryKey::new` copied
        // (both have alignment 1, so no padding comes between them): valid UTF-8 that
        // nothing writes while the program runs.
        unsafe {
            let rest = core::slice::from_raw_parts(
                self.key.cast::<u8>().add(size_of::<KeyHead>()),
                (*self.key).rest_len as usize,
            );
            KernelName {
                namespace: (*self.key).namespace,
                rest: core::str::from_utf8_unchecked(rest),
            }
        }
    }

    /// [`op_hash`] of the full name: a compact key for tools (computed on demand; lookups
    /// compare the namespace id and the length, then the text ([`KernelName::is_parts`])).
    pub fn hash(&self) -> u32 {
        let name = self.name();
        op_hash_prefixed(name.namespace.prefix_bytes(), name.rest.as_bytes())
    }
}

impl fmt::Debug for KernelEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelEntry")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
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
/// [`EntryKey::new`]), so equal parts are equal names.
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
