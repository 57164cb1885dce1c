//! `load_method` and `execute` never touch the heap: a counting global allocator sees
//! zero allocations while they run (hand-registered kernels; the kernel library has its
//! own check in the fixture tests).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use et_runtime::{DataFile, FileLoader, MemoryManager, Program, ScalarType, Verification};
use etch_tests::{fixture, MethodBuffers};

mod hand_kernels;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counts heap allocations made by `f`. Only this test runs in this binary, so no other
/// thread allocates meanwhile.
fn allocations_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let r = f();
    COUNTING.store(false, Ordering::SeqCst);
    (r, ALLOCATIONS.load(Ordering::SeqCst))
}

#[test]
fn load_method_and_execute_do_not_allocate() {
    for (name, inputs) in [
        ("add.pte", 2usize),
        ("cond.pte", 2),
        ("dynamic_view.pte", 1),
    ] {
        let loader = FileLoader::open(fixture(name)).unwrap();
        let program = Program::load(&loader).unwrap();
        let meta = program.method_meta("forward").unwrap();
        let mut buffers = MethodBuffers::for_method(&meta, 16 << 10).unwrap();
        let (method_mem, mut planned, scratch) = buffers.split();
        let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
        let input_data: Vec<(Vec<usize>, Vec<u8>)> = (0..inputs)
            .map(|i| {
                let info = meta.input_tensor(i).unwrap();
                (info.sizes().to_vec(), vec![0u8; info.nbytes()])
            })
            .collect();

        let (method, n) = allocations_during(|| program.load_method("forward", &mut memory));
        let mut method = method.unwrap();
        assert_eq!(n, 0, "{name}: load_method allocated");
        for (i, (sizes, bytes)) in input_data.iter().enumerate() {
            method
                .set_input_bytes(i, ScalarType::Float, sizes, bytes)
                .unwrap();
        }
        let ((), n) = allocations_during(|| {
            for _ in 0..3 {
                method.execute().unwrap();
            }
        });
        assert_eq!(n, 0, "{name}: execute allocated");
    }

    // External tensors bind to a data file without allocating (this binary has no
    // addmm kernel, so the load then stops at kernel resolution, after the binding).
    let ptd = FileLoader::open(fixture("mlp_ptd.ptd")).unwrap();
    let data = DataFile::load(&ptd, "mlp_ptd.ptd").unwrap();
    let files = [&data];
    let loader = FileLoader::open(fixture("mlp_ptd.pte")).unwrap();
    let program = Program::load_with_data(&loader, Verification::default(), &files).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 16 << 10).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let (result, n) = allocations_during(|| program.load_method("forward", &mut memory).map(drop));
    assert_eq!(
        result.unwrap_err().error,
        et_runtime::Error::OperatorMissing
    );
    assert_eq!(n, 0, "mlp_ptd: load_method with a data file allocated");
}
