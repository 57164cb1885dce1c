//! ExecuTorch's own runtime tests, ported: the programs its executor, method, program,
//! tensor-parser and module tests load (`test/models/export_program.py`, run by
//! `scripts/gen-executorch-test-programs.py`; fixtures in `tests/fixtures/executorch_tests/`)
//! and the assertions of those C++ tests that apply to etch's API. Each test names the
//! upstream case it ports; `tests/fixtures/executorch_tests/UPSTREAM.md` lists every upstream
//! case and where it went, or why it does not apply.

use et_runtime::{
    BufferLoader, EValue, Error, Input, MemoryManager, MethodBuffers, Module, Output, Program,
    ScalarType, ShapeDynamism, Tag, TensorRef, PROGRAM_ALIGNMENT,
};
use etch_tests::fixtures_dir;

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

fn path(name: &str) -> std::path::PathBuf {
    fixtures_dir().join("executorch_tests").join(name)
}

fn module(name: &str) -> Module {
    Module::from_file(path(&format!("{name}.pte"))).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn f32s(name: &str) -> Vec<f32> {
    std::fs::read(path(name))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn floats(out: &Output) -> &[f32] {
    out.as_slice::<f32>().expect("a float32 tensor output")
}

/// `ModuleAdd`'s inputs as upstream's module tests give them: `x`, `x`, `alpha = 1.0`.
fn add_inputs(x: &[f32]) -> [Input<'_>; 3] {
    [
        TensorRef::from_slice(x, &[2, 2]).into(),
        TensorRef::from_slice(x, &[2, 2]).into(),
        1.0f64.into(),
    ]
}

/// A copy of a file at a [`PROGRAM_ALIGNMENT`]-aligned address, as `BufferLoader` needs.
fn aligned(bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; bytes.len() + PROGRAM_ALIGNMENT];
    let start = buf.as_ptr().align_offset(PROGRAM_ALIGNMENT);
    buf[start..start + bytes.len()].copy_from_slice(bytes);
    (buf, start)
}

/// `program_test` `BadMagicFailsToLoad`, `VerificationCatchesTruncation`, and
/// `module_test` `TestLoadCorruptedFile`: a file with a wrong magic or cut short is an
/// error at load, never a crash.
#[test]
fn bad_magic_and_truncation_fail_to_load() {
    let bytes = std::fs::read(path("ModuleAdd.pte")).unwrap();
    let mut bad = bytes.clone();
    bad[4..8].copy_from_slice(b"XX99");
    let (buf, start) = aligned(&bad);
    assert!(Program::load(&BufferLoader::new(&buf[start..start + bad.len()]).unwrap()).is_err());
    for len in [bytes.len() / 2, 8, 0] {
        let (buf, start) = aligned(&bytes[..len]);
        let loaded = BufferLoader::new(&buf[start..start + len]).map(|l| Program::load(&l).is_ok());
        assert_ne!(loaded, Ok(true), "a file cut to {len} bytes is refused");
    }
    assert!(Module::from_bytes(&bad).is_err());
}

/// `module_test` `TestLoadNonExistent`: a missing file is an error naming no method.
#[test]
fn a_missing_file_fails_to_load() {
    assert!(Module::from_file(path("NoSuchModule.pte")).is_err());
}

/// `program_test` `getMethods` and `module_test` `TestMethodNames`, `TestNumMethods`:
/// method counts and names, in the program's order; an index past the end is refused.
#[test]
fn method_counts_and_names() {
    let add = module("ModuleAdd");
    assert_eq!(add.program().num_methods(), 1);
    assert_eq!(add.method_names(), ["forward"]);
    let multi = module("ModuleMultipleEntry");
    let program = multi.program();
    assert_eq!(program.num_methods(), 2);
    assert_eq!(program.method_name(0), Ok("forward"));
    assert_eq!(program.method_name(1), Ok("forward2"));
    assert!(program.method_name(2).is_err());
}

/// `method_meta_test` `MethodMetaApi`: ModuleAdd's counts and its one planned buffer.
#[test]
fn method_meta_counts_and_planned_buffer() {
    let add = module("ModuleAdd");
    let meta = add.method_meta("forward").unwrap();
    assert_eq!(meta.name(), "forward");
    assert_eq!((meta.num_inputs(), meta.num_outputs()), (3, 1));
    assert_eq!(meta.num_planned_buffers(), 1);
    assert_eq!(meta.planned_buffer_size(0), Ok(48));
    assert_eq!(meta.planned_buffer_size(1), Err(Error::InvalidArgument));
    assert_ne!(meta.num_instructions(), 0);
    let err = add.method_meta("not_a_method").unwrap_err();
    assert_eq!(err.code(), Error::InvalidArgument, "{err}");
    assert!(
        err.message().contains("`forward`"),
        "names the methods it has: {err}"
    );
}

/// `method_meta_test` `TensorInfoApi` and `module_test` `TestMethodMeta`: tags, sizes,
/// dtype, dim order and byte size of ModuleAdd's tensors; a non-tensor or out-of-range
/// index is InvalidArgument.
#[test]
fn tensor_info_of_inputs_and_outputs() {
    let add = module("ModuleAdd");
    let meta = add.method_meta("forward").unwrap();
    assert_eq!(meta.input_tag(0), Ok(Tag::Tensor));
    assert_eq!(
        meta.input_tag(2),
        Ok(Tag::Double),
        "alpha is a double input"
    );
    assert_eq!(meta.output_tag(0), Ok(Tag::Tensor));
    for info in [
        meta.input_tensor(0).unwrap(),
        meta.input_tensor(1).unwrap(),
        meta.output_tensor(0).unwrap(),
    ] {
        assert_eq!(info.sizes(), [2, 2]);
        assert_eq!(info.dtype, ScalarType::Float);
        assert_eq!(info.dim_order(), [0, 1]);
        assert_eq!(info.nbytes(), 16);
    }
    assert_eq!(meta.input_tensor(2).unwrap_err(), Error::InvalidArgument);
    assert_eq!(meta.input_tensor(3).unwrap_err(), Error::InvalidArgument);
    assert_eq!(meta.output_tensor(3).unwrap_err(), Error::InvalidArgument);
}

/// `module_test` `TestExecute`, `TestForward`, `TestExecutePreload*`: ModuleAdd adds,
/// whether or not the method was loaded first, and again on a second call.
#[test]
fn add_executes() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let mut add = module("ModuleAdd");
    let out = add.execute("forward", &add_inputs(&x)).unwrap();
    assert_eq!(floats(&out[0]), [2.0, 4.0, 6.0, 8.0]);
    let mut preloaded = module("ModuleAdd");
    preloaded.load_method("forward").unwrap();
    assert!(preloaded.is_loaded("forward"));
    for _ in 0..2 {
        let out = preloaded.forward(&add_inputs(&x)).unwrap();
        assert_eq!(floats(&out[0]), [2.0, 4.0, 6.0, 8.0]);
    }
}

/// `tensor_parser_test` `TestModuleAddHalf`: the float16 program's tensors parse as
/// float16 and it adds in float16.
#[test]
fn add_half_executes_in_float16() {
    let mut add = module("ModuleAddHalf");
    let meta = add.method_meta("forward").unwrap();
    assert_eq!(meta.input_tensor(0).unwrap().dtype, ScalarType::Half);
    assert_eq!(meta.input_tensor(0).unwrap().nbytes(), 8);
    let x: Vec<et_runtime::f16> = [1.0f32, 2.5, -3.0, 0.125]
        .iter()
        .map(|&v| et_runtime::f16::from_f32(v))
        .collect();
    let inputs: [Input<'_>; 3] = [
        TensorRef::from_slice(&x, &[2, 2]).into(),
        TensorRef::from_slice(&x, &[2, 2]).into(),
        1.0f64.into(),
    ];
    let out = add.forward(&inputs).unwrap();
    let got: Vec<f32> = out[0]
        .as_slice::<et_runtime::f16>()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    assert_eq!(got, [2.0, 5.0, -6.0, 0.25]);
}

/// `module_test` `TestLoadNonExistentMethod`, `TestNonExistentMethodMeta`,
/// `TestExecuteOnNonExistent`: a method the program lacks is InvalidArgument everywhere,
/// as in ExecuTorch.
#[test]
fn a_missing_method_is_not_found() {
    let mut add = module("ModuleAdd");
    let missing = Error::InvalidArgument;
    assert_eq!(add.load_method("backward").unwrap_err().code(), missing);
    assert_eq!(add.method_meta("backward").unwrap_err().code(), missing);
    let x = [1.0f32; 4];
    let err = add.execute("backward", &add_inputs(&x)).unwrap_err();
    assert_eq!(err.code(), missing);
}

/// `module_test` `TestExecuteWithTooManyInputs`, `TestForwardWithInvalidInputs`,
/// `TestPartiallySetInputs`, `TestUnsetInputs`: a wrong number or kind of inputs is an
/// error, and the module still runs correct inputs afterwards. etch's `Module` takes
/// every input in each call (no `set_input` on the module), so "partially set" is a call
/// with too few inputs.
#[test]
fn wrong_inputs_are_errors() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let mut add = module("ModuleAdd");
    let [a, b, alpha] = add_inputs(&x);
    let too_many = [a, b, alpha, Input::Double(1.0)];
    assert_eq!(
        add.forward(&too_many).unwrap_err().code(),
        Error::InvalidArgument
    );
    assert!(add.forward(&[Input::None]).is_err());
    assert!(add.forward(&add_inputs(&x)[..2]).is_err());
    assert!(add.forward(&[]).is_err());
    let wrong_shape = [1.0f32; 6];
    let bad = [
        TensorRef::from_slice(&wrong_shape, &[2, 3]).into(),
        TensorRef::from_slice(&x, &[2, 2]).into(),
        1.0f64.into(),
    ];
    assert!(
        add.forward(&bad).is_err(),
        "a static [2, 2] input refuses [2, 3]"
    );
    let out = add.forward(&add_inputs(&x)).unwrap();
    assert_eq!(floats(&out[0]), [2.0, 4.0, 6.0, 8.0]);
}

/// `module_test` `TestPTD` and `method_test` `ProgramDataSeparationTest`: the program
/// with its constants in a `.ptd` runs with the file and gives what the program with
/// inline constants gives (`3 * x + 2` for ModuleAddMul); without the file it is refused.
#[test]
fn external_constants_from_ptd() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let want = [5.0f32, 8.0, 11.0, 14.0];
    let run = |m: &mut Module| {
        let out = m
            .forward(&[TensorRef::from_slice(&x, &[2, 2]).into()])
            .unwrap();
        floats(&out[0]).to_vec()
    };
    assert_eq!(run(&mut module("ModuleAddMul")), want);
    let mut split = Module::from_file_with_data(
        path("ModuleAddMulProgram.pte"),
        &[path("ModuleAddMulProgram.ptd")],
    )
    .unwrap();
    assert_eq!(run(&mut split), want);
    let mut missing = module("ModuleAddMulProgram");
    assert!(missing
        .forward(&[TensorRef::from_slice(&x, &[2, 2]).into()])
        .is_err());
    // ModuleLinear's random weights, inline and in a `.ptd`, against ExecuTorch's output.
    let input = f32s("ModuleLinear.in0.bin");
    let expected = f32s("ModuleLinear.out0.bin");
    let mut inline = module("ModuleLinear");
    let mut linear_split = Module::from_file_with_data(
        path("ModuleLinearProgram.pte"),
        &[path("ModuleLinearProgram.ptd")],
    )
    .unwrap();
    for m in [&mut inline, &mut linear_split] {
        let out = m
            .forward(&[TensorRef::from_slice(&input, &[3]).into()])
            .unwrap();
        for (g, w) in floats(&out[0]).iter().zip(&expected) {
            assert!((g - w).abs() <= 1e-6, "linear: got {g}, ExecuTorch {w}");
        }
    }
}

/// `module_test` multiple entry points (ModuleMultipleEntry): each method runs its own
/// graph over the shared constants.
#[test]
fn multiple_entry_points() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let mut m = module("ModuleMultipleEntry");
    let input = [TensorRef::from_slice(&x, &[2, 2]).into()];
    let first = m.execute("forward", &input).unwrap();
    let second = m.execute("forward2", &input).unwrap();
    assert_eq!(floats(&first[0]), [4.0, 5.0, 6.0, 7.0]);
    assert_eq!(floats(&second[0]), [6.0, 7.0, 8.0, 9.0]);
    assert!(m.is_loaded("forward") && m.is_loaded("forward2"));
}

/// ModuleStateful, as the exporter script of this ExecuTorch source writes it with
/// ExecuTorch 1.5.1's `exir` (`export_state_names`, `share_mutable_buffers`): the int32
/// state's tensor points at mutable data segment 0 with no planned memory, and the file
/// has no mutable data segments, so the state has no storage. ExecuTorch 1.5.1's runtime
/// crashes (segmentation fault) on its first `execute`; etch loads the method and refuses
/// the call with InvalidState, repeatably, without touching memory it does not own.
#[test]
fn stateful_program_without_state_storage_is_refused() {
    let one = [1.0f32];
    let mut m = module("ModuleStateful");
    let meta = m.method_meta("forward").unwrap();
    assert_eq!((meta.num_inputs(), meta.num_outputs()), (1, 1));
    for _ in 0..2 {
        let err = m
            .forward(&[TensorRef::from_slice(&one, &[1]).into()])
            .unwrap_err();
        assert_eq!(err.code(), Error::InvalidState, "{err}");
        assert!(err.message().contains("has no data"), "{err}");
    }
}

/// `method_test` on ModuleDynamicCatUnallocatedIO (exported with
/// `alloc_graph_input=False, alloc_graph_output=False`): the input is dynamic up to
/// `[3, 4]` with no planned memory, so the caller's tensor is used; the output grows by
/// the concatenated row of ones. An input over the bound is refused
/// (`SetInputRejectsOverflowingSizes`).
#[test]
fn unallocated_dynamic_io() {
    let mut m = module("ModuleDynamicCatUnallocatedIO");
    let meta = m.method_meta("forward").unwrap();
    let info = meta.input_tensor(0).unwrap();
    assert_eq!(info.sizes(), [3, 4]);
    assert_ne!(info.dynamism, ShapeDynamism::Static);
    assert_eq!(meta.num_planned_buffers(), 1);
    for rows in 1..=3usize {
        let k: Vec<f32> = (0..rows * 4).map(|v| v as f32).collect();
        let out = m
            .forward(&[TensorRef::from_slice(&k, &[rows, 4]).into()])
            .unwrap();
        let t = out[0].as_tensor().unwrap();
        assert_eq!(t.sizes(), [rows + 1, 4]);
        let got = floats(&out[0]);
        assert_eq!(&got[..rows * 4], &k[..]);
        assert_eq!(&got[rows * 4..], [1.0; 4]);
    }
    let big = vec![0.0f32; 5 * 4];
    assert!(m
        .forward(&[TensorRef::from_slice(&big, &[5, 4]).into()])
        .is_err());
}

/// `method_test` (the "index" program, ModuleIndex): `x[1::2, [1, 2]]` on a 10x10x10
/// input, checked element by element.
#[test]
fn index_program() {
    let x: Vec<f32> = (0..1000).map(|v| v as f32).collect();
    let mut m = module("ModuleIndex");
    let out = m
        .forward(&[TensorRef::from_slice(&x, &[10, 10, 10]).into()])
        .unwrap();
    assert_eq!(out[0].as_tensor().unwrap().sizes(), [5, 2, 10]);
    let got = floats(&out[0]);
    for (i, row) in (1..10).step_by(2).enumerate() {
        for (j, col) in [1usize, 2].into_iter().enumerate() {
            for k in 0..10 {
                assert_eq!(got[(i * 2 + j) * 10 + k], x[(row * 10 + col) * 10 + k]);
            }
        }
    }
}

/// `method_test` `SetPrimInputTest` (ModuleIntBool): int and bool inputs are part of
/// the signature, and, as in ExecuTorch, a primitive input must equal the value the
/// method was exported with (the graph was specialized on it): another value, or a tensor
/// where an int belongs, is InvalidArgument.
#[test]
fn int_and_bool_inputs() {
    let one = [1.0f32];
    let mut m = module("ModuleIntBool");
    let meta = m.method_meta("forward").unwrap();
    assert_eq!(meta.input_tag(1), Ok(Tag::Int));
    assert_eq!(meta.input_tag(2), Ok(Tag::Bool));
    let x = || -> Input<'_> { TensorRef::from_slice(&one, &[1]).into() };
    let out = m.forward(&[x(), 1i64.into(), true.into()]).unwrap();
    assert_eq!(floats(&out[0]), [3.0]);
    let code = |r: Result<Vec<Output>, et_runtime::ModuleError>| r.unwrap_err().code();
    assert_eq!(
        code(m.forward(&[x(), 5i64.into(), true.into()])),
        Error::InvalidArgument
    );
    assert_eq!(
        code(m.forward(&[x(), 1i64.into(), false.into()])),
        Error::InvalidArgument
    );
    assert!(m.forward(&[x(), x(), true.into()]).is_err());
    let out = m.forward(&[x(), 1i64.into(), true.into()]).unwrap();
    assert_eq!(floats(&out[0]), [3.0]);
}

/// `method_test` `AliasedIOTest` (ModuleNoOp): outputs that are the inputs themselves
/// come back with the inputs' values.
#[test]
fn outputs_aliasing_inputs() {
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let b = [-1.0f32, -2.0, -3.0, -4.0];
    let mut m = module("ModuleNoOp");
    let out = m
        .forward(&[
            TensorRef::from_slice(&a, &[2, 2]).into(),
            TensorRef::from_slice(&b, &[2, 2]).into(),
        ])
        .unwrap();
    assert_eq!((floats(&out[0]), floats(&out[1])), (&a[..], &b[..]));
}

/// ModuleBasic (`sin(x).max()`, exported with `ignore_to_out_var_failure`): a scalar
/// output over a [100] input.
#[test]
fn basic_program() {
    let x: Vec<f32> = (0..100).map(|v| v as f32 * 0.05).collect();
    let mut m = module("ModuleBasic");
    let out = m
        .forward(&[TensorRef::from_slice(&x, &[100]).into()])
        .unwrap();
    let want = x.iter().map(|v| v.sin()).fold(f32::MIN, f32::max);
    assert!((floats(&out[0])[0] - want).abs() <= 1e-6);
}

/// ModuleSimpleTrain (`program_test` and `tensor_parser_test` `TestMutableState` load
/// it): the joint forward-backward graph runs and its loss and gradients match
/// ExecuTorch's, with the training metadata methods listed as methods. etch has no
/// training API (`extension/training`), so it checks values, not parameter names.
#[test]
fn joint_training_graph_matches_executorch() {
    let mut m = module("ModuleSimpleTrain");
    let names = m.method_names();
    assert!(names.contains(&"forward"), "{names:?}");
    assert!(
        names.contains(&"__et_training_gradients_index_forward"),
        "{names:?}"
    );
    let x = f32s("ModuleSimpleTrain.in0.bin");
    let y = f32s("ModuleSimpleTrain.in1.bin");
    let out = m
        .forward(&[
            TensorRef::from_slice(&x, &[3]).into(),
            TensorRef::from_slice(&y, &[3]).into(),
        ])
        .unwrap();
    assert_eq!(out.len(), 5);
    for (k, o) in out.iter().enumerate() {
        let want = f32s(&format!("ModuleSimpleTrain.out{k}.bin"));
        let got = floats(o);
        assert_eq!(got.len(), want.len(), "output {k}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "output {k}: got {g}, ExecuTorch {w}");
        }
    }
}

/// `program_test` `UnalignedProgramDataFails`: program bytes at an address that is not
/// [`PROGRAM_ALIGNMENT`]-aligned are refused (etch refuses them when the loader is made,
/// before `Program::load`, which upstream's `BufferDataLoader` cannot).
#[test]
fn unaligned_program_data_fails() {
    let bytes = std::fs::read(path("ModuleAdd.pte")).unwrap();
    let mut buf = vec![0u8; bytes.len() + PROGRAM_ALIGNMENT + 1];
    let odd = buf.as_ptr().align_offset(PROGRAM_ALIGNMENT) + 1;
    buf[odd..odd + bytes.len()].copy_from_slice(&bytes);
    let loader = BufferLoader::new(&buf[odd..odd + bytes.len()]);
    assert_eq!(loader.err(), Some(Error::InvalidArgument));
    // The same bytes, aligned, load.
    buf.copy_within(odd..odd + bytes.len(), odd - 1);
    let aligned = BufferLoader::new(&buf[odd - 1..odd - 1 + bytes.len()]).unwrap();
    assert_eq!(Program::load(&aligned).unwrap().num_methods(), 1);
}

/// `program_test` `GetNamedDataMap_Fail`: ModuleAdd has no named data. Upstream's
/// `get_named_data_map` fails with NotFound; etch deliberately returns an empty map
/// (`Program::named_data` cannot fail), in which every lookup finds nothing, while a
/// program with named data lists its keys.
#[test]
fn a_program_without_named_data_has_an_empty_map() {
    let bytes = std::fs::read(path("ModuleAdd.pte")).unwrap();
    let (buf, start) = aligned(&bytes);
    let loader = BufferLoader::new(&buf[start..start + bytes.len()]).unwrap();
    let program = Program::load(&loader).unwrap();
    let named = program.named_data();
    assert_eq!(named.program_entries().count(), 0);
    assert!(named.files().is_empty());
    assert!(named.get("linear.weight").is_none());
}

/// `method_test` `MutableInputTests`: the first and last inputs are reachable for writing
/// in place; an index past the end is InvalidArgument (ExecuTorch aborts). ModuleAdd's
/// last input is the `alpha` scalar, which has no tensor to write: InvalidType.
/// `MutableOutputTests` does not apply: etch has no writable-output accessor (outputs
/// are read with `Method::output`; caller-owned outputs are set through unplanned IO).
#[test]
fn mutable_inputs_in_range_only() {
    let bytes = std::fs::read(path("ModuleAdd.pte")).unwrap();
    let (buf, start) = aligned(&bytes);
    let loader = BufferLoader::new(&buf[start..start + bytes.len()]).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    let n = method.num_inputs();
    assert_eq!(n, 3);
    for i in 0..2 {
        let t = method.input_tensor_mut(i).unwrap();
        assert_eq!(t.sizes(), [2, 2]);
        t.data_mut::<f32>().unwrap().fill(i as f32 + 1.0);
    }
    method.set_input_scalar(2, EValue::Double(1.0)).unwrap();
    assert_eq!(
        method.input_tensor_mut(n - 1).err(),
        Some(Error::InvalidType)
    );
    for i in [n, n + 1] {
        assert_eq!(
            method.input_tensor_mut(i).err(),
            Some(Error::InvalidArgument),
            "{i}"
        );
    }
    // What was written in place is what the method adds.
    method.execute().unwrap();
    let out = method.output(0).unwrap();
    let t = out.as_tensor().unwrap();
    assert_eq!(t.data::<f32>().unwrap(), [3.0; 4]);
}

/// `module_test` `TestPTD_Multiple`: both programs given both data files, in the same
/// order; each finds its own weights among them (the keys do not collide) and computes
/// what it computes with its own file alone.
#[test]
fn several_data_files_each_program_finds_its_own() {
    let files = [
        path("ModuleAddMulProgram.ptd"),
        path("ModuleLinearProgram.ptd"),
    ];
    let mut add_mul = Module::from_file_with_data(path("ModuleAddMulProgram.pte"), &files).unwrap();
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let out = add_mul
        .forward(&[TensorRef::from_slice(&x, &[2, 2]).into()])
        .unwrap();
    assert_eq!(floats(&out[0]), [5.0, 8.0, 11.0, 14.0]);
    let mut linear = Module::from_file_with_data(path("ModuleLinearProgram.pte"), &files).unwrap();
    let input = f32s("ModuleLinear.in0.bin");
    let out = linear
        .forward(&[TensorRef::from_slice(&input, &[3]).into()])
        .unwrap();
    for (g, w) in floats(&out[0]).iter().zip(&f32s("ModuleLinear.out0.bin")) {
        assert!((g - w).abs() <= 1e-6, "linear: got {g}, ExecuTorch {w}");
    }
}
