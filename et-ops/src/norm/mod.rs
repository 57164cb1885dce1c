//! norm operators.
