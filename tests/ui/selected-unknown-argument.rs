// An argument the attribute does not take is an error at its name.
#[et_macros::selected(metadata = "my_backend::node_kinds", entry = Conv2d, kind = fp32)]
static SPEC: u32 = 0;

fn main() {}
