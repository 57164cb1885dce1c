use et_macros::kernel;
use et_runtime::KernelResult;

#[kernel("my_ops::nothing")]
fn nothing() -> KernelResult {
    Ok(())
}

fn main() {}
