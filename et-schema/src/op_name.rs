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
    let mut h: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < name.len() {
        h = (h ^ name[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    if !overload.is_empty() {
        h = (h ^ b'.' as u32).wrapping_mul(0x0100_0193);
        let mut j = 0;
        while j < overload.len() {
            h = (h ^ overload[j] as u32).wrapping_mul(0x0100_0193);
            j += 1;
        }
    }
    h
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
}
