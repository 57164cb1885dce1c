//! binary operators.
