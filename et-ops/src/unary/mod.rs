//! unary operators.
