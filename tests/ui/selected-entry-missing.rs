// The entry the registration stands for must be named.
#[et_macros::selected(metadata = "my_backend::node_kinds", variant = fp32)]
static SPEC: u32 = 0;

fn main() {}
