//! `Program::method_memory_estimate` is never short for XNNPACK programs: every fixture
//! with an XNNPACK delegate (`fixtures/*.pte` and `fixtures/xnnpack_ops/*.pte`) loads and
//! runs in a method buffer of exactly the estimated size, and the bytes it used are
//! within the estimate. A short estimate surfaced as "method memory is too small for the
//! packed weights" on models whose FullyConnected nodes share a filter (DeepSpeech's
//! recurrence; `xnnpack_ops/shared_linear` reproduces it).

use std::path::Path;

use et_runtime::{DataFile, FileLoader, MemoryManager, MethodBuffers, Program, Verification};
use etch_tests::{compare, dtype_of, fixtures_dir, owned_outputs, IoSpec};

use et_ops as _;
use et_xnnpack as _;

/// (estimate, bytes used after load and execute) of the case's method, run in a method
/// buffer cut to exactly the estimate; the outputs are checked against the case's.
fn estimate_and_use(dir: &Path, name: &str) -> (usize, usize) {
    let spec = IoSpec::read(dir, name);
    let loaders: Vec<FileLoader> = spec
        .data_files
        .iter()
        .map(|f| FileLoader::open(dir.join(f)).unwrap())
        .collect();
    let data: Vec<DataFile<'_>> = loaders
        .iter()
        .zip(&spec.data_files)
        .map(|(l, f)| DataFile::load(l, f).unwrap())
        .collect();
    let data_refs: Vec<&DataFile<'_>> = data.iter().collect();
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load_with_data(&loader, Verification::default(), &data_refs).unwrap();
    let estimate = program.method_memory_estimate(&spec.method).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, &spec.method, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    // The allocation rounds up to whole words: cut it back to the estimate.
    let mut memory = MemoryManager::new(&mut method_mem[..estimate], &mut planned, scratch);
    {
        let mut method = program
            .load_method(&spec.method, &mut memory)
            .unwrap_or_else(|e| panic!("{name}: loading in the estimated {estimate} bytes: {e}"));
        for (i, input) in spec.inputs.iter().enumerate() {
            let bytes = std::fs::read(dir.join(&input.file)).unwrap();
            method
                .set_input_bytes(i, dtype_of(&input.dtype), &input.sizes, &bytes)
                .unwrap();
        }
        method
            .execute()
            .unwrap_or_else(|e| panic!("{name}: execute: {e}"));
        let got = owned_outputs(&method).unwrap();
        compare(dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    (estimate, memory.method_bytes_used())
}

/// The io.yaml cases in `dir` whose program has an XNNPACK delegate.
fn xnnpack_cases(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".io.yaml").map(str::to_owned)
        })
        .filter(|name| {
            let spec = IoSpec::read(dir, name);
            let bytes = std::fs::read(dir.join(&spec.program)).unwrap();
            let loader = FileLoader::from_bytes(&bytes);
            let program = Program::load(&loader).unwrap();
            let mut delegates = program.delegates(&spec.method).unwrap();
            delegates.any(|d| d.is_ok_and(|d| d.backend_id == "XnnpackBackend"))
        })
        .collect();
    names.sort();
    names
}

fn check_dir(dir: &Path, at_least: usize) {
    let cases = xnnpack_cases(dir);
    assert!(cases.len() >= at_least, "{}: {cases:?}", dir.display());
    for name in &cases {
        let (estimate, used) = estimate_and_use(dir, name);
        assert!(
            used <= estimate,
            "{name}: used {used} bytes, estimated {estimate}"
        );
        println!("{name}: used {used} of the estimated {estimate} bytes");
    }
}

#[test]
fn estimates_cover_the_xnnpack_fixtures() {
    // mlp, small_cnn, mv2, mv2_q8, mv2_ptd, mlp_qd8, linear_qb4, tiny_transformer.
    check_dir(&fixtures_dir(), 8);
}

#[test]
fn estimates_cover_the_node_kind_fixtures() {
    check_dir(&fixtures_dir().join("xnnpack_ops"), 10);
}

#[test]
fn shared_filters_are_counted_once_per_node() {
    // Twelve FullyConnected nodes, six of them on one shared [40, 40] filter: each packs
    // its own copy, and the estimate must hold all of them.
    let dir = fixtures_dir().join("xnnpack_ops");
    let (estimate, used) = estimate_and_use(&dir, "shared_linear");
    let packed_copies = 6 * 40 * 40 * 4;
    assert!(used > packed_copies, "{used}");
    assert!(estimate >= used, "{estimate} < {used}");
}
