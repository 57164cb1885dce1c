//! reduce operators.
