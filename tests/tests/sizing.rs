//! `MethodBufferSizes::measure` gives exactly enough: each case loads and runs, with the
//! outputs ExecuTorch gave, in buffers cut to the measured sizes, and fails cleanly (an
//! error, no panic) in a method arena one byte short, and in scratch one byte short when
//! the method uses scratch.

use std::path::Path;

use et_runtime::{
    Error, FileLoader, MemoryManager, MethodBufferSizes, MethodBuffers, Program, BUFFER_ALIGNMENT,
};
use etch_tests::{compare, dtype_of, fixtures_dir, owned_outputs, IoSpec};

use et_ops as _;
use et_xnnpack as _;

/// Loads and runs case `name` of `dir` in buffers holding `method`, `planned` and
/// `scratch` bytes (each starting at a multiple of `BUFFER_ALIGNMENT`, as the measuring buffers do), checking the
/// outputs against the case's.
fn run_in(dir: &Path, name: &str, sizes: &MethodBufferSizes) -> Result<(), Error> {
    let spec = IoSpec::read(dir, name);
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load(&loader).unwrap();
    // Allocated larger, then cut to the exact sizes from an aligned start.
    let padded = MethodBufferSizes {
        method: sizes.method + BUFFER_ALIGNMENT,
        planned: sizes.planned.clone(),
        scratch: sizes.scratch + BUFFER_ALIGNMENT,
    };
    let mut buffers = MethodBuffers::allocate(&padded, usize::MAX).unwrap();
    let (method_mem, planned, scratch) = buffers.split();
    let mut planned: Vec<&mut [u8]> = planned
        .into_iter()
        .zip(&sizes.planned)
        .map(|(b, &n)| &mut b[..n])
        .collect();
    let mut memory = MemoryManager::new(
        &mut aligned(method_mem)[..sizes.method],
        &mut planned,
        &mut aligned(scratch)[..sizes.scratch],
    );
    let mut method = program
        .load_method(&spec.method, &mut memory)
        .map_err(|e| e.error)?;
    for (i, input) in spec.inputs.iter().enumerate() {
        let bytes = std::fs::read(dir.join(&input.file)).unwrap();
        method.set_input_bytes(i, dtype_of(&input.dtype), &input.sizes, &bytes)?;
    }
    method.execute().map_err(|e| e.error)?;
    let got = owned_outputs(&method).unwrap();
    compare(dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    Ok(())
}

/// `buffer` from its first byte at a multiple of `BUFFER_ALIGNMENT`.
fn aligned(buffer: &mut [u8]) -> &mut [u8] {
    let skip = (buffer.as_ptr() as usize).wrapping_neg() % BUFFER_ALIGNMENT;
    &mut buffer[skip..]
}

fn measured(dir: &Path, name: &str) -> MethodBufferSizes {
    let spec = IoSpec::read(dir, name);
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load(&loader).unwrap();
    MethodBufferSizes::measure(&program, &spec.method).unwrap()
}

fn check_exact(dir: &Path, name: &str) -> MethodBufferSizes {
    let sizes = measured(dir, name);
    run_in(dir, name, &sizes).unwrap_or_else(|e| panic!("{name} in {sizes:?}: {e}"));
    let short_method = MethodBufferSizes {
        method: sizes.method - 1,
        ..sizes.clone()
    };
    assert_eq!(
        run_in(dir, name, &short_method),
        Err(Error::MemoryAllocationFailed),
        "{name}: a method arena one byte short"
    );
    if sizes.scratch > 0 {
        let short_scratch = MethodBufferSizes {
            scratch: sizes.scratch - 1,
            ..sizes.clone()
        };
        assert!(
            run_in(dir, name, &short_scratch).is_err(),
            "{name}: scratch one byte short"
        );
    }
    sizes
}

#[test]
fn mlp_runs_in_exactly_the_measured_buffers() {
    let sizes = check_exact(&fixtures_dir(), "mlp");
    // mlp plans all its activations into one arena.
    assert_eq!(sizes.planned.len(), 1);
}

#[test]
fn small_cnn_runs_in_exactly_the_measured_buffers() {
    let sizes = check_exact(&fixtures_dir(), "small_cnn");
    // Its convolutions unfold their input into scratch.
    assert!(sizes.scratch > 0, "{sizes:?}");
}

#[test]
fn an_int8_xnnpack_program_runs_in_exactly_the_measured_buffers() {
    let sizes = check_exact(&fixtures_dir().join("q8"), "q8_fire");
    // The measurement is within the bound read from the tables and the backend.
    let dir = fixtures_dir().join("q8");
    let loader = FileLoader::open(dir.join("q8_fire.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    assert!(sizes.method <= program.method_memory_estimate("forward").unwrap());
}

#[test]
fn the_rust_constants_carry_the_sizes() {
    let sizes = MethodBufferSizes {
        method: 1200,
        planned: vec![64, 0],
        scratch: 32,
    };
    assert_eq!(
        sizes.to_rust_consts("MLP"),
        "/// Bytes of method arena.\npub const MLP_METHOD_BYTES: usize = 1200;\n\
         /// Bytes of each planned arena.\npub const MLP_PLANNED_BYTES: [usize; 2] = [64, 0];\n\
         /// Bytes of kernel scratch.\npub const MLP_SCRATCH_BYTES: usize = 32;\n"
    );
}
