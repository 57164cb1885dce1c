//! Bundled programs (`.bpte`: a program with test cases): every command that takes a
//! model runs the program inside one in place, and `etch verify` runs each method's test
//! cases and compares the outputs with the expected ones.

use std::path::Path;

use et_runtime::{
    BufferLoader, DataLoader, EValue, MemoryManager, MethodBufferSizes, MethodBuffers, MmapLoader,
    Program, ScalarType,
};
use et_schema::bundled::{
    is_bundled, BundledProgram, BundledTensor, BundledValue, TestCase, TestSuite,
};

use crate::{format, Failure};

/// The loader of the program in `map`: the whole file for a `.pte`, the embedded
/// program (used in place, no copy) for a bundled program.
pub fn program_loader<'m>(model: &Path, map: &'m MmapLoader) -> Result<BufferLoader<'m>, Failure> {
    let bytes = map.load(0, map.size())?;
    let program = if is_bundled(bytes) {
        BundledProgram::parse(bytes)
            .and_then(|b| b.program())
            .map_err(|e| Failure(format!("{}: {e}", model.display())))?
    } else {
        bytes
    };
    BufferLoader::new(program).map_err(|_| {
        Failure(format!(
            "{}: the program inside is not 16-byte aligned in the file",
            model.display()
        ))
    })
}

/// What `etch verify` was asked to do.
pub struct VerifyRequest<'a> {
    pub model: &'a Path,
    pub rtol: f64,
    pub atol: f64,
    pub max_memory_mib: usize,
}

/// Runs every test case; prints one line per case; fails naming every mismatch.
pub fn verify(req: &VerifyRequest<'_>) -> Result<(), Failure> {
    let model = req.model;
    let shown = model.display();
    let map = crate::open(model)?;
    let bytes = map.load(0, map.size())?;
    if !is_bundled(bytes) {
        return Err(Failure(format!(
            "{shown}: not a bundled program (no BP08 identifier); `etch verify` checks .bpte files"
        )));
    }
    let bundle = BundledProgram::parse(bytes).map_err(|e| Failure(format!("{shown}: {e}")))?;
    let loader = program_loader(model, &map)?;
    let program = Program::load(&loader)
        .map_err(|e| Failure(format!("{shown}: cannot load the program inside: {e}")))?;
    let (mut cases, mut failures) = (0, Vec::new());
    for s in 0..bundle.num_suites() {
        let suite = bundle
            .suite(s)
            .map_err(|e| Failure(format!("{shown}: suite {s}: {e}")))?;
        for (c, result) in run_suite(&program, &suite, req).into_iter().enumerate() {
            let label = format!("{} case {c}", suite.method);
            cases += 1;
            match result {
                Ok(max_error) => println!("{label}: ok (largest error {max_error:.2e})"),
                Err(why) => {
                    println!("{label}: FAILED: {why}");
                    failures.push(format!("{label}: {why}"));
                }
            }
        }
    }
    if cases == 0 {
        return Err(Failure(format!(
            "{shown}: the bundled program has no test cases"
        )));
    }
    if failures.is_empty() {
        println!(
            "{cases} test cases passed (rtol {:e}, atol {:e})",
            req.rtol, req.atol
        );
        Ok(())
    } else {
        Err(Failure(format!(
            "{shown}: {} of {cases} test cases failed:\n{}",
            failures.len(),
            failures.join("\n")
        )))
    }
}

/// Loads the suite's method once (each case sets every input before it runs) and runs
/// every case: one result per case (a method that does not load fails them all).
fn run_suite(
    program: &Program<'_>,
    suite: &TestSuite<'_>,
    req: &VerifyRequest<'_>,
) -> Vec<Result<f64, String>> {
    let name = suite.method;
    let all_fail = |why: String| vec![Err(why); suite.num_cases()];
    let buffers = MethodBufferSizes::for_program_method(program, name, 64 << 20)
        .map_err(|e| format!("method `{name}`: {e}"))
        .and_then(|sizes| {
            MethodBuffers::allocate(&sizes, req.max_memory_mib.saturating_mul(1 << 20))
                .map_err(|e| format!("method `{name}`: {e} (--max-memory-mib)"))
        });
    let mut buffers = match buffers {
        Ok(b) => b,
        Err(why) => return all_fail(why),
    };
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = match program.load_method(name, &mut memory) {
        Ok(m) => m,
        Err(e) => return all_fail(format!("cannot load method `{name}`: {e}")),
    };
    (0..suite.num_cases())
        .map(|c| {
            let case = suite.case(c).map_err(|e| e.to_string())?;
            run_case(&mut method, &case, req)
        })
        .collect()
}

/// Runs one test case on its loaded method; the largest absolute error over its
/// outputs, or why it failed.
fn run_case(
    method: &mut et_runtime::Method<'_>,
    case: &TestCase<'_>,
    req: &VerifyRequest<'_>,
) -> Result<f64, String> {
    if case.num_inputs() != method.num_inputs() {
        return Err(format!(
            "{} inputs given, the method takes {}",
            case.num_inputs(),
            method.num_inputs()
        ));
    }
    for i in 0..case.num_inputs() {
        let value = case.input(i).map_err(|e| format!("input {i}: {e}"))?;
        set_input(method, i, value).map_err(|e| format!("input {i}: {e}"))?;
    }
    method
        .execute()
        .map_err(|e| format!("execute failed: {e}"))?;
    if case.num_expected_outputs() != method.num_outputs() {
        return Err(format!(
            "{} expected outputs, the method has {}",
            case.num_expected_outputs(),
            method.num_outputs()
        ));
    }
    let mut largest = 0.0f64;
    for o in 0..method.num_outputs() {
        let want = case
            .expected_output(o)
            .map_err(|e| format!("output {o}: {e}"))?;
        let got = method.output(o).map_err(|e| format!("output {o}: {e}"))?;
        let error = compare(&got, want, req).map_err(|e| format!("output {o}: {e}"))?;
        largest = largest.max(error);
    }
    Ok(largest)
}

fn set_input(
    method: &mut et_runtime::Method<'_>,
    i: usize,
    v: BundledValue<'_>,
) -> Result<(), String> {
    match v {
        BundledValue::Tensor(t) => {
            let sizes = tensor_sizes(&t)?;
            if !is_contiguous(&t) {
                return Err(
                    "a test tensor with a non-contiguous dim order is not supported".into(),
                );
            }
            method
                .set_input_bytes(i, t.dtype, &sizes, t.data)
                .map_err(|e| e.to_string())
        }
        BundledValue::Int(v) => method
            .set_input_scalar(i, EValue::Int(v))
            .map_err(|e| e.to_string()),
        BundledValue::Bool(v) => method
            .set_input_scalar(i, EValue::Bool(v))
            .map_err(|e| e.to_string()),
        BundledValue::Double(v) => method
            .set_input_scalar(i, EValue::Double(v))
            .map_err(|e| e.to_string()),
    }
}

fn tensor_sizes(t: &BundledTensor<'_>) -> Result<Vec<usize>, String> {
    (0..t.dim())
        .map(|d| t.size(d).map_err(|e| e.to_string()))
        .collect()
}

fn is_contiguous(t: &BundledTensor<'_>) -> bool {
    t.dim_order
        .iter()
        .enumerate()
        .all(|(i, &d)| usize::from(d) == i)
}

/// The largest absolute error of `got` against `want`: floats within
/// `atol + rtol * |want|` (NaN matches NaN), everything else exactly; else why not.
fn compare(
    got: &EValue<'_>,
    want: BundledValue<'_>,
    req: &VerifyRequest<'_>,
) -> Result<f64, String> {
    match (got, want) {
        (EValue::Tensor(g), BundledValue::Tensor(w)) => {
            let sizes = tensor_sizes(&w)?;
            if g.dtype() != w.dtype || g.sizes() != sizes.as_slice() {
                return Err(format!(
                    "expected {} {:?}, got {} {:?}",
                    w.dtype,
                    sizes,
                    g.dtype(),
                    g.sizes()
                ));
            }
            let got = g.to_row_major_bytes().map_err(|e| e.to_string())?;
            let es = w.dtype.element_size();
            if w.data.len() != got.len() {
                return Err(format!(
                    "the expected data has {} bytes, the output {}",
                    w.data.len(),
                    got.len()
                ));
            }
            let exact = !matches!(
                w.dtype,
                ScalarType::Float | ScalarType::Double | ScalarType::Half | ScalarType::BFloat16
            );
            let (mut bad, mut largest, mut worst) = (0usize, 0.0f64, None);
            for (k, (a, b)) in got
                .chunks_exact(es)
                .zip(w.data.chunks_exact(es))
                .enumerate()
            {
                let (Some(a), Some(b)) = (w.dtype.read_f64(a), w.dtype.read_f64(b)) else {
                    return Err(format!("cannot compare {} tensors", w.dtype));
                };
                if a.is_nan() && b.is_nan() {
                    continue;
                }
                let error = (a - b).abs();
                let ok = if exact {
                    a == b
                } else {
                    error <= req.atol + req.rtol * b.abs()
                };
                if !ok {
                    bad += 1;
                }
                if error.is_nan() || error > largest {
                    largest = error;
                    worst = Some(k);
                }
            }
            if bad > 0 {
                let k = worst.unwrap_or(0);
                let show = format::element_formatter(w.dtype)?;
                let element = |data: &[u8]| show(&data[k * es..(k + 1) * es]);
                return Err(format!(
                    "{bad} of {} elements differ; largest error {largest:.3e} at element {k} (got {}, expected {})",
                    got.len() / es.max(1),
                    element(&got),
                    element(w.data)
                ));
            }
            Ok(largest)
        }
        (EValue::Int(g), BundledValue::Int(w)) if *g == w => Ok(0.0),
        (EValue::Bool(g), BundledValue::Bool(w)) if *g == w => Ok(0.0),
        (EValue::Double(g), BundledValue::Double(w)) => {
            let error = (g - w).abs();
            if error <= req.atol + req.rtol * w.abs() || (g.is_nan() && w.is_nan()) {
                Ok(error)
            } else {
                Err(format!("got {g}, expected {w}"))
            }
        }
        (g, w) => Err(format!(
            "got {}, expected {w:?}",
            format::describe(g, format::Printing::Summary)?
        )),
    }
}
