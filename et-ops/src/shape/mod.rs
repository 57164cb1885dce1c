//! shape operators.
