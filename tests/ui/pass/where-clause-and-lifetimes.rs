// Where clauses, explicit lifetimes and a fully qualified context type are accepted.
use et_macros::kernel;
use et_runtime::{Element, KernelResult, ScalarType, Tensor};

#[kernel("my_ops::copy.out", dtype = [f32, i64])]
fn copy<'t, T>(
    _ctx: &et_runtime::KernelContext<'t>,
    src: &'t Tensor,
    out: &'t mut Tensor,
) -> KernelResult
where
    T: Element,
{
    out.data_mut::<T>()?.copy_from_slice(src.data::<T>()?);
    Ok(())
}

fn main() {
    for dtype in [ScalarType::Float, ScalarType::Long] {
        let entry = et_runtime::registry::find_kernel("my_ops::copy", "out", Some(dtype)).unwrap();
        assert_eq!(entry.dtype().dtype(), Some(dtype));
    }
}
