//! Binary arithmetic: `out = f(a, b)` with broadcasting and type promotion, through
//! [`util::elementwise::binary`](crate::util::elementwise::binary).

pub mod add;
pub mod mul;
pub mod sub;
