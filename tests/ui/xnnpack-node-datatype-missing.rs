// A colon must be followed by the datatype family.
#[et_macros::xnnpack_node(Conv2d:)]
static SPEC: u32 = 0;

fn main() {}
