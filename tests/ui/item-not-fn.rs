use et_macros::kernel;

#[kernel("aten::add.out")]
struct Add;

fn main() {}
