// A fallback kernel dispatching with the short `et_switch!` form, which uses the
// `__ET_SELECTED` constant `#[kernel]` defines.
use et_macros::kernel;
use et_runtime::{et_switch, KernelContext, KernelResult, Tensor};

fn fill<T: et_runtime::Element>(out: &mut Tensor) -> KernelResult {
    out.data_mut::<T>()?.fill(T::default());
    Ok(())
}

#[kernel("my_ops::zeros.out")]
fn zeros(_ctx: &KernelContext<'_>, out: &mut Tensor) -> KernelResult {
    et_switch!(out.dtype(), @reals, T => fill::<T>(out))
}

fn main() {
    let entry = et_runtime::registry::find_kernel("my_ops::zeros", "out", None).unwrap();
    assert_eq!(entry.signature.args.len(), 1);
}
