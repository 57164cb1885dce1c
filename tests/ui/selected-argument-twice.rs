// Each argument is given once.
#[et_macros::selected(metadata = "my_backend::node_kinds", entry = Conv2d, entry = Add)]
static SPEC: u32 = 0;

fn main() {}
