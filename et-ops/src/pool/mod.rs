//! pool operators.
