#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod kernel;
mod selected;
mod selection;

/// Registers a function as the kernel of an operator.
///
/// `#[kernel("namespace::op.overload")]` registers a fallback kernel (any dtype);
/// `dtype = f32` registers it for calls whose tensors are `f32`; `dtype = [f32, f64]` on a
/// function generic over one element type registers one instantiation per dtype;
/// `accepts = [f32, i64]` (or the groups `floats`, `ints`, `reals`, `all`) narrows a
/// fallback to the dtypes it computes, so calls with others are missing kernels at load;
/// `replaces = ["aten::convolution.out", ..]` on a fused kernel (one a load-time rewrite
/// rule writes, no program names) keeps it in a selective build that keeps every operator
/// it replaces; `crate = path` names the runtime when it is re-exported. See the crate
/// documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::kernel(attr.into(), item.into()).into()
}

/// Keeps a link-time registration only when the build's selection keeps its entry.
///
/// `#[selected(metadata = "my_backend::node_kinds", entry = Conv2d, variant = fp32)]` goes
/// on the `static` that adds an item to a link-time slice. With no selection (or one that
/// includes all operators) the static stays as written; with a selection whose
/// `kernel_metadata` list `metadata` names neither `Conv2d` nor `Conv2d:fp32` it loses its
/// `distributed_slice` attribute, and the linker drops that code. `variant` is optional
/// (any entry of the name keeps it); `strip_prefix = "XNN"` compares `entry` without that
/// prefix. The registering crate checks that its names exist (for example by naming its
/// schema's enum member next to the attribute); this macro knows no backend. For a model
/// selection (`ET_SELECT_OPS_MODEL`) the lists come from the registering crate's build
/// script, which reads the models' payloads and names a `selected_operators.yaml` holding
/// them in `ET_SELECT_OPS_DELEGATE_METADATA` for its own compilation.
/// `#[selected(operators = ["aten::permute_copy.out"])]` instead keeps it when the
/// selection keeps every listed operator (a load-time rewrite rule and the operators it
/// rewrites). Use it through `et_runtime::link::selected`.
#[proc_macro_attribute]
pub fn selected(attr: TokenStream, item: TokenStream) -> TokenStream {
    selected::selected(attr.into(), item.into()).into()
}
