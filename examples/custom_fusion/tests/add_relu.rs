//! `add_relu.pte` (`relu(h + c)` with `h = relu(a + b)`, `h`, and `a * b + c`, exported
//! by ExecuTorch) loads
//! with this crate's rule applied: both add-then-relu runs become one call of
//! `mytest::add_relu.out` each, their relu calls run nothing, the lone add keeps et-ops'
//! kernel, and the outputs are ExecuTorch's, exactly.

use std::sync::atomic::Ordering;

use custom_fusion::ADD_RELU_CALLS;
use et_runtime::{FileLoader, MemoryManager, MethodBuffers, Program};
use etch_tests::{compare, fixture, fixtures_dir, owned_outputs, IoSpec};

use et_ops as _;

#[test]
fn add_then_relu_becomes_the_fused_kernel_and_matches_executorch() {
    let spec = IoSpec::read(&fixtures_dir(), "add_relu");
    let loader = FileLoader::open(fixture("add_relu.pte")).expect("fixture");
    let program = Program::load(&loader).expect("valid program");
    let meta = program.method_meta("forward").expect("forward");
    let mut buffers = MethodBuffers::for_method(&meta, 1 << 20).expect("buffers");
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program
        .load_method("forward", &mut memory)
        .expect("kernels are linked");

    // What each instruction runs after load (`None`: nothing).
    let kernels: Vec<Option<String>> = (0..meta.num_instructions() as u32)
        .map(|pc| {
            method
                .instruction_kernel(0, pc)
                .map(|e| e.name().to_string())
        })
        .collect();
    let count = |name: &str| {
        kernels
            .iter()
            .filter(|k| k.as_deref() == Some(name))
            .count()
    };
    assert_eq!(count("mytest::add_relu.out"), 2, "{kernels:?}");
    assert_eq!(count("aten::relu.out"), 0, "{kernels:?}");
    assert_eq!(count("aten::add.out"), 1, "{kernels:?}");
    assert_eq!(
        kernels.iter().filter(|k| k.is_none()).count(),
        2,
        "{kernels:?}"
    );

    for (i, input) in spec.inputs.iter().enumerate() {
        let bytes = std::fs::read(fixtures_dir().join(&input.file)).expect("input file");
        method
            .set_input_bytes(i, et_runtime::ScalarType::Float, &input.sizes, &bytes)
            .expect("input fits");
    }
    let before = ADD_RELU_CALLS.load(Ordering::Relaxed);
    method.execute().expect("runs");
    // Other tests of this binary may run the kernel at the same time: at least ours.
    assert!(ADD_RELU_CALLS.load(Ordering::Relaxed) >= before + 2);
    let got = owned_outputs(&method).expect("outputs");
    compare(&fixtures_dir(), &spec, &got).expect("ExecuTorch's outputs");
}

/// The fused kernel alone computes what the two calls do, on values where the sum is
/// negative, zero, positive and NaN, with an alpha other than one.
#[test]
fn the_fused_kernel_is_add_then_relu() {
    use et_runtime::registry::find_kernel;
    let entry = find_kernel(
        "mytest::add_relu",
        "out",
        Some(et_runtime::ScalarType::Float),
    )
    .expect("registered");
    assert_eq!(entry.signature.crate_name.as_str(), "custom_fusion");
    let a = [1.0f32, -2.0, 0.5, f32::NAN, 3.0];
    let b = [2.0f32, 1.0, -0.25, 1.0, -4.0];
    let ta = et_runtime::TensorBuf::from_slice(&[5], &a).unwrap();
    let tb = et_runtime::TensorBuf::from_slice(&[5], &b).unwrap();
    let mut to = et_runtime::TensorBuf::zeros(et_runtime::ScalarType::Float, &[5]).unwrap();
    let mut scratch = vec![0u8; 1 << 12];
    let arena = et_runtime::Arena::new(&mut scratch);
    let ctx = et_runtime::KernelContext::new(&arena);
    custom_fusion::add_relu_out(&ctx, &ta, &tb, et_runtime::Scalar::Double(2.0), &mut to)
        .expect("runs");
    let out = to.data::<f32>().unwrap();
    let want = [5.0f32, 0.0, 0.0, f32::NAN, 0.0];
    for (g, w) in out.iter().zip(want) {
        assert!(g == &w || (g.is_nan() && w.is_nan()), "{out:?} != {want:?}");
    }
}
