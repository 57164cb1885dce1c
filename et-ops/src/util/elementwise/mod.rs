//! Elementwise machinery, written once: broadcasting, a strided walker over any dim
//! orders, the compute-type arithmetic, and the unary / binary / ternary drivers.
//!
//! # How an elementwise kernel runs
//!
//! A kernel picks the operator's result dtype with [`promote`](crate::util::promote),
//! switches once over the *compute* type `C` (int64, float32 or float64, see
//! [`compute_dtype`]) and hands a closure over `C` to
//! [`unary`], [`binary`] or [`ternary`]:
//!
//! ```ignore
//! let common = promote::result_type(a, b)?;
//! et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
//!     let alpha = C::from_scalar(alpha);
//!     binary::<C, C, Sel>(a, b, out, common, move |x, y| x.add(y.mul(alpha)))
//! })
//! ```
//!
//! The driver takes one of two paths:
//!
//! * **Fast path**: every input has the result dtype `T` and the same sizes and strides
//!   (so the same memory order), and `out` has dtype `T` (or the closure's result type,
//!   e.g. bool for comparisons) and that layout after resizing. One flat loop loads `T`,
//!   computes in `C` and stores; the compiler vectorizes it. It is checked first, in few
//!   instructions, since tiny tensors make the per-call cost visible (a one-element f32
//!   add costs ~15 ns). This is the only code instantiated per storage dtype.
//! * **General path**: broadcasting, mixed dtypes, mixed dim orders, out dtypes other than
//!   the result's. It checks that the result may be cast to `out`'s dtype, resizes `out`
//!   to the broadcast shape, and a [`Walk`] visits `out` in memory order as runs along the
//!   innermost (coalesced) dim. Each run is processed in chunks of [`CHUNK`] elements:
//!   every input is converted into a `C` buffer by a per-dtype gather function, the
//!   closure fills a result buffer, and a per-dtype store function converts it into `out`.
//!   Inputs already of type `C` with unit stride are read in place, and results of `out`'s
//!   own type are written in place. The conversion functions are picked once per call
//!   through function pointers (no nested switch over dtype pairs), and the walk itself is
//!   shared by all operators: it calls the operator's chunk loop through a `dyn` pointer,
//!   so an operator adds only that loop to the binary.
//!
//! Inputs are converted to the result dtype before computing (PyTorch's TensorIterator
//! does the same), so `uint8 [n] < int64 0-dim` compares against the scalar wrapped to
//! uint8. When `out`'s dtype differs from the result dtype, results are first rounded to
//! the result dtype (float16 results stored into a float32 `out` are float16 values).
//!
//! Selective builds: the `Sel` parameter is the calling kernel's selection parameter (the
//! `DtypeSelection` type `#[kernel]` instantiates); only selected dtypes get gather, store
//! and fast-path code.
//!
//! The [`Compute`](crate::util::element::Compute) methods have names that no inherent
//! method of `i64`/`f32`/`f64` uses, so closures in a concrete `et_switch!` arm resolve to
//! them and not to a panicking or `std`-only inherent method. Call
//! [`Float`](crate::util::element::Float) functions with a path (`Float::exp`), for the
//! same reason.

use et_runtime::{DtypeSet, ScalarType};

use crate::util::promote::compute_dtype;

/// Elements per chunk of the general path (each buffer lives on the stack).
pub const CHUNK: usize = 64;

/// The dtypes whose compute type is `compute` (see
/// [`compute_dtype`]), within `sel`.
pub const fn storage_set(compute: ScalarType, sel: DtypeSet) -> DtypeSet {
    let mut out = DtypeSet::EMPTY;
    let mut i = 0;
    while i < ScalarType::ALL.len() {
        let t = ScalarType::ALL[i];
        if sel.contains(t) && compute_dtype(t) as u8 == compute as u8 {
            out = out.with(t);
        }
        i += 1;
    }
    out
}

mod broadcast;
mod convert;
mod drive;
mod scalar;
#[cfg(test)]
mod tests;

pub use broadcast::{broadcast_shapes, Shape, Walk};
pub use convert::{gather_fn, narrow_fn, store_fn, GatherFn, NarrowFn, StoreFn};
pub use drive::{binary, ternary, unary, MapK};
pub use scalar::{scalar_as, scalar_opmath};

/// Test support for kernels: runs `f` with a context over a 64 KiB scratch arena.
#[cfg(test)]
pub(crate) fn with_ctx<R>(f: impl FnOnce(&et_runtime::KernelContext<'_>) -> R) -> R {
    extern crate std;
    let mut scratch = std::vec![0u8; 1 << 16];
    let arena = et_runtime::Arena::new(&mut scratch);
    f(&et_runtime::KernelContext::new(&arena))
}
