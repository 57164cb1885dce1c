//! Link-time collections for crates that extend the runtime: a backend's table of node
//! kinds, a kernel library's rules, anything gathered from every linked crate without
//! start-up code.
//!
//! A crate declares a slice and adds elements to it through these re-exports, naming
//! this module as the crate that implements them, so it depends on et-runtime alone:
//!
//! ```
//! use et_runtime::link::distributed_slice;
//!
//! #[distributed_slice]
//! #[linkme(crate = et_runtime::link::linkme)]
//! pub static SHAPES: [&'static str];
//!
//! #[distributed_slice(SHAPES)]
//! #[linkme(crate = et_runtime::link::linkme)]
//! static SQUARE: &'static str = "square";
//!
//! assert!(SHAPES.contains(&"square"));
//! ```
//!
//! [`selected`] (with the default feature `macros`) keeps an element only when the
//! build's compile-time selection keeps the entry it names, the way `#[kernel]` follows
//! the selection of operators.

pub use linkme::{distributed_slice, DistributedSlice};

/// The crate behind [`distributed_slice`], for its `#[linkme(crate = ...)]` argument.
#[doc(hidden)]
pub use linkme;

/// Keeps a link-time registration only when the build's selection keeps its entry: see
/// the `et-macros` crate.
#[cfg(feature = "macros")]
pub use et_macros::selected;
