//! One `Program` shared by threads, each with its own `Method` and buffers: `mv2.pte`
//! and `tiny_transformer.pte` run repeatedly on four threads at once, and every output is
//! bit-identical to a single-threaded run.

use std::sync::Arc;

use et_runtime::{FileLoader, MemoryManager, Method, MethodBuffers, Program};
use etch_tests::{dtype_of, fixtures_dir, owned_outputs, IoSpec, OwnedOutput};

// Link the kernel library.
use et_ops as _;

const THREADS: usize = 4;

/// What the type system promises: a program may be shared, a method moved.
#[test]
fn program_is_sync_and_method_is_send() {
    fn sync<T: Sync + Send>() {}
    fn send<T: Send>() {}
    sync::<Program<'static>>();
    send::<Method<'static>>();
    send::<MethodBuffers>();
}

/// A fixture's program, loaded once, with its io.yaml.
struct Case {
    loader: FileLoader,
    spec: IoSpec,
}

impl Case {
    fn open(name: &str) -> Case {
        let spec = IoSpec::read(&fixtures_dir(), name);
        let loader = FileLoader::open(fixtures_dir().join(&spec.program)).unwrap();
        Case { loader, spec }
    }
}

/// Loads the spec's method of `program` into fresh buffers and runs it `times` times on
/// the spec's inputs, returning each run's outputs.
fn run(program: &Program<'_>, spec: &IoSpec, times: usize) -> Vec<Vec<OwnedOutput>> {
    let mut buffers = MethodBuffers::for_program_method(program, &spec.method, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method(&spec.method, &mut memory).unwrap();
    let inputs: Vec<Vec<u8>> = spec
        .inputs
        .iter()
        .map(|t| std::fs::read(fixtures_dir().join(&t.file)).unwrap())
        .collect();
    (0..times)
        .map(|_| {
            for (i, (t, data)) in spec.inputs.iter().zip(&inputs).enumerate() {
                method
                    .set_input_bytes(i, dtype_of(&t.dtype), &t.sizes, data)
                    .unwrap();
            }
            method.execute().unwrap();
            owned_outputs(&method).unwrap()
        })
        .collect()
}

#[test]
fn shared_programs_run_on_threads_with_identical_outputs() {
    let mv2 = Case::open("mv2");
    let tiny = Case::open("tiny_transformer");
    let mv2_program = Arc::new(Program::load(&mv2.loader).unwrap());
    let tiny_program = Program::load(&tiny.loader).unwrap();
    let mv2_reference = run(&mv2_program, &mv2.spec, 1).remove(0);
    let tiny_reference = run(&tiny_program, &tiny.spec, 1).remove(0);

    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|k| {
                // One program shared through an `Arc`, the other by reference.
                let mv2_program = Arc::clone(&mv2_program);
                let (tiny_program, mv2, tiny) = (&tiny_program, &mv2, &tiny);
                s.spawn(move || {
                    // Threads start on different models so that both run at once.
                    let mut outs = Vec::new();
                    for round in 0..2 {
                        if (k + round) % 2 == 0 {
                            outs.push(("mv2", run(&mv2_program, &mv2.spec, 2)));
                            outs.push(("tiny", run(tiny_program, &tiny.spec, 10)));
                        } else {
                            outs.push(("tiny", run(tiny_program, &tiny.spec, 10)));
                            outs.push(("mv2", run(&mv2_program, &mv2.spec, 2)));
                        }
                    }
                    outs
                })
            })
            .collect();
        for (k, h) in handles.into_iter().enumerate() {
            for (model, runs) in h.join().expect("no thread panicked") {
                let want = if model == "mv2" {
                    &mv2_reference
                } else {
                    &tiny_reference
                };
                for (r, got) in runs.iter().enumerate() {
                    assert!(got == want, "thread {k}, {model} run {r} differs");
                }
            }
        }
    });
}
