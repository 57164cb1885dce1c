//! Epilogue fusion (et-ops' rewrite rule `conv::fused::rewrite` and its
//! `etch::convolution_batch_norm*` kernels): which calls a real program's load fuses, and that the fused program still
//! matches ExecuTorch's outputs, on one thread and on two.

use et_runtime::threads::ThreadPool;
use et_runtime::{BufferLoader, MemoryManager, MethodBuffers, Program, PROGRAM_ALIGNMENT};
use etch_tests::{compare, fixture, fixtures_dir, run_case, run_case_with_pool, IoSpec};

use et_ops as _;

/// [`kernels_of`] fixture `name`.
fn kernels_after_load(name: &str) -> Vec<Option<String>> {
    kernels_of(&std::fs::read(fixture(&format!("{name}.pte"))).expect("fixture"))
}

fn count(kernels: &[Option<String>], name: &str) -> usize {
    kernels
        .iter()
        .filter(|k| k.as_deref() == Some(name))
        .count()
}

/// For each instruction of program `bytes`' `forward` (one chain), the name of the kernel
/// it runs after load (`None`: it runs nothing).
fn kernels_of(bytes: &[u8]) -> Vec<Option<String>> {
    let mut buf = vec![0u8; bytes.len() + PROGRAM_ALIGNMENT];
    let start = buf.as_ptr().align_offset(PROGRAM_ALIGNMENT);
    buf[start..start + bytes.len()].copy_from_slice(bytes);
    let loader = BufferLoader::new(&buf[start..start + bytes.len()]).expect("aligned");
    let program = Program::load(&loader).expect("valid program");
    let meta = program.method_meta("forward").expect("forward");
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).expect("buffers");
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let method = program
        .load_method("forward", &mut memory)
        .expect("kernels are linked");
    (0..meta.num_instructions() as u32)
        .map(|pc| {
            method
                .instruction_kernel(0, pc)
                .map(|e| e.name().to_string())
        })
        .collect()
}

/// A run whose batch norm reads one of its own statistics outs as its weight keeps its
/// calls: the fused call would read that value, which it no longer computes. (mv2 with
/// its first batch norm's weight argument, value 1, replaced by its saved mean, value
/// 332: every use of the mean is still inside the run, and the mean's memory overlaps no
/// out, so only this check stands in the way.)
#[test]
fn a_run_reading_a_dropped_value_keeps_its_calls() {
    let mut bytes = std::fs::read(fixture("mv2.pte")).expect("fixture");
    // The batch norm's argument list: its length, then its value indices.
    let args: Vec<u8> = [11i32, 315, 1, 2, 158, 159, 334, 335, 331, 332, 333, 336]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let at = bytes
        .windows(args.len())
        .position(|w| w == args.as_slice())
        .expect("mv2's first batch norm call");
    let as_read = kernels_of(&bytes);
    assert_eq!(
        as_read[..3],
        [
            Some("etch::convolution_batch_norm_hardtanh.out".to_string()),
            None,
            None
        ]
    );
    bytes[at + 8..at + 12].copy_from_slice(&332i32.to_le_bytes());
    let kernels = kernels_of(&bytes);
    assert_eq!(
        kernels[..3],
        [
            Some("aten::convolution.out".to_string()),
            Some("aten::_native_batch_norm_legit_no_training.out".to_string()),
            Some("aten::hardtanh.out".to_string())
        ]
    );
    // The other runs fuse as in the unchanged program.
    assert_eq!(kernels[3..], as_read[3..]);
}

/// MobileNetV2: each of its 52 convolutions is followed by a batch norm, 35 of those by a
/// ReLU6. The memory plan decides how far each run fuses: where it put the ReLU6's out
/// over the convolution's input (dead by then in the program, but read by the fused
/// call), 4 runs fuse the batch norm only and keep their ReLU6; where it put the batch
/// norm's out there, 3 runs (each before a residual add) keep all their calls. The
/// absorbed calls run nothing; every other call keeps its kernel.
#[test]
fn mv2_fuses_convolutions_with_their_batch_norms_and_relu6() {
    let kernels = kernels_after_load("mv2");
    let with_relu6 = count(&kernels, "etch::convolution_batch_norm_hardtanh.out");
    let without = count(&kernels, "etch::convolution_batch_norm.out");
    assert_eq!((with_relu6, without), (31, 14 + 4), "{kernels:?}");
    assert_eq!(count(&kernels, "aten::convolution.out"), 3);
    assert_eq!(
        count(&kernels, "aten::_native_batch_norm_legit_no_training.out"),
        3
    );
    assert_eq!(count(&kernels, "aten::hardtanh.out"), 4);
    // The absorbed calls (49 batch norms, 31 ReLU6) and the classifier's permute (a view).
    assert_eq!(kernels.iter().filter(|k| k.is_none()).count(), 49 + 31 + 1);
    assert_eq!(count(&kernels, "aten::add.out"), 10);
}

/// The fused mv2 matches ExecuTorch's outputs within the fixture's tolerance, on one
/// thread and split over two.
#[test]
fn fused_mv2_matches_executorch() {
    let spec = IoSpec::read(&fixtures_dir(), "mv2");
    let got = run_case(&fixtures_dir(), &spec).expect("runs");
    compare(&fixtures_dir(), &spec, &got).expect("matches");
    let pool = ThreadPool::new(2).expect("pool");
    let split = run_case_with_pool(&fixtures_dir(), &spec, &pool).expect("runs on 2 threads");
    compare(&fixtures_dir(), &spec, &split).expect("matches on 2 threads");
}

/// Programs without a convolution and batch norm pair keep every call: small_cnn's
/// convolutions are followed by a ReLU but no batch norm.
#[test]
fn small_cnn_fuses_nothing() {
    let kernels = kernels_after_load("small_cnn");
    assert!(count(&kernels, "aten::convolution.out") > 0);
    assert!(
        kernels.iter().flatten().all(|k| !k.starts_with("etch::")),
        "{kernels:?}"
    );
}
