// A datatype family etch does not know is an error at the family's name.
#[et_macros::xnnpack_node(Conv2d: int8)]
static SPEC: u32 = 0;

fn main() {}
