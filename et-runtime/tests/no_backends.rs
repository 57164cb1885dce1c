//! Without the feature `backends` (run alone: `cargo test -p et-runtime --test
//! no_backends`; in a workspace build a backend crate turns the feature on) no backend can
//! be registered: a delegated program still loads its metadata, and `load_method` refuses
//! it with the code and detail of a missing backend, naming the backend.
#![cfg(not(feature = "backends"))]

use et_runtime::{backend, Error, FileLoader, LoadDetail, MemoryManager, MethodBuffers, Program};

#[test]
fn a_delegated_program_is_refused_naming_its_backend() {
    // mv2_xnnpack.pte: MobileNetV2 lowered to one XNNPACK delegate.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mv2_xnnpack.pte"
    );
    let loader = FileLoader::open(path).expect("fixture");
    let program = Program::load(&loader).expect("valid program");
    assert!(backend::backends().is_empty());
    let meta = program.method_meta("forward").expect("forward");
    let mut buffers = MethodBuffers::for_method(&meta, 1 << 20).expect("buffers");
    let (method_memory, mut planned, temp) = buffers.split();
    let mut memory = MemoryManager::new(method_memory, &mut planned, temp);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(err.error, Error::NotFound);
    let LoadDetail::MissingBackend { id } = err.detail else {
        panic!("{err}")
    };
    assert_eq!(id, "XnnpackBackend");
    assert!(err
        .to_string()
        .contains("backend XnnpackBackend is not registered"));
}
