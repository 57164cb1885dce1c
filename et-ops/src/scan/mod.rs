//! scan operators.
