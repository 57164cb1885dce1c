//! index operators.
