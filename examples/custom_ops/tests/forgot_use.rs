//! What happens when the final binary forgets `use custom_ops as _;`: rustc does not link
//! the kernel crate, its kernels never reach the registry, and `load_method` fails with a
//! clear missing-kernel error naming each operator — no crash.

// The kernel library is linked (it provides aten::add.out); the custom kernels are not.
use et_ops as _;

use et_runtime::{Error, FileLoader, LoadDetail, MemoryManager, Program};
use etch_tests::{fixture, MethodBuffers};

#[test]
fn forgetting_the_use_line_reports_missing_kernels() {
    assert!(et_runtime::registry::find_kernel("my_ops::mul3", "out", None).is_none());
    let loader = FileLoader::open(fixture("custom_ops.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(err.error, Error::OperatorMissing);
    assert!(
        matches!(err.detail, LoadDetail::MissingKernels { count: 2, .. }),
        "{err}"
    );
    let missing: Vec<String> = et_runtime::registry::missing_kernels(&meta)
        .map(|c| c.operator.to_string())
        .collect();
    assert_eq!(missing, ["my_ops::mul3.out", "my_ops::scale_add.out"]);
    assert!(err.to_string().contains("my_ops::mul3.out"), "{err}");
}
