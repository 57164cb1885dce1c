//! copy operators.
