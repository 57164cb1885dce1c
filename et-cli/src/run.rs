//! `etch run`: load a program, execute one method (repeatedly when timing), print or write
//! its outputs.

use std::path::Path;
use std::time::Instant;

use et_runtime::etdump::{Clock, EventTracer};
use et_runtime::{
    BufferError, EValue, MemoryManager, Method, MethodBufferSizes, MethodBuffers, MethodMeta,
    Program, Tag,
};

use crate::data::{load_program, DataFiles};
use crate::input::{self, InputData};
use crate::{format, open, pool, profile, Failure};

/// What `etch run` was asked to do.
pub struct RunRequest<'a> {
    pub model: &'a Path,
    pub method: Option<&'a str>,
    pub inputs: &'a [String],
    pub data: &'a [std::path::PathBuf],
    pub iterations: u32,
    /// Threads for the kernels (`--threads`; 0 and 1 both mean this thread only).
    pub threads: usize,
    pub json: bool,
    pub output_dir: Option<&'a Path>,
    pub scratch_mib: usize,
    pub max_memory_mib: usize,
    pub printing: format::Printing,
    /// Also list each tensor output's `k` largest elements with their indices.
    pub top_k: Option<usize>,
    /// Print the per-operator profile.
    pub profile: bool,
    /// In the profile, a row per delegate node rather than per node kind.
    pub profile_nodes: bool,
    /// Write an ETDump of the load and every execute here.
    pub etdump: Option<&'a Path>,
}

pub fn run(req: &RunRequest<'_>) -> Result<(), Failure> {
    let model = req.model;
    let pool = pool::Pool::new(req.threads)?;
    let map = open(model)?;
    let loader = crate::bundled::program_loader(model, &map)?;
    let data_maps = DataFiles::open(req.data)?;
    let data_files = data_maps.load()?;
    let data_refs: Vec<_> = data_files.iter().collect();
    let program = load_program(model, &loader, &data_refs)?;
    let name = pick_method(&program, req.method)?;
    let meta = program.method_meta(name)?;
    let data = read_inputs(&meta, name, req.inputs)?;

    let mib = |n: usize| n.saturating_mul(1 << 20);
    let sizes = MethodBufferSizes::for_program_method(&program, name, mib(req.scratch_mib))?;
    let mut buffers = MethodBuffers::allocate(&sizes, mib(req.max_memory_mib)).map_err(|e| {
        let hint = match e {
            BufferError::OverLimit { .. } => " (--max-memory-mib)",
            _ => "",
        };
        Failure(format!("{}: method `{name}`: {e}{hint}", model.display()))
    })?;
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    // Only a profiled run needs the buffer and the clock (whose first use measures the
    // time-stamp counter's period).
    let mut records = Vec::new();
    let tracer = (req.profile || req.etdump.is_some()).then(|| {
        records = profile::record_buffer(&program, &meta, name, req.iterations);
        EventTracer::new(&mut records, Clock::monotonic())
    });
    let started = Instant::now();
    let loaded = match &tracer {
        Some(tracer) => program.load_method_traced(name, &mut memory, tracer),
        None => program.load_method(name, &mut memory),
    };
    let load_us = started.elapsed().as_secs_f64() * 1e6;
    let mut method = loaded.map_err(|e| {
        let mut msg = format!("{}: cannot load method `{name}`: {e}", model.display());
        // A load stops at its first problem; a user fixing a build wants them all.
        let kernels = missing_kernel_report(&meta);
        if !kernels.is_empty() {
            msg.push_str("\nmissing kernels:\n");
            msg.push_str(&kernels);
        }
        msg.push_str(&missing_node_kind_report(&program, name));
        Failure(msg)
    })?;

    // The memory plan may reuse an input's bytes for intermediates (see
    // `MethodMeta::input_is_preserved`), so every run starts by copying the inputs in, as
    // ExecuTorch's `Module::forward` does; only `execute` is timed. Every run of a
    // stateless method must then reproduce the first run's outputs bit for bit: anything
    // else is state leaking between executes. A stateful one (mutable buffers, a KV
    // cache) carries its state from run to run by design: its runs are not compared.
    let stateful = is_stateful(&program, &meta);
    let mut times = Vec::with_capacity(req.iterations as usize);
    let mut first: Vec<OutputBits> = Vec::new();
    for run in 1..=req.iterations {
        set_inputs(&mut method, &meta, &data)?;
        let t0 = Instant::now();
        let executed = pool.execute(&mut method, tracer.as_ref());
        executed.map_err(|e| Failure(format!("{}: execute failed: {e}", model.display())))?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        let outputs = output_bits(&method)?;
        if run == 1 {
            first = outputs;
        } else if !stateful {
            check_same(&first, &outputs, run)?;
        }
    }
    times.sort_by(f64::total_cmp);
    let (min, median, max) = (times[0], times[times.len() / 2], times[times.len() - 1]);

    // The files are the first run's outputs; what is printed below is read from the
    // method, whose last run equals the first (checked).
    if let Some(dir) = req.output_dir {
        write_outputs(&first, dir)?;
    }
    if let (Some(path), Some(tracer)) = (req.etdump, &tracer) {
        profile::write_etdump(&method, tracer, path)?;
    }
    let profile = tracer
        .as_ref()
        .filter(|_| req.profile)
        .map(|tracer| profile::Profile::new(&method, tracer, req.profile_nodes));
    let iterations = req.iterations;
    if req.json {
        let outputs = (0..method.num_outputs())
            .map(|i| {
                let output = method.output(i)?;
                let mut json = format::json_value(&output).map_err(Failure)?;
                if let (Some(k), EValue::Tensor(t)) = (req.top_k, &output) {
                    let top: Vec<String> = format::top_k(t, k)
                        .map_err(Failure)?
                        .into_iter()
                        .map(|(index, v)| format!("{{\"index\":{index},\"value\":{v}}}"))
                        .collect();
                    json.pop();
                    json.push_str(&format!(",\"top_k\":[{}]}}", top.join(",")));
                }
                Ok(json)
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        let profile = profile
            .map(|p| format!(",\"profile\":{}", p.json()))
            .unwrap_or_default();
        println!(
            "{{\"model\":{},\"method\":{},\"iterations\":{iterations},\"stateful\":{stateful},\"load_method_us\":{load_us:.1},\"execute_us\":{{\"min\":{min:.1},\"median\":{median:.1},\"max\":{max:.1}}},\"outputs\":[{}]{profile}}}",
            format::json_str(&model.display().to_string()),
            format::json_str(name),
            outputs.join(",")
        );
    } else {
        for i in 0..method.num_outputs() {
            let output = method.output(i)?;
            println!(
                "Output {i}: {}",
                format::describe(&output, req.printing).map_err(Failure)?
            );
            if let (Some(k), EValue::Tensor(t)) = (req.top_k, &output) {
                let top: Vec<String> = format::top_k(t, k)
                    .map_err(Failure)?
                    .into_iter()
                    .map(|(index, v)| format!("[{index}] {v}"))
                    .collect();
                println!("  top {k}: {}", top.join(", "));
            }
        }
        if iterations > 1 {
            let outputs = if stateful {
                "the method keeps state (mutable buffers, a KV cache), which carries over from \
                 run to run: outputs not compared; shown: the last run's"
            } else {
                "outputs identical"
            };
            println!(
                "load_method: {load_us:.1} us; execute over {iterations} runs (inputs set before each, {outputs}): min {min:.1} us, median {median:.1} us, max {max:.1} us"
            );
        }
        if let Some(profile) = profile {
            print!("\n{}", profile.text());
        }
    }
    Ok(())
}

/// Whether the method keeps state between executes: it has mutable buffers initialized
/// from the program, or the program says it keeps a KV cache (ExecuTorch's LLM exporter
/// plans the caches as ordinary zeroed buffers and writes a `use_kv_cache` method).
fn is_stateful(program: &Program<'_>, meta: &MethodMeta<'_>) -> bool {
    const KV_CACHE: &str = "use_kv_cache";
    if meta.num_mutable_buffers() > 0 {
        return true;
    }
    // A constant method: loaded from the program already open, in buffers of its own.
    let Ok(mut buffers) = MethodBuffers::for_program_method(program, KV_CACHE, 0) else {
        return false;
    };
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let Ok(mut method) = program.load_method(KV_CACHE, &mut memory) else {
        return false;
    };
    method.execute().is_ok() && matches!(method.output(0), Ok(EValue::Bool(true) | EValue::Int(1)))
}

/// The node kinds of the method's delegates this build lacks, one line per delegate
/// (empty when it has them all).
fn missing_node_kind_report(program: &Program<'_>, method: &str) -> String {
    let Ok(delegates) = crate::delegates::summarize(program, method) else {
        return String::new();
    };
    let mut report = String::new();
    for (index, d) in delegates.iter().enumerate() {
        let missing = d.missing_node_kinds();
        // Without the backend the load error names it; its kinds would only add noise.
        let linked = et_runtime::backend::find_backend(&d.backend).is_some();
        if linked && !missing.is_empty() {
            report.push_str(&format!(
                "\nnode kinds this build lacks in delegate {index} ({}): {}",
                d.backend,
                missing.join(", ")
            ));
        }
    }
    report
}

fn pick_method<'p>(program: &Program<'p>, requested: Option<&str>) -> Result<&'p str, Failure> {
    let names: Vec<&str> = program.method_names().collect();
    match requested {
        Some(m) => names.iter().copied().find(|n| *n == m).ok_or_else(|| {
            Failure(format!(
                "no method `{m}`; the program has: {}",
                names.join(", ")
            ))
        }),
        None if names.contains(&"forward") => Ok("forward"),
        None if names.len() == 1 => Ok(names[0]),
        None => Err(Failure(format!(
            "the program has several methods; pick one with --method: {}",
            names.join(", ")
        ))),
    }
}

fn missing_kernel_report(meta: &MethodMeta<'_>) -> String {
    let mut lines: Vec<String> = et_runtime::registry::missing_kernels(meta)
        .map(|c| {
            format!(
                "  {} (kernel key {}) at instruction {}",
                c.operator, c.key, c.instruction
            )
        })
        .collect();
    lines.dedup();
    lines.join("\n")
}

/// The method's tensor inputs read from `specs` (ones where none is given); `None` for
/// non-tensor inputs, which keep their exported values.
fn read_inputs(
    meta: &MethodMeta<'_>,
    name: &str,
    specs: &[String],
) -> Result<Vec<Option<InputData>>, Failure> {
    if specs.len() > meta.num_inputs() {
        return Err(Failure(format!(
            "{} inputs given but method `{name}` takes {}",
            specs.len(),
            meta.num_inputs()
        )));
    }
    let mut data = Vec::with_capacity(meta.num_inputs());
    for i in 0..meta.num_inputs() {
        if meta.input_tag(i)? != Tag::Tensor {
            data.push(None);
            continue;
        }
        let info = meta.input_tensor(i)?;
        data.push(Some(match specs.get(i) {
            Some(spec) => input::read_input(spec, &info).map_err(Failure)?,
            None => input::ones(&info),
        }));
    }
    Ok(data)
}

fn set_inputs(
    method: &mut Method<'_>,
    meta: &MethodMeta<'_>,
    data: &[Option<InputData>],
) -> Result<(), Failure> {
    for (i, d) in data.iter().enumerate() {
        let Some(d) = d else { continue };
        method
            .set_input_checked(i, d.dtype, &d.sizes, &d.bytes)
            .map_err(|e| {
                let expects = meta
                    .input_tensor(i)
                    .map(|t| format!(" (method expects {:?})", t.sizes()))
                    .unwrap_or_default();
                Failure(format!("{e}{expects}"))
            })?;
    }
    Ok(())
}

/// One output as bits: a tensor's dtype, sizes and row-major bytes, or a scalar's
/// printed form (exact for every scalar kind).
#[derive(PartialEq)]
enum OutputBits {
    Tensor {
        dtype: et_runtime::ScalarType,
        sizes: Vec<usize>,
        bytes: Vec<u8>,
    },
    Other(String),
}

fn output_bits(method: &Method<'_>) -> Result<Vec<OutputBits>, Failure> {
    (0..method.num_outputs())
        .map(|i| {
            Ok(match method.output(i)? {
                EValue::Tensor(t) => OutputBits::Tensor {
                    dtype: t.dtype(),
                    sizes: t.sizes().to_vec(),
                    bytes: t.to_row_major_bytes()?,
                },
                EValue::Double(d) => OutputBits::Other(format!("{:#x}", d.to_bits())),
                other => OutputBits::Other(
                    format::describe(&other, format::Printing::Full).map_err(Failure)?,
                ),
            })
        })
        .collect()
}

/// `Ok` when run `run`'s outputs equal the first run's bit for bit; else the first
/// difference.
fn check_same(first: &[OutputBits], now: &[OutputBits], run: u32) -> Result<(), Failure> {
    for (i, (a, b)) in first.iter().zip(now).enumerate() {
        if a == b {
            continue;
        }
        let what = match (a, b) {
            (
                OutputBits::Tensor {
                    dtype,
                    sizes,
                    bytes,
                },
                OutputBits::Tensor {
                    sizes: now_sizes,
                    bytes: now_bytes,
                    ..
                },
            ) if sizes == now_sizes => {
                let size = dtype.element_size().max(1);
                let k = bytes
                    .chunks(size)
                    .zip(now_bytes.chunks(size))
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                let show = format::element_formatter(*dtype).map_err(Failure)?;
                let at = k * size..(k + 1) * size;
                format!(
                    "element {k} is {} (run 1: {})",
                    show(&now_bytes[at.clone()]),
                    show(&bytes[at])
                )
            }
            (OutputBits::Tensor { sizes, .. }, OutputBits::Tensor { sizes: s, .. }) => {
                format!("sizes are {s:?} (run 1: {sizes:?})")
            }
            _ => "the value differs".to_string(),
        };
        return Err(Failure(format!(
            "run {run} of the same inputs gave a different output {i} than run 1: {what}; state leaks between executes"
        )));
    }
    Ok(())
}

fn write_outputs(outputs: &[OutputBits], dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))?;
    for (i, output) in outputs.iter().enumerate() {
        if let OutputBits::Tensor { bytes, .. } = output {
            let path = dir.join(format!("output{i}.bin"));
            std::fs::write(&path, bytes)
                .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::ScalarType;

    fn floats(v: &[f32]) -> OutputBits {
        OutputBits::Tensor {
            dtype: ScalarType::Float,
            sizes: vec![v.len()],
            bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    #[test]
    fn identical_runs_pass_and_a_difference_names_run_output_and_element() {
        let first = [floats(&[1.0, 2.0]), floats(&[3.0, 4.0, 5.0])];
        assert!(check_same(&first, &[floats(&[1.0, 2.0]), floats(&[3.0, 4.0, 5.0])], 2).is_ok());
        let Err(Failure(msg)) =
            check_same(&first, &[floats(&[1.0, 2.0]), floats(&[3.0, 4.0, 6.5])], 3)
        else {
            panic!("a changed element must fail");
        };
        assert!(
            msg.contains("run 3")
                && msg.contains("output 1")
                && msg.contains("element 2 is 6.5 (run 1: 5)"),
            "{msg}"
        );
        // NaN payloads compare by bits, so a run that reproduces a NaN passes.
        let nan = [floats(&[f32::NAN])];
        assert!(check_same(&nan, &[floats(&[f32::NAN])], 2).is_ok());
    }
}
