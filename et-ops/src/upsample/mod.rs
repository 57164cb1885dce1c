//! upsample operators.
