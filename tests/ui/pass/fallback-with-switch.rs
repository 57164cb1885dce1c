// A fallback kernel dispatching with `et_switch!` on its selection parameter, which
// `#[kernel]` instantiates with the build's selected dtypes.
use et_macros::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

fn fill<T: et_runtime::Element>(out: &mut Tensor) -> KernelResult {
    out.data_mut::<T>()?.fill(T::default());
    Ok(())
}

#[kernel("my_ops::zeros.out")]
fn zeros<S: DtypeSelection>(_ctx: &KernelContext<'_>, out: &mut Tensor) -> KernelResult {
    et_switch!(S, out.dtype(), @reals, T => fill::<T>(out))
}

fn main() {
    let entry = et_runtime::registry::find_kernel("my_ops::zeros", "out", None).unwrap();
    assert_eq!(entry.signature.args.len(), 1);
}
