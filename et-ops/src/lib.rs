#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

pub mod util;

// Elementwise families.
pub mod activation;
pub mod binary;
pub mod compare;
pub mod logical;
pub mod unary;

// Data movement, creation and indexing.
pub mod copy;
pub mod creation;
pub mod index;
pub mod pad;
pub mod scan;
pub mod shape;

// Compute-heavy families.
pub mod conv;
pub mod linalg;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod softmax;
pub mod upsample;
