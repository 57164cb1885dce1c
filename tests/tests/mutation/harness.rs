//! Running one (possibly corrupted) file through the whole path, turning panics and hangs
//! into test failures, and counting outcomes.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use et_runtime::{
    DataFile, FileLoader, MemoryManager, MethodBufferSizes, MethodBuffers, Program, ScalarType,
    Verification,
};
use et_schema::bundled::{BundledProgram, BundledValue};

/// The most bytes one method's buffers may take: every allocation a corrupted file
/// asks for is checked against this before it is made.
pub const MEMORY_LIMIT: usize = 64 << 20;
/// Kernel scratch per method.
const SCRATCH: usize = 64 << 10;
/// A case running longer than this is a hang: the process exits naming it.
const HANG: Duration = Duration::from_secs(30);

/// splitmix64: a tiny deterministic generator, so every case is reproducible from its
/// seed.
#[derive(Debug, Clone)]
pub struct Prng(u64);

impl Prng {
    pub fn new(seed: u64) -> Prng {
        Prng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The inputs a fixture's io.yaml gives its method.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub method: String,
    pub tensors: Vec<(ScalarType, Vec<usize>, Vec<u8>)>,
}

/// Outcome counts of one test.
#[derive(Debug, Default)]
pub struct Stats {
    pub files: usize,
    pub ok: usize,
    pub err: usize,
    pub failures: Vec<String>,
}

impl Stats {
    /// Runs `case` (true: every step returned `Ok`) as one mutated file named `label`.
    pub fn case(&mut self, label: impl FnOnce() -> String, case: impl FnOnce() -> bool) {
        let label = label();
        watch(&label);
        self.files += 1;
        let outcome = catch_unwind(AssertUnwindSafe(case));
        if std::env::var_os("ETCH_MUTATION_VERBOSE").is_some() {
            println!("{label}: {outcome:?}");
        }
        match outcome {
            Ok(true) => self.ok += 1,
            Ok(false) => self.err += 1,
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                self.failures.push(format!("{label}: panicked: {msg}"));
            }
        }
        unwatch();
    }

    /// Prints the counts (for the record) and fails on any panic.
    pub fn finish(self, what: &str, kinds: &[(&str, usize)]) {
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "mutation {what}: {} files ({}), {} Ok, {} Err",
            self.files,
            kinds.join(", "),
            self.ok,
            self.err
        );
        assert!(
            self.failures.is_empty(),
            "{what}: {} cases panicked:\n{}",
            self.failures.len(),
            self.failures[..self.failures.len().min(20)].join("\n")
        );
    }
}

/// The cases running now, by thread, with their start time.
fn running() -> &'static Mutex<HashMap<ThreadId, (Instant, String)>> {
    static RUNNING: OnceLock<Mutex<HashMap<ThreadId, (Instant, String)>>> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

/// Registers the current case with the watchdog (started on first use): a case that
/// does not finish within [`HANG`] ends the test process with its name, since a hung
/// thread cannot be stopped from outside.
fn watch(label: &str) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if !STARTED.swap(true, Ordering::SeqCst) {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(500));
            let map = running().lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, (_, label))) = map.iter().find(|(_, (t, _))| t.elapsed() > HANG) {
                eprintln!("mutation case hung for over {HANG:?}: {label}");
                std::process::exit(1);
            }
        });
    }
    let mut map = running().lock().unwrap_or_else(|e| e.into_inner());
    map.insert(
        std::thread::current().id(),
        (Instant::now(), label.to_string()),
    );
}

fn unwatch() {
    let mut map = running().lock().unwrap_or_else(|e| e.into_inner());
    map.remove(&std::thread::current().id());
}

/// Loads `bytes` (with `data` as its one `.ptd`), then on every method: load_method,
/// set the inputs (the fixture's for its method, zeros elsewhere or when refused),
/// execute, read the outputs. True when every step of every method returned `Ok`.
pub fn run_program(bytes: &[u8], data: Option<&[u8]>, inputs: &Inputs) -> bool {
    let data_loader = FileLoader::from_bytes(data.unwrap_or(&[]));
    let data = match data.map(|_| DataFile::load(&data_loader, "data.ptd")) {
        Some(Err(_)) => return false,
        Some(Ok(d)) => Some(d),
        None => None,
    };
    let files: Vec<&DataFile<'_>> = data.iter().collect();
    run_program_with(bytes, &files, inputs)
}

/// [`run_program`] with data files already loaded (a large one is read once).
pub fn run_program_with(bytes: &[u8], files: &[&DataFile<'_>], inputs: &Inputs) -> bool {
    let loader = FileLoader::from_bytes(bytes);
    let Ok(program) = Program::load_with_data(&loader, Verification::default(), files) else {
        return false;
    };
    let names: Vec<&str> = program.method_names().collect();
    let mut ok = true;
    for name in names {
        let given = (name == inputs.method).then_some(&inputs.tensors[..]);
        ok &= run_method(&program, name, given.unwrap_or(&[])).is_some();
    }
    ok
}

/// One method: `None` at the first `Err`.
fn run_method(
    program: &Program<'_>,
    name: &str,
    inputs: &[(ScalarType, Vec<usize>, Vec<u8>)],
) -> Option<()> {
    // Sizes come from the (corrupted) file and are checked against the limit before
    // anything is allocated.
    let sizes = MethodBufferSizes::for_program_method(program, name, SCRATCH).ok()?;
    let mut buffers = MethodBuffers::allocate(&sizes, MEMORY_LIMIT).ok()?;
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method(name, &mut memory).ok()?;
    // A jump back can loop forever: bound the instructions one execute may run.
    let budget = 4 * method.meta().num_instructions() as u64 + 10_000;
    method.set_instruction_limit(budget);
    // Inputs the fixture gives must be accepted; the others (or refused ones) are zeros.
    let mut ok = true;
    for i in 0..method.num_inputs() {
        let set = match inputs.get(i) {
            Some((dtype, sizes, data)) => method.set_input_bytes(i, *dtype, sizes, data).is_ok(),
            None => false,
        };
        if !set {
            ok &= inputs.get(i).is_none();
            if let Ok(t) = method.input_tensor_mut(i) {
                let _ = t.bytes_mut().map(|b| b.fill(0));
            }
        }
    }
    method.execute().ok()?;
    for i in 0..method.num_outputs() {
        let out = method.output(i).ok()?;
        if let Some(t) = out.as_tensor() {
            t.to_row_major_bytes().ok()?;
        }
    }
    ok.then_some(())
}

/// A bundled program: parse it, then run its program on each suite's first case inputs.
pub fn run_bundled(file: &[u8]) -> bool {
    let Ok(bundled) = BundledProgram::parse(file) else {
        return false;
    };
    let Ok(program) = bundled.program() else {
        return false;
    };
    let mut ok = true;
    for s in 0..bundled.num_suites() {
        let Ok(suite) = bundled.suite(s) else {
            ok = false;
            continue;
        };
        for c in 0..suite.num_cases().min(2) {
            let Ok(case) = suite.case(c) else {
                ok = false;
                continue;
            };
            let mut inputs = Inputs {
                method: suite.method.to_string(),
                tensors: Vec::new(),
            };
            for i in 0..case.num_inputs() {
                let Ok(BundledValue::Tensor(t)) = case.input(i) else {
                    ok = false;
                    continue;
                };
                let sizes: Option<Vec<usize>> = (0..t.dim()).map(|d| t.size(d).ok()).collect();
                let Some(sizes) = sizes else {
                    ok = false;
                    continue;
                };
                inputs.tensors.push((t.dtype, sizes, t.data.to_vec()));
            }
            ok &= run_program(program, None, &inputs);
        }
    }
    ok
}
