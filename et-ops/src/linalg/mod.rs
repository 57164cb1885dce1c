//! linalg operators.
