//! logical operators.
