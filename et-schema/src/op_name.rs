//! Operator names: ExecuTorch's grammar for them, and the registry hash.

use core::fmt;

/// One operator a method calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorName<'d> {
    /// `namespace::name`.
    pub name: &'d str,
    /// The overload (may be empty).
    pub overload: &'d str,
}

impl OperatorName<'_> {
    /// The registry hash of `name.overload`.
    pub fn hash(&self) -> u32 {
        op_hash_parts(self.name.as_bytes(), self.overload.as_bytes())
    }
}

impl fmt::Display for OperatorName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.overload.is_empty() {
            f.write_str(self.name)
        } else {
            write!(f, "{}.{}", self.name, self.overload)
        }
    }
}

/// FNV-1a over the operator name: cheap to compute at compile time and at load.
pub const fn op_hash(name: &str) -> u32 {
    op_hash_parts(name.as_bytes(), b"")
}

/// [`op_hash`] of `name` followed by `"."` and `overload` (when the overload is non-empty),
/// so the program's split name needs no joining buffer.
pub const fn op_hash_parts(name: &[u8], overload: &[u8]) -> u32 {
    let h = fnv_continue(FNV_BASIS, name);
    if overload.is_empty() {
        h
    } else {
        fnv_continue(fnv_continue(h, b"."), overload)
    }
}

/// [`op_hash`] of `prefix` followed by `rest`: the hash of a registry entry's full name
/// from the two parts it stores ([`Namespace::prefix`] and the rest).
pub const fn op_hash_prefixed(prefix: &[u8], rest: &[u8]) -> u32 {
    fnv_continue(fnv_continue(FNV_BASIS, prefix), rest)
}

/// FNV-1a's offset basis: the hash of no bytes.
const FNV_BASIS: u32 = 0x811c_9dc5;

/// FNV-1a of `bytes`, continued from hash `h`.
const fn fnv_continue(mut h: u32, bytes: &[u8]) -> u32 {
    let mut i = 0;
    while i < bytes.len() {
        h = (h ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}

/// The namespace of a registered operator name, as one byte.
///
/// Every binary carries the names of its kernels, and most of them share a few
/// namespaces (`aten::` on every portable kernel, `executorch_prim::` on most prim
/// ops), so the registry keeps the namespaces it knows as an id and only the rest of the
/// name as text. A name in any other namespace (a downstream `mylib::foo.out`) is kept
/// whole under [`Namespace::OTHER`], whose prefix is empty: either way the full name is
/// [`Namespace::prefix`] followed by the stored rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace(u8);

/// The known prefixes back to back, in id order from 1; [`PREFIX_LENS`] delimits them.
const PREFIXES: &[u8] = b"aten::executorch_prim::quantized_decomposed::dim_order_ops::";
/// The length of each known prefix in [`PREFIXES`] (id `i + 1`): one byte each instead
/// of a 16-byte slice per id.
const PREFIX_LENS: [u8; 4] = [6, 17, 22, 15];

impl Namespace {
    /// Any namespace not listed below: the entry keeps the whole name.
    pub const OTHER: Namespace = Namespace(0);
    /// `aten::`, the portable and quantized ATen operators.
    pub const ATEN: Namespace = Namespace(1);
    /// `executorch_prim::`, the prim ops.
    pub const EXECUTORCH_PRIM: Namespace = Namespace(2);
    /// `quantized_decomposed::`, the quantize/dequantize operators.
    pub const QUANTIZED_DECOMPOSED: Namespace = Namespace(3);
    /// `dim_order_ops::`, the dim-order copies.
    pub const DIM_ORDER_OPS: Namespace = Namespace(4);

    /// Whether this is a listed namespace, not [`Namespace::OTHER`].
    pub const fn is_known(self) -> bool {
        self.0 != Namespace::OTHER.0
    }

    /// The known namespace called `namespace` (without `::`), or `None`.
    pub const fn known(namespace: &str) -> Option<Namespace> {
        let namespace = namespace.as_bytes();
        let mut id = 1;
        while id <= PREFIX_LENS.len() {
            let prefix = Namespace(id as u8).prefix_bytes();
            // The prefix is the namespace and `::`.
            if prefix.len() == namespace.len() + 2 && starts_with(prefix, namespace) {
                return Some(Namespace(id as u8));
            }
            id += 1;
        }
        None
    }

    /// The known namespace called `namespace`, for constant registry entries: a name the
    /// table does not list fails to compile.
    pub const fn named(namespace: &str) -> Namespace {
        match Namespace::known(namespace) {
            Some(known) => known,
            None => panic!("not a known namespace: register the full name instead"),
        }
    }

    /// `full` as the registry stores it: its known namespace and the rest after `::`, or
    /// [`Namespace::OTHER`] and `full` itself.
    pub const fn split(full: &str) -> (Namespace, &str) {
        let (namespace, rest) = Namespace::split_bytes(full.as_bytes());
        // The prefix is ASCII, so the rest starts on a character boundary.
        match full.split_at_checked(full.len() - rest.len()) {
            Some((_, rest)) => (namespace, rest),
            None => (Namespace::OTHER, full),
        }
    }

    /// [`Namespace::split`] on bytes: how the registry splits a program's operator name,
    /// once per lookup, before comparing it with the entries' stored parts.
    pub const fn split_bytes(full: &[u8]) -> (Namespace, &[u8]) {
        // One walk over the packed prefixes (not `prefix_bytes` per id, which walks them
        // again for each, on every lookup).
        let mut table = PREFIXES;
        let mut i = 0;
        while i < PREFIX_LENS.len() {
            let Some((prefix, later)) = table.split_at_checked(PREFIX_LENS[i] as usize) else {
                break;
            };
            if starts_with(full, prefix) {
                if let Some((_, rest)) = full.split_at_checked(prefix.len()) {
                    return (Namespace(i as u8 + 1), rest);
                }
            }
            table = later;
            i += 1;
        }
        (Namespace::OTHER, full)
    }

    /// The namespace and `::` (`"aten::"`), empty for [`Namespace::OTHER`].
    pub const fn prefix(self) -> &'static str {
        match core::str::from_utf8(self.prefix_bytes()) {
            Ok(prefix) => prefix,
            Err(_) => "",
        }
    }

    /// [`Namespace::prefix`] as bytes.
    pub const fn prefix_bytes(self) -> &'static [u8] {
        let mut table = PREFIXES;
        let mut i = 0;
        while i < PREFIX_LENS.len() {
            let Some((prefix, later)) = table.split_at_checked(PREFIX_LENS[i] as usize) else {
                break;
            };
            if i + 1 == self.0 as usize {
                return prefix;
            }
            table = later;
            i += 1;
        }
        b""
    }
}

const fn starts_with(bytes: &[u8], prefix: &[u8]) -> bool {
    if bytes.len() < prefix.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if bytes[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Which part of `namespace::name.overload` an [`OpNameError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpNamePart {
    /// The namespace before `::`.
    Namespace,
    /// The operator name between `::` and `.`.
    Name,
    /// The overload after `.`.
    Overload,
}

impl OpNamePart {
    /// How messages name the part.
    pub const fn describe(self) -> &'static str {
        match self {
            OpNamePart::Namespace => "namespace",
            OpNamePart::Name => "operator name",
            OpNamePart::Overload => "overload",
        }
    }
}

/// What is wrong with an operator name (see [`check_op_name`]). `Display` says it in a
/// sentence; tools with their own wording (the `#[kernel]` macro) match on the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpNameError<'a> {
    /// The name is empty.
    Empty,
    /// The name contains this whitespace character.
    Whitespace(char),
    /// There is no `::`; the payload is the whole name.
    NoNamespace(&'a str),
    /// A part is empty.
    EmptyPart(OpNamePart),
    /// The namespace or the operator name (given) starts with a digit.
    StartsWithDigit(OpNamePart, &'a str),
    /// A part (given) contains a character other than ASCII letters, digits and `_`.
    BadChar(OpNamePart, &'a str, char),
}

impl fmt::Display for OpNameError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            OpNameError::Empty => f.write_str("the name is empty"),
            OpNameError::Whitespace(c) => write!(f, "it contains whitespace ({c:?})"),
            OpNameError::NoNamespace(name) => write!(
                f,
                "it has no namespace; operator names look like `aten::{name}`"
            ),
            OpNameError::EmptyPart(OpNamePart::Overload) => {
                f.write_str("the overload after `.` is empty")
            }
            OpNameError::EmptyPart(part) => write!(f, "the {} is empty", part.describe()),
            OpNameError::StartsWithDigit(part, text) => {
                write!(f, "the {} `{text}` starts with a digit", part.describe())
            }
            OpNameError::BadChar(part, text, c) => {
                write!(f, "the {} `{text}` contains {c:?}", part.describe())
            }
        }
    }
}

/// Checks an operator name as ExecuTorch spells it in a program, in
/// `selected_operators.yaml` and in `#[kernel("...")]`: `namespace::name` plus an optional
/// `.overload`, e.g. `aten::add.out`, `aten::copy_`, `executorch_prim::et_view.default`,
/// `dim_order_ops::_to_dim_order_copy.out`.
///
/// The namespace and the name are identifiers (ASCII letters, digits and `_`, not starting
/// with a digit); the overload, when present, is a non-empty run of ASCII letters, digits
/// and `_`. This is the one definition of the grammar: the selection files and the macro
/// both check names here.
pub fn check_op_name(name: &str) -> Result<(), OpNameError<'_>> {
    if name.is_empty() {
        return Err(OpNameError::Empty);
    }
    if let Some(c) = name.chars().find(|c| c.is_whitespace()) {
        return Err(OpNameError::Whitespace(c));
    }
    let Some((namespace, rest)) = name.split_once("::") else {
        return Err(OpNameError::NoNamespace(name));
    };
    check_identifier(namespace, OpNamePart::Namespace)?;
    let (base, overload) = match rest.split_once('.') {
        Some((base, overload)) => (base, Some(overload)),
        None => (rest, None),
    };
    check_identifier(base, OpNamePart::Name)?;
    if let Some(overload) = overload {
        if overload.is_empty() {
            return Err(OpNameError::EmptyPart(OpNamePart::Overload));
        }
        if let Some(c) = bad_char(overload) {
            return Err(OpNameError::BadChar(OpNamePart::Overload, overload, c));
        }
    }
    Ok(())
}

fn check_identifier(part: &str, which: OpNamePart) -> Result<(), OpNameError<'_>> {
    match part.chars().next() {
        None => return Err(OpNameError::EmptyPart(which)),
        Some(c) if c.is_ascii_digit() => return Err(OpNameError::StartsWithDigit(which, part)),
        _ => {}
    }
    match bad_char(part) {
        Some(c) => Err(OpNameError::BadChar(which, part, c)),
        None => Ok(()),
    }
}

fn bad_char(part: &str) -> Option<char> {
    part.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
}

/// The parts of `namespace::op.overload` (the overload may be absent); `None` without a
/// `::`. Assumes a name [`check_op_name`] accepts, or reports it elsewhere.
pub fn split_op_name(name: &str) -> Option<(&str, &str, Option<&str>)> {
    let (namespace, rest) = name.split_once("::")?;
    Some(match rest.split_once('.') {
        Some((op, overload)) => (namespace, op, Some(overload)),
        None => (namespace, rest, None),
    })
}

/// `aten::add.out` -> `aten::add`; a name without overload is returned unchanged.
pub fn strip_overload(name: &str) -> &str {
    match split_op_name(name) {
        Some((namespace, op, _)) => &name[..namespace.len() + 2 + op.len()],
        None => name.split('.').next().unwrap_or(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_real_names() {
        for n in [
            "aten::add.out",
            "aten::copy_",
            "aten::sum.IntList_out",
            "aten::_softmax.out",
            "aten::sym_size.int",
            "executorch_prim::et_view.default",
            "dim_order_ops::_to_dim_order_copy.out",
            "my_ops::mul3.out",
            "aten::__and__.Tensor",
        ] {
            assert_eq!(check_op_name(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        for (n, why) in [
            ("", "empty"),
            ("add.out", "no namespace"),
            ("::add.out", "namespace is empty"),
            ("aten::", "operator name is empty"),
            ("aten::add.", "overload after `.` is empty"),
            ("aten::add.o-ut", "contains '-'"),
            ("aten::add out", "whitespace"),
            ("at en::add", "whitespace"),
            ("aten::1add", "starts with a digit"),
            ("aten:add.out", "no namespace"),
            ("aten::add.out.x", "contains '.'"),
            ("a::b::c", "contains ':'"),
        ] {
            let err = std::string::ToString::to_string(&check_op_name(n).unwrap_err());
            assert!(err.contains(why), "{n}: {err}");
        }
    }

    #[test]
    fn op_name_parts() {
        assert_eq!(
            split_op_name("aten::add.out"),
            Some(("aten", "add", Some("out")))
        );
        assert_eq!(
            split_op_name("aten::sym_numel"),
            Some(("aten", "sym_numel", None))
        );
        assert_eq!(split_op_name("add.out"), None);
    }

    #[test]
    fn strips_overloads() {
        assert_eq!(strip_overload("aten::add.out"), "aten::add");
        assert_eq!(strip_overload("aten::copy_"), "aten::copy_");
        assert_eq!(strip_overload("add.out"), "add");
    }

    #[test]
    fn known_namespaces_split_off_and_others_stay_whole() {
        for (full, namespace, rest) in [
            ("aten::add.out", Namespace::ATEN, "add.out"),
            (
                "executorch_prim::et_view.default",
                Namespace::EXECUTORCH_PRIM,
                "et_view.default",
            ),
            (
                "quantized_decomposed::quantize_per_tensor.out",
                Namespace::QUANTIZED_DECOMPOSED,
                "quantize_per_tensor.out",
            ),
            (
                "dim_order_ops::_to_dim_order_copy.out",
                Namespace::DIM_ORDER_OPS,
                "_to_dim_order_copy.out",
            ),
            ("my_ops::mul3.out", Namespace::OTHER, "my_ops::mul3.out"),
            ("atenx::add.out", Namespace::OTHER, "atenx::add.out"),
            ("aten:add.out", Namespace::OTHER, "aten:add.out"),
        ] {
            assert_eq!(Namespace::split(full), (namespace, rest), "{full}");
            let joined = std::format!("{}{rest}", namespace.prefix());
            assert_eq!(joined, full);
            assert_eq!(
                op_hash_prefixed(namespace.prefix_bytes(), rest.as_bytes()),
                op_hash(full)
            );
            assert_eq!(namespace.is_known(), namespace != Namespace::OTHER);
        }
        assert_eq!(Namespace::known("aten"), Some(Namespace::ATEN));
        assert_eq!(
            Namespace::known("dim_order_ops"),
            Some(Namespace::DIM_ORDER_OPS)
        );
        assert_eq!(Namespace::known("ate"), None);
        assert_eq!(Namespace::known("aten::"), None);
        assert_eq!(Namespace::known(""), None);
        assert_eq!(Namespace::OTHER.prefix(), "");
        assert_eq!(Namespace(200).prefix(), "");
    }
}
