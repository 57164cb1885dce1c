//! `custom_ops.pte` runs with this crate's kernels plus the library's `aten::add.out` and
//! matches the reference output from eager PyTorch.

use custom_ops as _;
use et_ops as _;
use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

#[test]
fn custom_ops_program_matches_reference() {
    let spec = IoSpec::read(&fixtures_dir(), "custom_ops");
    let got = run_case(&fixtures_dir(), &spec).unwrap();
    compare(&fixtures_dir(), &spec, &got).unwrap();
}

#[test]
fn downstream_kernels_are_in_the_registry() {
    for name in ["my_ops::mul3.out", "my_ops::scale_add.out"] {
        let (op, overload) = name.split_once('.').unwrap();
        let entry =
            et_runtime::registry::find_kernel(op, overload, Some(et_runtime::ScalarType::Float))
                .unwrap_or_else(|| panic!("{name} is not registered"));
        assert_eq!(entry.signature.crate_name, "custom_ops");
    }
}
