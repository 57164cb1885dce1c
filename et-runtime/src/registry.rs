//! The kernel registry: one link-time collected slice, searched once per operator at load.

use crate::kernel::{DtypeKey, KernelEntry};
use crate::program::{KernelKey, OperatorName};
use crate::scalar_type::{DtypeSet, ScalarType};

/// Every kernel linked into this binary, in link order (prim ops included).
pub fn kernels() -> &'static [KernelEntry] {
    &crate::__private::KERNELS
}

/// Finds the kernel for a call of `name` (split as the program stores it: `name` and
/// `overload`) whose tensor arguments all have dtype `dtype` (`None` when they differ or
/// there are none): an entry for that dtype first, then the fallback. The first matching
/// entry in link order wins, so duplicates resolve deterministically.
pub fn find_kernel(
    name: &str,
    overload: &str,
    dtype: Option<ScalarType>,
) -> Option<&'static KernelEntry> {
    let hash = crate::kernel::op_hash_parts(name.as_bytes(), overload.as_bytes());
    let mut fallback = None;
    for entry in kernels() {
        if entry.hash != hash || !name_matches(entry.name, name, overload) {
            continue;
        }
        if entry.dtype == DtypeKey::FALLBACK {
            if fallback.is_none() {
                fallback = Some(entry);
            }
        } else if dtype.is_some() && entry.dtype.dtype() == dtype {
            return Some(entry);
        }
    }
    fallback
}

/// Finds the kernel serving a call with kernel key `key`: an entry registered for the
/// dtype all its tensors share, else a fallback compiled for every dtype in the key.
pub fn resolve_kernel(
    operator: &OperatorName<'_>,
    key: &KernelKey<'_>,
) -> Option<&'static KernelEntry> {
    resolve_kernel_masked(operator, key.common_dtype(), key.dtype_mask())
}

pub(crate) fn resolve_kernel_masked(
    operator: &OperatorName<'_>,
    common: Option<ScalarType>,
    mask: DtypeSet,
) -> Option<&'static KernelEntry> {
    let (name, overload) = (operator.name, operator.overload);
    let hash = crate::kernel::op_hash_parts(name.as_bytes(), overload.as_bytes());
    let mut fallback = None;
    for entry in kernels() {
        if entry.hash != hash || !name_matches(entry.name, name, overload) {
            continue;
        }
        if entry.dtype == DtypeKey::FALLBACK {
            let covers = entry.signature.dtypes.0 & mask.0 == mask.0;
            if covers && fallback.is_none() {
                fallback = Some(entry);
            }
        } else if common.is_some() && entry.dtype.dtype() == common {
            return Some(entry);
        }
    }
    fallback
}

/// True if any kernel (of any dtype) is registered under this name.
pub fn has_operator(name: &str, overload: &str) -> bool {
    let hash = crate::kernel::op_hash_parts(name.as_bytes(), overload.as_bytes());
    kernels()
        .iter()
        .any(|e| e.hash == hash && name_matches(e.name, name, overload))
}

/// Whether `full` equals `name` + "." + `overload` (or just `name` for an empty overload).
pub(crate) fn name_matches(full: &str, name: &str, overload: &str) -> bool {
    let full = full.as_bytes();
    let (n, o) = (name.as_bytes(), overload.as_bytes());
    if o.is_empty() {
        return full == n;
    }
    full.len() == n.len() + 1 + o.len()
        && full.starts_with(n)
        && full.ends_with(o)
        && full.get(n.len()) == Some(&b'.')
}

/// Pairs of entries registered twice (same name and dtype key), for diagnostics.
pub fn duplicates() -> impl Iterator<Item = (&'static KernelEntry, &'static KernelEntry)> {
    let all = kernels();
    all.iter().enumerate().flat_map(move |(i, a)| {
        all[i + 1..]
            .iter()
            .filter(move |b| a.hash == b.hash && a.dtype == b.dtype && a.name == b.name)
            .map(move |b| (a, b))
    })
}
