//! Any bytes as the XNNPACK delegate payload of `mlp_xnnpack.pte`: the input replaces the
//! payload segment in place (cut or zero-padded to its length, so the program's segment
//! table stays valid) and the program goes through delegate init and execute.
#![no_main]

use std::sync::OnceLock;

use et_ops as _;
use et_runtime::{FileLoader, Program};
use et_xnnpack as _;
use libfuzzer_sys::fuzz_target;

static PROGRAM: &[u8] = include_bytes!("../../tests/fixtures/mlp_xnnpack.pte");

/// Where the payload lies in `PROGRAM`.
fn payload_range() -> std::ops::Range<usize> {
    static RANGE: OnceLock<std::ops::Range<usize>> = OnceLock::new();
    RANGE
        .get_or_init(|| {
            let loader = FileLoader::from_bytes(PROGRAM);
            let program = Program::load(&loader).expect("the fixture loads");
            let payload = program
                .delegates("forward")
                .expect("forward")
                .next()
                .expect("one delegate")
                .expect("a payload")
                .payload;
            let start = payload.as_ptr() as usize - loader.bytes().as_ptr() as usize;
            start..start + payload.len()
        })
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let range = payload_range();
    let mut bytes = PROGRAM.to_vec();
    let slot = &mut bytes[range];
    let n = data.len().min(slot.len());
    slot[..n].copy_from_slice(&data[..n]);
    slot[n..].fill(0);
    etch_tests::load_and_run_bytes(&bytes);
});
