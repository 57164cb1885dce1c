//! Runtime benchmarks against the budgets in design.md (run with `cargo bench -p etch-tests`):
//! dispatch overhead per instruction on `many_adds.pte` (1000 one-element adds),
//! `load_method` on `many_adds.pte` and `mv2.pte`, and single-threaded execute of
//! `mv2.pte`, `tiny_transformer.pte` and, through the built-in XNNPACK backend,
//! `mv2_xnnpack.pte`, `mv2_xnnpack_q8.pte` (statically quantized) and
//! `tiny_transformer_xnnpack.pte`; and `mv2.pte` and `many_adds.pte` on a 2-thread pool
//! (`ETCH_BENCH=threads`), against the single-thread rows.
//!
//! A plain harness (no benchmarking crate): each measurement is repeated and the minimum
//! and median are printed (`ETCH_BENCH=<substring>` runs only the matching measurements).
//! Nothing here asserts on time. Execute measurements set the
//! inputs before every run, outside the timed region: the memory plan reuses input bytes
//! for intermediates, so a second run without them would compute something else.

use std::hint::black_box;
use std::time::{Duration, Instant};

use et_runtime::{FileLoader, MemoryManager, Program};
use etch_tests::{fixture, MethodBuffers};

use et_ops as _;
use et_xnnpack as _;

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[0], samples[samples.len() / 2])
}

/// Runs `sample` once to warm up, then `runs` times; each call times its own region.
fn measure(runs: usize, mut sample: impl FnMut() -> Duration) -> (Duration, Duration) {
    sample();
    stats((0..runs).map(|_| sample()).collect())
}

fn load_method_time(name: &str, runs: usize) -> (Duration, Duration) {
    let loader = FileLoader::open(fixture(name)).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    // One manager for every run: load_method starts its method memory afresh.
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    measure(runs, || {
        let t = Instant::now();
        black_box(
            program
                .load_method("forward", &mut memory)
                .expect("kernels for the program are linked"),
        );
        t.elapsed()
    })
}

fn execute_time(name: &str, input: &str, runs: usize) -> (Duration, Duration, usize) {
    execute_time_with(name, input, runs, |method| method.execute().unwrap())
}

/// [`execute_time`] with the kernels splitting their work over a pool of `threads`.
fn execute_time_threads(
    name: &str,
    input: &str,
    runs: usize,
    threads: usize,
) -> (Duration, Duration, usize) {
    let pool = et_runtime::threads::ThreadPool::new(threads).unwrap();
    execute_time_with(name, input, runs, |method| {
        method.execute_with(&pool).unwrap()
    })
}

/// [`execute_time`] with another way to execute (traced, with `--features etdump`).
fn execute_time_with(
    name: &str,
    input: &str,
    runs: usize,
    mut execute: impl FnMut(&mut et_runtime::Method<'_>),
) -> (Duration, Duration, usize) {
    let loader = FileLoader::open(fixture(name)).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, "forward", 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    let inputs: Vec<_> = (0..meta.num_inputs())
        .map(|i| {
            let info = meta.input_tensor(i).unwrap();
            let bytes = std::fs::read(fixture(&format!("{input}.in{i}.bin"))).unwrap();
            (info, bytes)
        })
        .collect();
    let (min, median) = measure(runs, || {
        for (i, (info, bytes)) in inputs.iter().enumerate() {
            method
                .set_input_bytes(i, info.dtype, info.sizes(), bytes)
                .unwrap();
        }
        let t = Instant::now();
        execute(&mut method);
        t.elapsed()
    });
    (min, median, meta.num_instructions())
}

/// Whether the measurement `name` runs: all of them unless `ETCH_BENCH` is set, then those
/// whose name contains it (`ETCH_BENCH=mv2_xnnpack cargo bench ...` to iterate on one).
fn wanted(name: &str) -> bool {
    std::env::var("ETCH_BENCH").map_or(true, |f| name.contains(f.as_str()))
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing special. Keep
    // the test-mode run short.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 3 } else { 200 };

    if wanted("many_adds execute") {
        let (min, median, n) = execute_time("many_adds.pte", "many_adds", runs);
        println!(
            "many_adds execute: min {:?}, median {:?} => {:.1} ns per instruction (budget 10 ns)",
            min,
            median,
            min.as_nanos() as f64 / n as f64
        );
    }
    // The profiler's cost: `cargo bench -p etch-tests --features etdump`.
    #[cfg(feature = "etdump")]
    if wanted("many_adds execute_traced") {
        use et_runtime::etdump::{Clock, EventTracer, ProfileRecord};
        let (plain, _, n) = execute_time("many_adds.pte", "many_adds", runs);
        let mut records = vec![ProfileRecord::EMPTY; 4096];
        let mut tracer = EventTracer::new(&mut records, Clock::monotonic());
        let (min, median, _) = execute_time_with("many_adds.pte", "many_adds", runs, |m| {
            tracer.clear();
            m.execute_traced(&tracer).unwrap();
        });
        println!(
            "many_adds execute_traced: min {min:?}, median {median:?} => {:.1} ns per recorded KernelCall over execute's {:.1} ns",
            (min.as_nanos() as f64 - plain.as_nanos() as f64) / n as f64,
            plain.as_nanos() as f64 / n as f64,
        );
    }
    if wanted("many_adds execute (2 threads)") {
        let (min, median, n) = execute_time_threads("many_adds.pte", "many_adds", runs, 2);
        println!(
            "many_adds execute (2 threads): min {:?}, median {:?} => {:.1} ns per instruction (not slower than 1 thread)",
            min,
            median,
            min.as_nanos() as f64 / n as f64
        );
    }
    if wanted("many_adds load_method") {
        let (min, median) = load_method_time("many_adds.pte", runs);
        println!("many_adds load_method: min {min:?}, median {median:?} (budget 60 us)");
    }
    if wanted("mv2 load_method") {
        let (min, median) = load_method_time("mv2.pte", runs);
        println!("mv2 load_method: min {min:?}, median {median:?} (budget 100 us)");
    }
    if wanted("mv2 execute") {
        let (min, median, _) = execute_time("mv2.pte", "mv2", if quick { 1 } else { 20 });
        println!("mv2 execute (single thread): min {min:?}, median {median:?} (budget 7 ms: 2x ExecuTorch+XNNPACK)");
    }
    if wanted("mv2 execute (2 threads)") {
        let (min, median, _) =
            execute_time_threads("mv2.pte", "mv2", if quick { 1 } else { 20 }, 2);
        println!(
            "mv2 execute (2 threads): min {min:?}, median {median:?} (budget: 1.7x faster than one thread)"
        );
    }
    if wanted("tiny_transformer execute") {
        let (min, median, _) = execute_time("tiny_transformer.pte", "tiny_transformer", runs);
        println!(
            "tiny_transformer execute (single thread): min {min:?}, median {median:?} (budget 40 us)"
        );
    }
    if wanted("mv2_xnnpack execute") {
        let (min, median, _) =
            execute_time("mv2_xnnpack.pte", "mv2_xnnpack", if quick { 1 } else { 20 });
        println!(
            "mv2_xnnpack execute (etch's XNNPACK backend, single thread): min {min:?}, median {median:?} (budget 7.2 ms: 2x ExecuTorch+XNNPACK)"
        );
    }
    if wanted("mv2_xnnpack_q8 execute") {
        let (min, median, _) = execute_time(
            "mv2_xnnpack_q8.pte",
            "mv2_xnnpack_q8",
            if quick { 1 } else { 20 },
        );
        println!(
            "mv2_xnnpack_q8 execute (etch's XNNPACK backend, qint8, single thread): min {min:?}, median {median:?}"
        );
    }
    if wanted("tiny_transformer_xnnpack execute") {
        let (min, median, _) = execute_time(
            "tiny_transformer_xnnpack.pte",
            "tiny_transformer_xnnpack",
            runs,
        );
        println!(
            "tiny_transformer_xnnpack execute (single thread): min {min:?}, median {median:?}"
        );
    }
}
