//! conv operators.
