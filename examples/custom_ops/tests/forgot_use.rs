//! What happens when the final binary forgets `use custom_ops as _;`: rustc does not link
//! the kernel crate, its kernels never reach the registry, and `load_method` fails with a
//! clear missing-kernel error naming each operator — no crash.

// The kernel library is linked (it provides aten::add.out); the custom kernels are not.
use et_ops as _;

use et_runtime::{Error, FileLoader, LoadDetail, MemoryManager, Program};
use etch_tests::{bytes_of, fixture};

#[test]
fn forgetting_the_use_line_reports_missing_kernels() {
    assert!(et_runtime::find_kernel("my_ops::mul3", "out", None).is_none());
    let loader = FileLoader::open(fixture("custom_ops.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut method_mem = vec![0u128; meta.method_allocator_estimate().div_ceil(16)];
    let mut planned_mem: Vec<Vec<u128>> = (0..meta.num_planned_buffers())
        .map(|i| vec![0u128; meta.planned_buffer_size(i).unwrap().div_ceil(16)])
        .collect();
    let mut planned: Vec<&mut [u8]> = planned_mem.iter_mut().map(|b| bytes_of(b)).collect();
    let mut memory = MemoryManager::without_temp(bytes_of(&mut method_mem), &mut planned);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(err.error, Error::OperatorMissing);
    assert!(
        matches!(err.detail, LoadDetail::MissingKernels { count: 2, .. }),
        "{err}"
    );
    let missing: Vec<String> = meta
        .missing_kernels()
        .map(|c| c.operator.to_string())
        .collect();
    assert_eq!(missing, ["my_ops::mul3.out", "my_ops::scale_add.out"]);
    assert!(err.to_string().contains("my_ops::mul3.out"), "{err}");
}
