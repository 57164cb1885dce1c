//! The primitive operators ExecuTorch always registers: symbolic-shape arithmetic on
//! scalars, `sym_size`/`sym_numel`, `_local_scalar_dense`, `et_view` and
//! `et_copy_index`. They live in the same registry slice as library kernels.
//!
//! Size matters more than anything here, since every binary carries all of them: the
//! ops with a scalar result (`_local_scalar_dense` too) share one interpreter
//! (`interpreter`) and each registered function is a two-instruction thunk naming its
//! operation (`thunks`), so argument unboxing and result boxing exist once. `et_view` and
//! `et_copy_index` are ordinary kernels (`tensor`).

mod interpreter;
mod tensor;
mod thunks;

#[cfg(test)]
mod tests;

pub(crate) use tensor::ET_VIEW;

/// Registers prim op `$namespace::$rest` as the fallback entry `$id`, served by `$f`.
/// The namespace is stored as its id, so only `$rest` is text in the binary.
macro_rules! prim {
    ($id:ident, $namespace:ident :: $rest:literal, $sig:expr, $f:path) => {
        #[linkme::distributed_slice(crate::__private::KERNELS)]
        #[linkme(crate = linkme)]
        pub(crate) static $id: crate::kernel::KernelEntry = crate::kernel::KernelEntry::new(
            {
                static KEY: crate::kernel::EntryKey<{ $rest.len() }> = crate::kernel::EntryKey::new(
                    crate::kernel::Namespace::named(stringify!($namespace)),
                    $rest,
                    crate::kernel::DtypeKey::FALLBACK,
                );
                &KEY
            },
            $f,
            $sig,
        );
    };
}
use prim;

/// The signatures prim ops share (one static each, however many entries use it).
///
/// Every scalar result is declared `Scalar`, whether the op writes an int, a double or a
/// bool: the declared return kind only matters to the load-time check when it is
/// `Outs`, so one signature per parameter list serves every op that takes those
/// parameters (every signature is data in every binary).
macro_rules! signatures {
    ($($vis:vis $sig:ident: [$($kind:ident),*] -> $ret:ident;)*) => {$(
        $vis static $sig: crate::kernel::KernelSignature = crate::kernel::KernelSignature {
            args: &[$(crate::kernel::ArgKind::$kind),*],
            returns: crate::kernel::ReturnKind::$ret,
            crate_name: crate::kernel::CrateName(&"et-runtime"),
            dtypes: et_schema::scalar_type::DtypeSet::ALL,
        };
    )*};
}
use signatures;
