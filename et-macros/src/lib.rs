#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod kernel;
mod selection;

/// Registers a function as the kernel of an operator.
///
/// `#[kernel("namespace::op.overload")]` registers a fallback kernel (any dtype);
/// `dtype = f32` registers it for calls whose tensors are `f32`; `dtype = [f32, f64]` on a
/// function generic over one element type registers one instantiation per dtype;
/// `crate = path` names the runtime when it is re-exported. See the crate documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::kernel(attr.into(), item.into()).into()
}
