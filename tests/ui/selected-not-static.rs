// The attribute goes on the registering static, not on a function.
#[et_macros::selected(metadata = "my_backend::node_kinds", entry = Conv2d)]
fn prepare() {}

fn main() {}
