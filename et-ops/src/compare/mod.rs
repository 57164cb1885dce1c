//! compare operators.
