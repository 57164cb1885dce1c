//! Unit tests: each operator against a plain f64 reference over random caches.

mod cache;
mod reference;
mod sdpa;
