//! The dtypes a build selected for a kernel, as a type.
//!
//! A kernel that wants only the selected dtypes instantiated declares a type parameter
//! bounded by [`DtypeSelection`]; `#[kernel]` instantiates it with the build's selection
//! for the operator (the union over stacked attributes), and [`et_switch!`](crate::et_switch)
//! and the library's helpers take it, so branches for unselected dtypes are never
//! compiled in:
//!
//! ```
//! use et_runtime::{et_switch, kernel, DtypeSelection, KernelContext, KernelResult, Tensor};
//!
//! #[kernel("my_ops::negate.out")]
//! fn negate<S: DtypeSelection>(
//!     _ctx: &KernelContext<'_>,
//!     input: &Tensor,
//!     out: &mut Tensor,
//! ) -> KernelResult {
//!     et_switch!(S, out.dtype(), [f32, i64], T => {
//!         for (o, i) in out.data_mut::<T>()?.iter_mut().zip(input.data::<T>()?) {
//!             *o = -*i;
//!         }
//!         Ok(())
//!     })
//! }
//! # fn main() {}
//! ```
//!
//! Outside a registered kernel (a test calling the function, a helper that should accept
//! every dtype) name [`AllDtypes`].

use et_schema::scalar_type::DtypeSet;

/// A set of element types fixed at compile time: the dtypes a build selected for a kernel.
pub trait DtypeSelection {
    /// The selected dtypes.
    const SET: DtypeSet;
}

/// Every dtype: no selection.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllDtypes;

impl DtypeSelection for AllDtypes {
    const SET: DtypeSet = DtypeSet::ALL;
}

/// The dtypes whose bits are set in `BITS` (a [`DtypeSet`] mask): what `#[kernel]`
/// instantiates a kernel's selection parameter with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selected<const BITS: u32>;

impl<const BITS: u32> DtypeSelection for Selected<BITS> {
    const SET: DtypeSet = DtypeSet(BITS);
}
