#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod kernel;
mod node_kind;
mod selection;

/// Registers a function as the kernel of an operator.
///
/// `#[kernel("namespace::op.overload")]` registers a fallback kernel (any dtype);
/// `dtype = f32` registers it for calls whose tensors are `f32`; `dtype = [f32, f64]` on a
/// function generic over one element type registers one instantiation per dtype;
/// `accepts = [f32, i64]` (or the groups `floats`, `ints`, `reals`, `all`) narrows a
/// fallback to the dtypes it computes, so calls with others are missing kernels at load;
/// `crate = path` names the runtime when it is re-exported. See the crate documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::kernel(attr.into(), item.into()).into()
}

/// Keeps the registration of an XNNPACK node kind (or of one datatype family of it) only
/// when the build's selection keeps it.
///
/// `#[xnnpack_node(Conv2d)]` (or the schema's `XNNConv2d`) or `#[xnnpack_node(Conv2d:
/// qint8)]` goes on the `static` that adds the kind, or one of its datatype families
/// (`fp32`, `qint8`, `qdint8`), to its backend's link-time slice. With no selection (or
/// one that includes all operators) the static stays as written; with a selection that
/// does not keep it (under `kernel_metadata: etch::xnnpack_node_kinds`, which
/// `ET_SELECT_OPS_MODEL` fills from the model's delegate payloads as `Conv2d:fp32`
/// entries; a bare `Conv2d` entry keeps every family) it loses its `distributed_slice`
/// attribute, and the linker drops that code. A name the XNNPACK schema does not define,
/// or an unknown datatype family, is a compile error at the name.
#[proc_macro_attribute]
pub fn xnnpack_node(attr: TokenStream, item: TokenStream) -> TokenStream {
    node_kind::xnnpack_node(attr.into(), item.into()).into()
}
