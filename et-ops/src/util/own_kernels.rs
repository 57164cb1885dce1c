//! This crate's own kernels, as the load-time rewrite rules find them: a rule rewrites
//! only calls whose kernels' behaviour it knows, so it compares a call's kernel with
//! this crate's entry of the operator (a downstream crate's kernel of the same name is
//! never rewritten).

use et_runtime::registry::{kernels, KernelEntry, Namespace};

/// This crate's entry of `aten::<rest>` (`rest`: `"mm.out"`), if the build keeps one.
pub(crate) fn own_aten_kernel(rest: &str) -> Option<&'static KernelEntry> {
    kernels().iter().find(|e| is_own_aten(e, rest))
}

/// Whether `e` is this crate's entry of `aten::<rest>`.
pub(crate) fn is_own_aten(e: &KernelEntry, rest: &str) -> bool {
    let name = e.name();
    // The cheap comparisons first: callers scan every registered kernel.
    name.namespace() == Namespace::ATEN
        && name.rest() == rest
        && *e.signature.crate_name == *env!("CARGO_PKG_NAME")
}
