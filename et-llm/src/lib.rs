#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

mod attention;
mod sdpa;

pub mod ops;

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;
