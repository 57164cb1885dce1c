//! Executing a method more than once: every run, with its inputs set again, reproduces
//! ExecuTorch's outputs, and `MethodMeta::input_is_preserved` tells the truth about which
//! inputs survive an execute.

use et_runtime::{FileLoader, MemoryManager, Program};
use etch_tests::{compare, dtype_of, fixtures_dir, owned_outputs, IoSpec, MethodBuffers};

use et_ops as _;

/// Every fixture that runs on the portable library.
const FIXTURES: &[&str] = &[
    "add",
    "add_mul",
    "cond",
    "cond_else",
    "dtype_mix",
    "dynamic",
    "dynamic_view",
    "int_ops",
    "many_adds",
    "mlp",
    "mv2",
    "small_cnn",
    "tiny_transformer",
    "two_methods",
];

/// Runs the fixture's method `runs` times, setting the inputs before each run, and checks
/// each run against the reference. Returns which inputs the metadata says are preserved.
fn run_repeatedly(name: &str, runs: usize) -> Vec<bool> {
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, name);
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta(&spec.method).unwrap();
    let preserved: Vec<bool> = (0..meta.num_inputs())
        .map(|i| meta.input_is_preserved(i).unwrap())
        .collect();
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method(&spec.method, &mut memory).unwrap();
    let inputs: Vec<Vec<u8>> = spec
        .inputs
        .iter()
        .map(|t| std::fs::read(dir.join(&t.file)).unwrap())
        .collect();
    for run in 1..=runs {
        for (i, (t, bytes)) in spec.inputs.iter().zip(&inputs).enumerate() {
            method
                .set_input_bytes(i, dtype_of(&t.dtype), &t.sizes, bytes)
                .unwrap();
        }
        method
            .execute()
            .unwrap_or_else(|e| panic!("{name} run {run}: {e}"));
        let got = owned_outputs(&method).unwrap_or_else(|e| panic!("{name} run {run}: {e}"));
        compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{name} run {run}: {e}"));
        for (i, bytes) in inputs.iter().enumerate() {
            if preserved[i] {
                let v = method.input(i).unwrap();
                let t = v.as_tensor().expect("tensor input");
                assert_eq!(
                    &t.to_row_major_bytes().unwrap(),
                    bytes,
                    "{name}: input {i} is reported preserved but execute changed it"
                );
            }
        }
    }
    preserved
}

#[test]
fn every_run_matches_the_reference_when_inputs_are_set_each_time() {
    for name in FIXTURES {
        run_repeatedly(name, 3);
    }
}

#[test]
fn input_reuse_is_visible_in_the_metadata() {
    // The planner reuses mv2's and tiny_transformer's input bytes for intermediates;
    // add's two inputs stay live until its only instruction has read them.
    assert_eq!(run_repeatedly("mv2", 1), [false]);
    assert_eq!(run_repeatedly("tiny_transformer", 1), [false]);
    assert_eq!(run_repeatedly("int_ops", 1), [true, true, false]);
    assert_eq!(run_repeatedly("add", 1), [true, true]);
}

#[test]
fn a_reused_input_really_is_overwritten() {
    // Without setting the input again, mv2's second run reads what the first left in the
    // input's bytes: the reason `input_is_preserved` exists.
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, "mv2");
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    let input = std::fs::read(dir.join(&spec.inputs[0].file)).unwrap();
    let info = meta.input_tensor(0).unwrap();
    method
        .set_input_bytes(0, info.dtype, info.sizes(), &input)
        .unwrap();
    method.execute().unwrap();
    let after = method.input(0).unwrap();
    assert_ne!(
        after.as_tensor().unwrap().to_row_major_bytes().unwrap(),
        input
    );
}
