//! End to end: the LLM programs ExecuTorch's `export_llm` wrote (tests/fixtures/llm),
//! run step by step, prefill then decode, on one loaded method, so that the KV caches
//! (the program's mutable buffers) carry from one `execute` to the next. Each step's
//! logits are compared with ExecuTorch's, and each step's argmax with its greedy tokens.

use std::path::PathBuf;
use std::time::Instant;

use et_runtime::{MemoryManager, MmapLoader, Program, ScalarType};

// The kernels register themselves through the linker: name each kernel crate once.
use et_llm as _;
use et_ops as _;
use et_xnnpack as _;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llm")
}

struct Step {
    tokens: Vec<i64>,
    input_pos: i64,
    logits: Vec<f32>,
}

struct Case {
    program: String,
    method: String,
    greedy: Vec<i64>,
    steps: Vec<Step>,
}

fn read_case(name: &str) -> Case {
    let dir = dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.llm.yaml"))).unwrap();
    let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let ints = |v: &serde_yaml::Value| -> Vec<i64> {
        v.as_sequence()
            .unwrap()
            .iter()
            .map(|t| t.as_i64().unwrap())
            .collect()
    };
    let steps = y["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|s| {
            let bytes = std::fs::read(dir.join(s["logits"].as_str().unwrap())).unwrap();
            Step {
                tokens: ints(&s["tokens"]),
                input_pos: s["input_pos"].as_i64().unwrap(),
                logits: bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            }
        })
        .collect();
    Case {
        program: y["program"].as_str().unwrap().to_owned(),
        method: y["method"].as_str().unwrap().to_owned(),
        greedy: ints(&y["greedy_tokens"]),
        steps,
    }
}

/// Checks one step's logits: the worst error relative to max|want|, or what failed.
type Tolerance = dyn Fn(&[f32], &[f32]) -> Result<f64, String>;

fn argmax(v: &[f32]) -> i64 {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as i64
}

fn le_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs every step of `name` on one method. `check(step, got, want)` returns the worst
/// error of a step, or panics; returns the execute times in microseconds and every step's
/// logits.
fn run(
    name: &str,
    pool: Option<&dyn et_runtime::Parallel>,
    tol: &Tolerance,
) -> (Vec<f64>, Vec<Vec<f32>>) {
    let case = read_case(name);
    let path = dir().join(&case.program);
    let loader = MmapLoader::open(&path).unwrap();
    let program = Program::load(&loader).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buffers =
        et_runtime::MethodBuffers::for_program_method(&program, &case.method, 16 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program
        .load_method(&case.method, &mut memory)
        .unwrap_or_else(|e| panic!("{name}: load_method: {e}"));
    assert_eq!(
        case.steps.len(),
        case.greedy.len(),
        "{name}: one greedy token per step"
    );
    let mut times = Vec::new();
    let mut logits = Vec::new();
    for (k, step) in case.steps.iter().enumerate() {
        // The tokens input is dynamic ([1, n], n up to the bound): resized per step.
        method
            .set_input_checked(
                0,
                ScalarType::Long,
                &[1, step.tokens.len()],
                &le_bytes(&step.tokens),
            )
            .unwrap_or_else(|e| panic!("{name} step {k}: tokens: {e}"));
        method
            .set_input_checked(1, ScalarType::Long, &[1], &le_bytes(&[step.input_pos]))
            .unwrap_or_else(|e| panic!("{name} step {k}: input_pos: {e}"));
        let t0 = Instant::now();
        match pool {
            Some(p) => method.execute_with(p),
            None => method.execute(),
        }
        .unwrap_or_else(|e| panic!("{name} step {k}: execute: {e}"));
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        let out = method.output(0).unwrap();
        let t = out.as_tensor().expect("logits are a tensor");
        let got = t.data::<f32>().unwrap();
        assert_eq!(
            got.len(),
            step.logits.len(),
            "{name} step {k}: logits length"
        );
        let err = tol(got, &step.logits).unwrap_or_else(|e| panic!("{name} step {k}: {e}"));
        assert_eq!(
            argmax(got),
            case.greedy[k],
            "{name} step {k}: the argmax is not ExecuTorch's greedy token"
        );
        logits.push(got.to_vec());
        println!("{name} step {k}: {} tokens at {}, worst error {err:.3e} of max|want|, execute {:.1} us", step.tokens.len(), step.input_pos, times[k]);
    }
    (times, logits)
}

/// `max|got - want| <= rel * max|want|`: one bound for the whole logits vector, relative
/// to its largest magnitude (per-element relative errors explode near zero logits).
fn within(rel: f64) -> impl Fn(&[f32], &[f32]) -> Result<f64, String> {
    move |got, want| {
        let scale = want.iter().fold(0f64, |m, &w| m.max((w as f64).abs()));
        let (mut worst, mut at) = (0f64, 0);
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let d = (g as f64 - w as f64).abs();
            // A NaN difference counts as the worst.
            if d > worst || d.is_nan() {
                (worst, at) = (d, i);
            }
        }
        let e = worst / scale;
        if e <= rel {
            Ok(e)
        } else {
            Err(format!(
                "logit {at}: got {}, want {} (|diff| {worst:.3e} > {rel:e} x max|want| {scale:.3e})",
                got[at], want[at]
            ))
        }
    }
}

fn summary(name: &str, times: &[f64]) {
    let decode = &times[1..];
    let mean = decode.iter().sum::<f64>() / decode.len() as f64;
    let min = decode.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "{name}: prefill ({} us), decode steps mean {mean:.1} us, min {min:.1} us",
        times[0] as u64
    );
}

#[test]
fn llama_tiny_fp32_matches_executorch() {
    let (times, _) = run("llama_tiny_fp32", None, &within(1e-4));
    summary("llama_tiny_fp32", &times);
}

/// Activations are quantized per token at run time (asymmetric int8, the scale being the
/// token's range / 255). A float difference far below 1e-6 from another summation order
/// can move an activation across a rounding boundary, changing it by one step of that
/// scale; that step then goes through the 4-bit weights of the rest of the network. One
/// flipped activation of 64 moves a logit by about step x |w| (a few 1e-3 for these
/// weights), against logits of magnitude ~2: a few 1e-3 of max|want|. 1e-2 leaves room
/// for a handful of such flips per step while still catching any real error (a wrong
/// cache position or mask moves the logits by their own magnitude, ~0.5 of max).
#[test]
fn llama_tiny_8da4w_matches_executorch() {
    let (times, _) = run("llama_tiny_8da4w", None, &within(1e-2));
    summary("llama_tiny_8da4w", &times);
}

/// The same steps on a pool of two threads: whatever the kernels split, every step's
/// logits must be the single-threaded ones bit for bit.
fn pool_is_bit_identical(name: &str, tolerance: f64) {
    let pool = et_runtime::threads::ThreadPool::new(2).unwrap();
    let (_, serial) = run(name, None, &within(tolerance));
    let (_, pooled) = run(name, Some(&pool), &within(tolerance));
    for (k, (a, b)) in serial.iter().zip(&pooled).enumerate() {
        let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{name} step {k}: the pool changed the logits");
    }
}

#[test]
fn llama_tiny_fp32_on_a_pool_is_bit_identical() {
    pool_is_bit_identical("llama_tiny_fp32", 1e-4);
}

#[test]
fn llama_tiny_8da4w_on_a_pool_is_bit_identical() {
    pool_is_bit_identical("llama_tiny_8da4w", 1e-2);
}
