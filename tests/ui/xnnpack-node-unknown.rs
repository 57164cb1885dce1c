// A node kind the XNNPACK schema does not define is an error at the name.
#[et_macros::xnnpack_node(Conv3d)]
static SPEC: u32 = 0;

fn main() {}
