//! shape operators.

pub mod expand_copy;
pub mod permute_copy;
pub mod view_copy;
