#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

mod attention;
mod sdpa;

pub mod ops;

#[cfg(any(test, feature = "std"))]
extern crate std;

#[cfg(feature = "std")]
pub mod runner;
#[cfg(feature = "std")]
pub mod tokenizer;

#[cfg(test)]
mod tests;
