//! `Module`, the owned API: fixtures run through it match ExecuTorch's outputs, methods
//! load once and stay loaded, and every misuse is an error that names what was wrong.

use et_runtime::{Error, Input, Module, TensorRef};
use etch_tests::fixture;

use et_ops as _;
use et_xnnpack as _;

fn f32s(name: &str) -> Vec<f32> {
    let bytes = std::fs::read(fixture(name)).unwrap();
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// MobileNetV2 in the handful of lines the README promises, twice (the second call
/// re-sets the input the memory plan may have reused).
#[test]
fn mv2_forward_matches_executorch() {
    let mut module = Module::from_file(fixture("mv2.pte")).unwrap();
    let image = f32s("mv2.in0.bin");
    let expected = f32s("mv2.out0.bin");
    for _ in 0..2 {
        let outputs = module
            .forward(&[TensorRef::from_slice(&image, &[1, 3, 224, 224]).into()])
            .unwrap();
        let logits = outputs[0].as_slice::<f32>().unwrap();
        assert!(max_diff(logits, &expected) <= 1e-4, "mv2 logits differ");
    }
    assert!(module.is_loaded("forward"));
}

#[test]
fn delegated_program_with_data_file() {
    let mut module = Module::from_file_with_data(
        fixture("mv2_xnnpack_ptd.pte"),
        &[fixture("mv2_xnnpack_ptd.ptd")],
    )
    .unwrap();
    let image = f32s("mv2_xnnpack_ptd.in0.bin");
    let out = module
        .forward(&[TensorRef::from_slice(&image, &[1, 3, 224, 224]).into()])
        .unwrap();
    let want = f32s("mv2_xnnpack_ptd.out0.bin");
    assert!(max_diff(out[0].as_slice::<f32>().unwrap(), &want) <= 1e-4);
}

#[test]
fn from_bytes_and_second_method() {
    let bytes = std::fs::read(fixture("two_methods.pte")).unwrap();
    let mut module = Module::from_bytes(&bytes).unwrap();
    let mut names = module.method_names();
    names.sort();
    assert_eq!(names, ["double_plus_one", "forward"]);
    let x = f32s("two_methods.in0.bin");
    let sizes = module
        .method_meta("double_plus_one")
        .unwrap()
        .input_tensor(0)
        .unwrap();
    let sizes = sizes.sizes().to_vec();
    let out = module
        .execute(
            "double_plus_one",
            &[TensorRef::from_slice(&x, &sizes).into()],
        )
        .unwrap();
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        f32s("two_methods.out0.bin")
    );
    assert!(!module.is_loaded("forward"));
}

#[test]
fn bounded_dynamic_input_takes_a_smaller_batch() {
    let mut module = Module::from_file(fixture("dynamic.pte")).unwrap();
    let x = f32s("dynamic.in0.bin");
    let rows = x.len() / 8;
    let out = module
        .forward(&[TensorRef::from_slice(&x, &[rows, 8]).into()])
        .unwrap();
    let got = out[0].as_slice::<f32>().unwrap();
    assert!(max_diff(got, &f32s("dynamic.out0.bin")) <= 1e-5);
}

#[test]
fn misuse_is_a_clear_error() {
    let mut module = Module::from_file(fixture("add.pte")).unwrap();
    let x = [1.0f32; 4];

    let e = module.execute("backward", &[]).unwrap_err();
    assert_eq!(e.code(), Error::InvalidArgument);
    assert!(
        e.message().contains("no method `backward`") && e.message().contains("`forward`"),
        "{e}"
    );

    let e = module
        .forward(&[TensorRef::from_slice(&x, &[4]).into()])
        .unwrap_err();
    assert!(e.message().contains("takes 2 inputs, 1 were given"), "{e}");

    let ints = [1i64; 4];
    let e = module
        .forward(&[TensorRef::from_slice(&ints, &[4]).into(), Input::Int(3)])
        .unwrap_err();
    assert!(
        e.message().contains("input 0") && e.message().contains("Long"),
        "{e}"
    );

    let e = module
        .forward(&[
            TensorRef::from_slice(&x, &[5]).into(),
            TensorRef::from_slice(&x, &[4]).into(),
        ])
        .unwrap_err();
    assert!(e.message().contains("16 bytes of data"), "{e}");

    let missing = Module::from_file(fixture("no_such_file.pte")).unwrap_err();
    assert_eq!(missing.code(), Error::AccessFailed);
    assert!(missing.message().contains("no_such_file.pte"), "{missing}");

    let e = Module::from_bytes(b"not a program").unwrap_err();
    assert!(e.message().contains("not a program etch can load"), "{e}");
}

#[test]
fn memory_limit_refuses_before_allocating() {
    let mut module = Module::from_file(fixture("mv2.pte")).unwrap();
    module.set_memory_limit(1 << 20);
    let e = module.load_method("forward").unwrap_err();
    assert_eq!(e.code(), Error::MemoryAllocationFailed);
    assert!(e.message().contains("set_memory_limit"), "{e}");
}

#[test]
fn threads_give_the_same_outputs() {
    let image = f32s("mv2.in0.bin");
    let run = |threads| {
        let mut module = Module::from_file(fixture("mv2.pte")).unwrap();
        module.set_threads(threads).unwrap();
        let out = module
            .forward(&[TensorRef::from_slice(&image, &[1, 3, 224, 224]).into()])
            .unwrap();
        out[0].as_slice::<f32>().unwrap().to_vec()
    };
    assert_eq!(run(1), run(2));
}

/// `ndarray` in and out (feature `ndarray`): the same logits as slices give.
#[test]
fn ndarray_inputs_and_outputs() {
    let image = ndarray::Array::from_shape_vec((1, 3, 224, 224), f32s("mv2.in0.bin")).unwrap();
    let mut module = Module::from_file(fixture("mv2.pte")).unwrap();
    let input = TensorRef::from_ndarray(&image).unwrap();
    assert_eq!(input.sizes(), [1, 3, 224, 224]);
    let out = module.forward(&[input.into()]).unwrap();
    let logits = out[0].to_ndarray::<f32>().unwrap();
    assert_eq!(logits.shape(), [1, 1000]);
    assert!(max_diff(logits.as_slice().unwrap(), &f32s("mv2.out0.bin")) <= 1e-4);
    assert!(out[0].to_ndarray::<i64>().is_none());
    // A transposed view is not row-major: refused rather than read in the wrong order.
    assert!(TensorRef::from_ndarray(&image.t()).is_none());
}

/// Bytes with a `.ptd` data file at the minimal verification, and inputs set apart from
/// the run that uses them (once: a second run needs them set again).
#[test]
fn bytes_with_data_minimal_verification_and_prepared_inputs() {
    use et_runtime::Verification;
    let bytes = std::fs::read(fixture("mlp_ptd.pte")).unwrap();
    let mut module =
        Module::from_bytes_with(&bytes, &[fixture("mlp_ptd.ptd")], Verification::Minimal).unwrap();
    let x = f32s("mlp_ptd.in0.bin");
    let want = f32s("mlp_ptd.out0.bin");
    let err = module.execute_prepared("forward").unwrap_err();
    assert_eq!(err.code(), Error::InvalidState, "{err}");
    module
        .set_inputs("forward", &[TensorRef::from_slice(&x, &[4, 16]).into()])
        .unwrap();
    let out = module.execute_prepared("forward").unwrap();
    assert!(max_diff(out[0].as_slice::<f32>().unwrap(), &want) <= 1e-5);
    assert!(module.execute_prepared("forward").is_err());
    // A file that is not a program is an error at either level.
    let err =
        Module::from_bytes_with(b"garbage", &[] as &[&str], Verification::Minimal).unwrap_err();
    assert_eq!(err.code(), Error::InvalidProgram, "{err}");
}
