//! `size_test_all_ops`: `size_test` with the kernel library linked. Built under
//! `ET_SELECT_OPS_MODEL=mv2.pte` it becomes `size_test_mv2` (see `scripts/size-report.sh`).
//!
//! Built with `panic = "abort"` (`cargo build --profile release-size -p size_test_all_ops`) it is
//! a `no_std`, `no_main` binary over libc; in other profiles it wraps the same code in an
//! ordinary `main` so the workspace builds and tests in the default dev profile.

#![cfg_attr(panic = "abort", no_std)]
#![cfg_attr(panic = "abort", no_main)]

// The kernels register themselves at link time; naming the crate links it.
use et_ops as _;

size_test::entry!();
