//! activation operators.
