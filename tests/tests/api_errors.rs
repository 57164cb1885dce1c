//! Bad inputs at the API, each a specific error that names what is wrong: wrong input
//! index, dtype, rank, static shape, shape above a dynamic bound and byte count; planned
//! buffers smaller than the method needs; a method that does not exist; a data file that
//! belongs to another program.

use et_runtime::{
    DataFile, Error, FileLoader, InputProblem, LoadDetail, MemoryManager, MethodBuffers, Program,
    ScalarType, Verification,
};
use etch_tests::fixture;

// Link the kernel library and the XNNPACK backend.
use et_ops as _;
use et_xnnpack as _;

/// Loads `name`'s `forward` and hands the method to `f`.
fn with_forward(name: &str, f: impl FnOnce(&mut et_runtime::Method<'_>)) {
    let loader = FileLoader::open(fixture(name)).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    f(&mut method);
}

fn f32_bytes(n: usize) -> Vec<u8> {
    vec![0; n * 4]
}

#[test]
fn an_input_index_past_the_inputs_names_the_count() {
    with_forward("add.pte", |m| {
        let e = m
            .set_input_checked(2, ScalarType::Float, &[2, 3], &f32_bytes(6))
            .unwrap_err();
        assert_eq!(e.error, Error::InvalidArgument);
        assert_eq!(e.problem, InputProblem::NoSuchInput { count: 2 });
        assert_eq!(e.to_string(), "input 2: the method has 2 inputs");
    });
}

#[test]
fn too_few_inputs_fail_execute_naming_the_unset_input() {
    with_forward("add.pte", |m| {
        m.set_input_checked(0, ScalarType::Float, &[2, 3], &f32_bytes(6))
            .unwrap();
        let e = m.execute().unwrap_err();
        assert_eq!(e.error, Error::InvalidState);
        assert!(e.to_string().contains("never set"), "{e}");
    });
}

#[test]
fn a_wrong_dtype_names_both_dtypes() {
    with_forward("add.pte", |m| {
        let e = m
            .set_input_checked(0, ScalarType::Int, &[2, 3], &f32_bytes(6))
            .unwrap_err();
        assert_eq!(e.error, Error::InvalidArgument);
        let (expected, found) = (ScalarType::Float, ScalarType::Int);
        assert_eq!(e.problem, InputProblem::Dtype { expected, found });
        let text = e.to_string();
        assert!(text.starts_with("input 0: dtype"), "{text}");
        assert!(text.contains("expects"), "{text}");
    });
}

#[test]
fn a_wrong_rank_or_static_shape_or_byte_count_is_named() {
    with_forward("add.pte", |m| {
        let e = m
            .set_input_checked(1, ScalarType::Float, &[6], &f32_bytes(6))
            .unwrap_err();
        let (expected, found) = (2, 1);
        assert_eq!(e.problem, InputProblem::Rank { expected, found });
        assert_eq!(e.to_string(), "input 1: 1 dims, the method expects 2");

        let e = m
            .set_input_checked(1, ScalarType::Float, &[3, 2], &f32_bytes(6))
            .unwrap_err();
        assert_eq!(e.error, Error::InvalidArgument);
        assert_eq!(e.problem, InputProblem::StaticShape);
        assert!(e.to_string().contains("static shape"), "{e}");

        let e = m
            .set_input_checked(1, ScalarType::Float, &[2, 3], &f32_bytes(5))
            .unwrap_err();
        let (expected, found) = (24, 20);
        assert_eq!(e.problem, InputProblem::ByteCount { expected, found });
        assert_eq!(
            e.to_string(),
            "input 1: 20 bytes of data, the sizes call for 24"
        );
    });
}

#[test]
fn a_shape_above_the_dynamic_bound_names_the_bound() {
    with_forward("dynamic.pte", |m| {
        let bound = m.input_tensor_mut(0).unwrap().numel_bound();
        // Within the bound: accepted.
        m.set_input_checked(0, ScalarType::Float, &[2, 8], &f32_bytes(16))
            .unwrap();
        let rows = bound / 8 + 1;
        let e = m
            .set_input_checked(0, ScalarType::Float, &[rows, 8], &f32_bytes(rows * 8))
            .unwrap_err();
        assert_eq!(e.error, Error::InvalidArgument);
        let numel = rows * 8;
        assert_eq!(e.problem, InputProblem::AboveBound { numel, bound });
        let text = e.to_string();
        assert!(text.contains("above its dynamic shape bound"), "{text}");
        assert!(text.contains(&bound.to_string()), "{text}");
        // The plain setter refuses too.
        let plain = m.set_input_bytes(0, ScalarType::Float, &[rows, 8], &f32_bytes(rows * 8));
        assert_eq!(plain, Err(Error::InvalidArgument));
    });
}

#[test]
fn planned_buffers_smaller_than_the_plan_are_refused_naming_the_buffer() {
    let loader = FileLoader::open(fixture("mlp.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let needed: Vec<usize> = (0..meta.num_planned_buffers())
        .map(|i| meta.planned_buffer_size(i).unwrap())
        .collect();
    let (index, &required) = needed
        .iter()
        .enumerate()
        .find(|(_, &n)| n > 0)
        .expect("a planned buffer");
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let provided = required - 16;
    let taken = std::mem::take(&mut planned[index]);
    planned[index] = &mut taken[..provided];
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let e = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(e.error, Error::MemoryAllocationFailed, "{e}");
    assert!(
        matches!(e.detail, LoadDetail::PlannedBuffer { index: i, required: r, provided: p }
            if i == index && r == required && p == provided),
        "{:?}",
        e.detail
    );
    assert_eq!(
        e.to_string(),
        format!(
            "planned buffer {index} needs {required} bytes but {provided} were provided: {}",
            e.error
        )
    );
}

#[test]
fn a_method_that_does_not_exist_is_named_as_such() {
    let loader = FileLoader::open(fixture("add.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    assert_eq!(
        program.method_meta("backward").unwrap_err(),
        Error::InvalidArgument
    );
    let mut memory_bytes = vec![0u8; 4096];
    let mut planned: Vec<&mut [u8]> = Vec::new();
    let mut memory = MemoryManager::new(&mut memory_bytes, &mut planned, &mut []);
    let e = program.load_method("backward", &mut memory).unwrap_err();
    assert!(matches!(e.detail, LoadDetail::NoSuchMethod), "{e}");
    assert!(e.to_string().contains("no method with that name"), "{e}");
}

#[test]
fn a_data_file_of_another_program_names_the_missing_key() {
    // mv2_xnnpack_ptd.pte's delegate keeps its weights in its own .ptd; mlp_ptd's data
    // file is a valid .ptd without them.
    let data_loader = FileLoader::open(fixture("mlp_ptd.ptd")).unwrap();
    let data = DataFile::load(&data_loader, "mlp_ptd.ptd").unwrap();
    let loader = FileLoader::open(fixture("mv2_xnnpack_ptd.pte")).unwrap();
    let files = [&data];
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let e = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(e.error, Error::NotFound, "{e}");
    let text = e.to_string();
    assert!(text.contains("needs named data"), "{text}");
    assert!(text.contains("mlp_ptd.ptd"), "{text}");

    // And the other way: mlp_ptd.pte's external tensors are not in an unrelated file.
    let mut wrong = std::fs::read(fixture("mlp_ptd.ptd")).unwrap();
    // Rename every key by one byte: same file shape, other program's names.
    let key = find_key(&wrong).expect("a fully qualified tensor name");
    wrong[key] ^= 0x20;
    let wrong_loader = FileLoader::from_bytes(&wrong);
    let wrong_data = DataFile::load(&wrong_loader, "other.ptd").unwrap();
    let loader = FileLoader::open(fixture("mlp_ptd.pte")).unwrap();
    let files = [&wrong_data];
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let e = program.load_method("forward", &mut memory).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e.detail, LoadDetail::ExternalData { .. }),
        "{text}"
    );
    assert!(text.contains("other.ptd"), "{text}");
}

/// The position of the first letter of the first data key in a `.ptd` (its keys are the
/// program's fully qualified tensor names, such as `linear.weight`).
fn find_key(ptd: &[u8]) -> Option<usize> {
    let at = ptd.windows(7).position(|w| w == b".weight")?;
    // Back to the start of the name.
    let start = ptd[..at]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'))?;
    Some(start + 1)
}
