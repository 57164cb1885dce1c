//! index operators.

pub mod embedding;
