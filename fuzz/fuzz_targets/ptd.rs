//! Any bytes as the `.ptd` of `mlp_ptd.pte`: the data file is parsed, merged into the
//! program's named data, and its tensors bound at load_method, then the method runs.
#![no_main]

use et_ops as _;
use et_xnnpack as _;
use libfuzzer_sys::fuzz_target;

static PROGRAM: &[u8] = include_bytes!("../../tests/fixtures/mlp_ptd.pte");

fuzz_target!(|data: &[u8]| {
    etch_tests::load_and_run_with_data(PROGRAM, Some(data));
});
