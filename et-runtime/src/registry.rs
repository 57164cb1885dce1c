//! The kernel registry: one link-time collected slice, and one rule for which entry
//! serves a call (`resolve`), shared by `load_method` and every introspection function
//! ([`find_kernel`], [`resolve_kernel`], [`missing_kernels`]), so what the tools
//! report is what loading does.
//!
//! An entry's name is stored as a [`Namespace`] id and the rest ([`KernelEntry::name`]
//! gives it back as a [`KernelName`], printed and compared in full): the known
//! namespaces' prefixes exist once per binary instead of once per kernel. A lookup
//! splits the program's name once into its namespace and the rest, then compares each
//! entry's namespace id and name length, and the text only where both agree (no hash of
//! the program's name: that was more code than it saved time, since `load_method`
//! resolves each distinct operator once).

use crate::program::{KernelCallInfo, KernelKey, MethodMeta, OperatorName};
use et_schema::scalar_type::{DtypeSet, ScalarType};

#[cfg(feature = "alloc")]
pub use crate::kernel::{call_entry, CallArg};
pub use crate::kernel::{
    op_hash, ArgKind, CrateName, DtypeKey, KernelEntry, KernelFn, KernelName, KernelSignature,
    Namespace, ReturnKind, KERNELS,
};

/// Every kernel linked into this binary, in link order (prim ops included).
pub fn kernels() -> &'static [KernelEntry] {
    &KERNELS
}

/// The tensor dtypes of one call, as far as kernel resolution cares.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallDtypes {
    /// The dtype every tensor argument has (`None` when they differ or there are none):
    /// the key of a dtype-specific entry.
    pub(crate) common: Option<ScalarType>,
    /// Every dtype among the tensor arguments: a fallback entry must have been compiled
    /// for all of them (`KernelSignature::dtypes`).
    pub(crate) all: DtypeSet,
}

impl CallDtypes {
    /// A call whose tensors all have `dtype`; `None` claims nothing about the dtypes.
    pub(crate) fn uniform(dtype: Option<ScalarType>) -> CallDtypes {
        CallDtypes {
            common: dtype,
            all: dtype.map_or(DtypeSet::EMPTY, |d| DtypeSet::EMPTY.with(d)),
        }
    }

    /// The dtypes of a call as the program exported it.
    pub(crate) fn of_key(key: &KernelKey<'_>) -> CallDtypes {
        CallDtypes {
            common: key.common_dtype(),
            all: key.dtype_mask(),
        }
    }
}

/// The entry serving a call of `operator` with tensor dtypes `dtypes`: the first entry
/// (in link order, so duplicates resolve deterministically) registered for the common
/// dtype, else the first fallback compiled for every dtype of the call. A fallback
/// compiled for fewer dtypes would only fail at execute, so it does not count.
///
/// Out of line: `load_method` calls it once per distinct operator (its cache does the
/// rest), so the instruction decoder's loop stays small whatever the inliner decides.
#[cfg_attr(not(etch_size_first), inline(never))]
pub(crate) fn resolve(
    operator: &OperatorName<'_>,
    dtypes: CallDtypes,
) -> Option<&'static KernelEntry> {
    let mut fallback = None;
    for entry in named(operator.name, operator.overload) {
        let dtype = entry.dtype();
        if dtype == DtypeKey::FALLBACK {
            let covers = entry.signature.dtypes.0 & dtypes.all.0 == dtypes.all.0;
            if covers && fallback.is_none() {
                fallback = Some(entry);
            }
        } else if dtypes.common.is_some() && dtype.dtype() == dtypes.common {
            return Some(entry);
        }
    }
    fallback
}

/// The entries registered under `name.overload` (the name split as the program stores
/// it), whatever their dtype.
fn named<'n>(name: &'n str, overload: &'n str) -> impl Iterator<Item = &'static KernelEntry> + 'n {
    let (namespace, op) = Namespace::split_bytes(name.as_bytes());
    kernels()
        .iter()
        .filter(move |e| e.name().is_parts(namespace, op, overload.as_bytes()))
}

/// Finds the kernel for a call of `name` (split as the program stores it: `name` and
/// `overload`) whose tensor arguments all have dtype `dtype` (`None` when they differ or
/// there are none): an entry for that dtype first, then a fallback compiled for that
/// dtype: the rule `load_method` applies.
pub fn find_kernel(
    name: &str,
    overload: &str,
    dtype: Option<ScalarType>,
) -> Option<&'static KernelEntry> {
    resolve(&OperatorName { name, overload }, CallDtypes::uniform(dtype))
}

/// Finds the kernel serving a call with kernel key `key`: an entry registered for the
/// dtype all its tensors share, else a fallback compiled for every dtype in the key.
pub fn resolve_kernel(
    operator: &OperatorName<'_>,
    key: &KernelKey<'_>,
) -> Option<&'static KernelEntry> {
    resolve(operator, CallDtypes::of_key(key))
}

/// True if any kernel (of any dtype) is registered under this name.
pub fn has_operator(name: &str, overload: &str) -> bool {
    named(name, overload).next().is_some()
}

/// Pairs of entries registered twice (same name and dtype key), for diagnostics.
pub fn duplicates() -> impl Iterator<Item = (&'static KernelEntry, &'static KernelEntry)> {
    let all = kernels();
    all.iter().enumerate().flat_map(move |(i, a)| {
        all[i + 1..]
            .iter()
            .filter(move |b| a.dtype() == b.dtype() && a.name() == b.name())
            .map(move |b| (a, b))
    })
}

/// Kernel calls of `meta` that no kernel registered in this binary serves (by name and
/// dtype key), each with its kernel key: what `load_method` would report as missing.
pub fn missing_kernels<'m, 'd>(
    meta: &'m MethodMeta<'d>,
) -> impl Iterator<Item = KernelCallInfo<'d>> + 'm {
    meta.kernel_calls()
        .filter_map(|c| c.ok())
        .filter(|c| resolve_kernel(&c.operator, &c.key).is_none())
}

#[cfg(test)]
mod tests {
    use super::{kernels, KernelEntry, KernelName};

    fn name_of(full: &str) -> KernelName {
        kernels()
            .iter()
            .map(KernelEntry::name)
            .find(|n| *n == full)
            .unwrap()
    }

    #[test]
    fn a_name_matches_only_its_own_overload() {
        let add = name_of("executorch_prim::add.Scalar");
        assert!(add.is_split("executorch_prim::add", "Scalar"));
        assert!(!add.is_split("executorch_prim::add", ""));
        assert!(!add.is_split("executorch_prim::add", "Scala"));
        assert!(!add.is_split("executorch_prim::add", "Scalars"));
        assert!(!add.is_split("executorch_prim::ad", "Scalar"));
        // The full name with no overload is the same text, as ExecuTorch joins them.
        assert!(add.is_split("executorch_prim::add.Scalar", ""));
        assert!(!add.is_split("aten::add", "Scalar"));
        assert!(!add.is_split("add", "Scalar"));
        assert!(!add.is_split("executorch_prim:add", "Scalar"));
        let numel = name_of("aten::sym_numel");
        assert!(numel.is_split("aten::sym_numel", ""));
        assert!(!numel.is_split("aten::sym_numel", "int"));
        assert!(!numel.is_split("aten::sym_nume", ""));
        assert!(!numel.is_split("aten::sym_numel_", ""));
    }

    #[test]
    fn names_keep_known_namespaces_as_ids_and_print_in_full() {
        let add = name_of("executorch_prim::add.Scalar");
        assert_eq!(add.namespace(), super::Namespace::EXECUTORCH_PRIM);
        assert_eq!(add.rest(), "add.Scalar");
        assert_eq!(std::format!("{add}"), "executorch_prim::add.Scalar");
        assert_eq!(std::format!("{add:?}"), "\"executorch_prim::add.Scalar\"");
        assert!(add != "add.Scalar");
        assert!(add != "aten::add.Scalar");
        assert!(add != name_of("executorch_prim::sub.Scalar"));
    }

    #[test]
    fn entry_hashes_are_the_full_names() {
        for e in kernels() {
            assert_eq!(e.hash(), super::op_hash(&std::format!("{}", e.name())));
        }
    }
}
