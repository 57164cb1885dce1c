//! Logical operators and selection: truth values of any dtype (non-zero is true, NaN is
//! true), and `where`.

pub mod logical_and;
pub mod logical_not;
pub mod logical_or;
pub mod logical_xor;
pub mod where_self;
