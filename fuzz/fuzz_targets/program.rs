//! Any bytes as a `.pte`: load, load_method on every method, set zero inputs, execute
//! (with an instruction budget). Must return, never panic, crash or over-allocate.
#![no_main]

use et_ops as _;
use et_xnnpack as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    etch_tests::load_and_run_bytes(data);
});
