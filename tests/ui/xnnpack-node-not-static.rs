// The attribute goes on the registering static, not on a function.
#[et_macros::xnnpack_node(Conv2d)]
fn prepare() {}

fn main() {}
