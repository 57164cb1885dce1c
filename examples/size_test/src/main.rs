//! `size_test`: the runtime alone (program loader, method, prim ops), no kernels.
//!
//! Built with `panic = "abort"` (`cargo build --profile release-size -p size_test`) it is
//! a `no_std`, `no_main` binary over libc; in other profiles it wraps the same code in an
//! ordinary `main` so the workspace builds and tests in the default dev profile.

#![cfg_attr(panic = "abort", no_std)]
#![cfg_attr(panic = "abort", no_main)]

size_test::entry!();
