//! Runtime benchmarks against the budgets in design.md (run with `cargo bench -p etch-tests`):
//! dispatch overhead per instruction on `many_adds.pte` (1000 one-element adds),
//! `load_method` on `many_adds.pte` and `mv2.pte`, and `mv2.pte` single-threaded execute.
//!
//! A plain harness (no benchmarking crate): each measurement is repeated and the minimum
//! and median are printed. Nothing here asserts on time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use et_runtime::{FileLoader, MemoryManager, Program};
use etch_tests::{fixture, MethodBuffers};

use et_ops as _;

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[0], samples[samples.len() / 2])
}

fn measure(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f(); // warm up
    stats(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
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
        black_box(
            program
                .load_method("forward", &mut memory)
                .expect("kernels for the program are linked"),
        );
    })
}

fn execute_time(name: &str, input: &str, runs: usize) -> (Duration, Duration, usize) {
    let loader = FileLoader::open(fixture(name)).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    for i in 0..meta.num_inputs() {
        let info = meta.input_tensor(i).unwrap();
        let bytes = std::fs::read(fixture(&format!("{input}.in{i}.bin"))).unwrap();
        method
            .set_input_bytes(i, info.dtype, info.sizes(), &bytes)
            .unwrap();
    }
    let (min, median) = measure(runs, || method.execute().unwrap());
    (min, median, meta.num_instructions())
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing special. Keep
    // the test-mode run short.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 3 } else { 200 };

    let (min, median, n) = execute_time("many_adds.pte", "many_adds", runs);
    println!(
        "many_adds execute: min {:?}, median {:?} => {:.1} ns per instruction (budget 10 ns)",
        min,
        median,
        min.as_nanos() as f64 / n as f64
    );
    let (min, median) = load_method_time("many_adds.pte", runs);
    println!("many_adds load_method: min {min:?}, median {median:?} (budget 100 us)");
    let (min, median) = load_method_time("mv2.pte", runs);
    println!("mv2 load_method: min {min:?}, median {median:?} (budget 100 us)");
    let (min, median, _) = execute_time("mv2.pte", "mv2", if quick { 1 } else { 20 });
    println!("mv2 execute (single thread): min {min:?}, median {median:?} (gate 90 ms)");
}
