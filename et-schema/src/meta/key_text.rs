//! The text form of ExecuTorch's kernel keys, as `et_kernel_metadata` and `gen_oplist`
//! write them: `default`, or `v1/` followed by `dtype;dim_order` for each tensor argument,
//! joined with `|` (`v1/6;0,1|4;0|6;`). Both directions live here: [`write_entry`] for
//! writers (the program's [`KernelKey`](super::KernelKey), selection files) and
//! [`KeyText::parse`] for readers.

use core::fmt;

use crate::scalar_type::ScalarType;

/// The key of a kernel that serves any dtype and dim order.
pub const DEFAULT_KEY: &str = "default";

/// Writes one tensor entry, `dtype;d0,d1,...`, preceded by `v<version>/` for the first
/// entry and `|` for the others.
pub fn write_entry(
    f: &mut dyn fmt::Write,
    version: u32,
    index: usize,
    dtype: u8,
    dim_order: impl IntoIterator<Item = u64>,
) -> fmt::Result {
    if index == 0 {
        write!(f, "v{version}/")?;
    } else {
        f.write_str("|")?;
    }
    write!(f, "{dtype};")?;
    for (k, d) in dim_order.into_iter().enumerate() {
        if k > 0 {
            f.write_str(",")?;
        }
        write!(f, "{d}")?;
    }
    Ok(())
}

/// A kernel key's text, checked against the grammar; its entries are read lazily
/// ([`KeyText::entries`]), so parsing allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyText<'a> {
    /// `default`.
    Default,
    /// `v<version>` with the text after `/` (empty when there are no entries).
    Specialized {
        /// The format version (ExecuTorch writes 1).
        version: u32,
        /// `dtype;dim_order|...`, each entry already checked.
        entries: &'a str,
    },
}

/// One tensor entry: its dtype and dim order (a `,`-separated list of `u8`s, checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyEntry<'a> {
    /// The element type.
    pub dtype: ScalarType,
    dims: &'a str,
}

impl<'a> KeyEntry<'a> {
    /// The dim order.
    pub fn dim_order(&self) -> impl Iterator<Item = u8> + 'a {
        self.dims
            .split(',')
            .filter(|d| !d.is_empty())
            .filter_map(|d| d.parse().ok())
    }
}

/// What is wrong with a kernel key's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyTextError<'a> {
    /// Neither `default` nor `v...`.
    NotAKey,
    /// The version after `v` (given) is not a number.
    BadVersion(&'a str),
    /// Tensor entry `index` (given) is malformed.
    Entry {
        /// 0-based position among the entries.
        index: usize,
        /// The entry's text.
        entry: &'a str,
        /// What is wrong with it.
        problem: EntryProblem<'a>,
    },
}

/// What is wrong with one tensor entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryProblem<'a> {
    /// No `;` between dtype and dim order.
    NoSemicolon,
    /// The dtype (given) is not a number.
    DtypeNotANumber(&'a str),
    /// The dtype number is not a scalar type ExecuTorch's runtime accepts.
    UnknownDtype(u32),
    /// A dim-order entry (given) is not a number in 0..=255.
    BadDim(&'a str),
}

impl fmt::Display for KeyTextError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KeyTextError::NotAKey => {
                f.write_str("expected `default` or a key like `v1/6;0,1|6;0,1`")
            }
            KeyTextError::BadVersion(v) => {
                write!(f, "the version `v{v}` is not `v` followed by a number")
            }
            KeyTextError::Entry {
                index,
                entry,
                problem,
            } => {
                write!(f, "tensor entry {index} (`{entry}`): ")?;
                match problem {
                    EntryProblem::NoSemicolon => f.write_str("expected `dtype;dim_order`"),
                    EntryProblem::DtypeNotANumber(d) => write!(f, "dtype `{d}` is not a number"),
                    EntryProblem::UnknownDtype(n) => {
                        write!(f, "dtype {n} is not an ExecuTorch scalar type (0..=29)")
                    }
                    EntryProblem::BadDim(d) => {
                        write!(f, "dim order entry `{d}` is not a number in 0..=255")
                    }
                }
            }
        }
    }
}

impl<'a> KeyText<'a> {
    /// Checks `text` against the grammar. `v1/` with no entries reads as a key without
    /// tensors (`gen_oplist` writes it as `v1`).
    pub fn parse(text: &'a str) -> Result<KeyText<'a>, KeyTextError<'a>> {
        if text == DEFAULT_KEY {
            return Ok(KeyText::Default);
        }
        let after_v = text.strip_prefix('v').ok_or(KeyTextError::NotAKey)?;
        let (version, entries) = after_v.split_once('/').unwrap_or((after_v, ""));
        let version = decimal(version).ok_or(KeyTextError::BadVersion(version))?;
        let key = KeyText::Specialized { version, entries };
        for (index, entry) in key.raw_entries().enumerate() {
            let problem = match parse_entry(entry) {
                Ok(_) => continue,
                Err(problem) => problem,
            };
            return Err(KeyTextError::Entry {
                index,
                entry,
                problem,
            });
        }
        Ok(key)
    }

    fn raw_entries(&self) -> impl Iterator<Item = &'a str> {
        let entries = match *self {
            KeyText::Specialized { entries, .. } if !entries.is_empty() => Some(entries),
            _ => None,
        };
        entries.into_iter().flat_map(|e| e.split('|'))
    }

    /// The tensor entries, in argument order (none for `default`).
    pub fn entries(&self) -> impl Iterator<Item = KeyEntry<'a>> {
        self.raw_entries().filter_map(|e| parse_entry(e).ok())
    }
}

fn parse_entry(entry: &str) -> Result<KeyEntry<'_>, EntryProblem<'_>> {
    let (dtype, dims) = entry.split_once(';').ok_or(EntryProblem::NoSemicolon)?;
    let number = decimal(dtype).ok_or(EntryProblem::DtypeNotANumber(dtype))?;
    let dtype = i8::try_from(number)
        .ok()
        .and_then(ScalarType::from_i8)
        .ok_or(EntryProblem::UnknownDtype(number))?;
    if !dims.is_empty() {
        if let Some(bad) = dims
            .split(',')
            .find(|d| decimal(d).and_then(|v| u8::try_from(v).ok()).is_none())
        {
            return Err(EntryProblem::BadDim(bad));
        }
    }
    Ok(KeyEntry { dtype, dims })
}

/// A non-empty run of ASCII digits (no sign, no spaces), as a number.
fn decimal(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}
