//! creation operators.
