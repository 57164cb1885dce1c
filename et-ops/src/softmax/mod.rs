//! softmax operators.
