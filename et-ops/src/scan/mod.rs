//! scan operators.

pub mod cumsum;
