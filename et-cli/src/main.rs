//! `etch`: run, inspect and check ExecuTorch programs with etch's runtime.

mod bundled;
mod data;
mod delegates;
mod format;
#[cfg(feature = "llm")]
mod generate;
mod input;
mod ops;
mod pool;
mod profile;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use et_runtime::{BufferLoader, MmapLoader, Program};

// The kernel library registers its kernels by being linked; nothing else names it.
use et_ops as _;
// Registers the XNNPACK backend.
#[cfg(feature = "xnnpack")]
use et_xnnpack as _;
// Registers ExecuTorch's LLM custom operators (`llama::custom_sdpa.out`, ...).
#[cfg(feature = "llm")]
use et_llm as _;

#[derive(Parser)]
#[command(
    name = "etch",
    version,
    about = "Run and inspect ExecuTorch .pte programs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load a program and execute one of its methods.
    #[command(
        after_help = "Examples:\n  etch run tests/fixtures/mv2.pte --input tests/fixtures/mv2.in0.bin --top-k 3\n  etch run model.pte --input x.bin:3x8 --iterations 50 --threads 2 --json"
    )]
    Run {
        /// The .pte program.
        model: PathBuf,
        /// Method to run (default: `forward`, or the only method).
        #[arg(long)]
        method: Option<String>,
        /// Input files in order: raw little-endian `.bin` (shape from the method),
        /// `FILE:SHAPE` such as `x.bin:3x8`, or `.npy`. Missing inputs are ones.
        #[arg(long = "input", short = 'i')]
        inputs: Vec<String>,
        /// A `.ptd` data file holding named data the program refers to (its external
        /// weights); repeatable, searched in order after the program's own named data.
        #[arg(long = "data", short = 'd')]
        data: Vec<PathBuf>,
        /// Execute N times (inputs set before each run, only execute timed), check that
        /// every run's outputs equal the first's, and report load and execute timings.
        #[arg(long, default_value_t = 1)]
        iterations: u32,
        /// Threads for the kernels to split their work over (convolutions and matrix
        /// products; 1: everything on this thread). Needs the `threads` feature.
        #[arg(long, value_name = "N", default_value_t = 1)]
        threads: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Write each output as DIR/outputK.bin.
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Scratch memory for kernels, in MiB.
        #[arg(long, default_value_t = 64)]
        scratch_mib: usize,
        /// Refuse a program whose memory (method arena, planned buffers and scratch, sizes
        /// read from the file) exceeds this many MiB, before allocating any of it.
        #[arg(long, default_value_t = 4096)]
        max_memory_mib: usize,
        /// Print every element (by default a tensor over 1000 elements shows the first
        /// and last 3 of each dim around `...`, as PyTorch prints it).
        #[arg(long)]
        full: bool,
        /// Also print each tensor output's N largest elements with their flat indices
        /// (for classifier outputs).
        #[arg(long, value_name = "N")]
        top_k: Option<usize>,
        /// Time every KernelCall, DelegateCall and delegate node, and print a table per
        /// operator (calls, total, mean, min, max, share of the run) and the slowest
        /// calls (with --json, a "profile" member). Execute times then include the
        /// recording, two clock reads per call.
        #[arg(long)]
        profile: bool,
        /// With --profile, a row per delegate node (`XnnpackBackend: Conv2d #3`) instead
        /// of one per node kind: which layers take the time, or do not gain from threads.
        #[arg(long, requires = "profile")]
        profile_nodes: bool,
        /// Write an ETDump (.etdp) of the load and every execute to FILE, for
        /// ExecuTorch's Inspector.
        #[arg(long, value_name = "FILE")]
        etdump: Option<PathBuf>,
    },
    /// Run every test case of a bundled program (.bpte) and compare each output with the
    /// expected one; exit 1 naming each case, output and largest error that fails.
    #[command(
        after_help = "Examples:\n  etch verify tests/fixtures/mlp.bpte --rtol 1e-5 --atol 1e-5"
    )]
    Verify {
        /// The .bpte bundled program.
        model: PathBuf,
        /// Relative tolerance for floating-point outputs.
        #[arg(long, default_value_t = 1e-5)]
        rtol: f64,
        /// Absolute tolerance for floating-point outputs.
        #[arg(long, default_value_t = 1e-8)]
        atol: f64,
        /// Refuse a method whose memory exceeds this many MiB (as for `run`).
        #[arg(long, default_value_t = 4096)]
        max_memory_mib: usize,
    },
    /// Generate text with an LLM program written by ExecuTorch's export_llm: prefill the
    /// prompt, then decode a token per call, streaming the text.
    #[cfg(feature = "llm")]
    Generate(generate::GenerateArgs),
    /// List methods, their operators with kernel keys, planned memory, the program's named
    /// data and the external tensors it expects from data files.
    #[command(
        after_help = "Examples:\n  etch ops tests/fixtures/mlp_ptd.pte --data tests/fixtures/mlp_ptd.ptd --json"
    )]
    Ops {
        /// The .pte program.
        model: PathBuf,
        /// Data files to resolve external tensors against (repeatable).
        #[arg(long = "data", short = 'd')]
        data: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a selected_operators.yaml from models, op lists and other selection files.
    #[command(
        after_help = "Examples:\n  etch select model.pte --ops aten::add.out -o selected_operators.yaml"
    )]
    Select {
        /// Programs whose operators and kernel keys to select.
        models: Vec<PathBuf>,
        /// Operators to add, comma-separated (`aten::add.out,aten::mm.out`).
        #[arg(long)]
        ops: Option<String>,
        /// Selection files to merge in (ExecuTorch's format).
        #[arg(long)]
        yaml: Vec<PathBuf>,
        /// Where to write the merged selection.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Check that this binary's kernels cover every operator and dtype of the models.
    #[command(
        after_help = "Examples:\n  etch check tests/fixtures/mv2.pte tests/fixtures/mv2_xnnpack_q8.pte"
    )]
    Check {
        /// The .pte programs.
        #[arg(required = true)]
        models: Vec<PathBuf>,
    },
    /// List the kernels registered in this binary.
    #[command(after_help = "Examples:\n  etch kernels --json")]
    Kernels {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A rejected model or input: message for stderr, exit code 1.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            model,
            method,
            inputs,
            data,
            iterations,
            threads,
            json,
            output_dir,
            scratch_mib,
            max_memory_mib,
            full,
            top_k,
            profile,
            profile_nodes,
            etdump,
        } => {
            if threads > 1 && !cfg!(feature = "threads") {
                eprintln!(
                    "etch run: --threads {threads} needs an etch built with the `threads` feature (on by default); this one runs on one thread"
                );
                std::process::exit(2);
            }
            run::run(&run::RunRequest {
                model: &model,
                method: method.as_deref(),
                inputs: &inputs,
                data: &data,
                iterations: iterations.max(1),
                threads,
                json,
                output_dir: output_dir.as_deref(),
                scratch_mib,
                max_memory_mib,
                printing: if full {
                    format::Printing::Full
                } else {
                    format::Printing::Summary
                },
                top_k,
                profile,
                profile_nodes,
                etdump: etdump.as_deref(),
            })
        }
        Command::Verify {
            model,
            rtol,
            atol,
            max_memory_mib,
        } => bundled::verify(&bundled::VerifyRequest {
            model: &model,
            rtol,
            atol,
            max_memory_mib,
        }),
        #[cfg(feature = "llm")]
        Command::Generate(args) => generate::generate(&args),
        Command::Ops { model, data, json } => ops::ops(&model, &data, json),
        Command::Select {
            models,
            ops,
            yaml,
            output,
        } => select(&models, ops.as_deref(), &yaml, &output),
        Command::Check { models } => check(&models),
        Command::Kernels { json } => {
            kernels(json);
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg)) => {
            eprintln!("etch: {msg}");
            ExitCode::from(1)
        }
    }
}

fn open(model: &Path) -> Result<MmapLoader, Failure> {
    MmapLoader::open(model).map_err(|e| Failure(format!("cannot open {}: {e}", model.display())))
}

fn load<'l>(model: &Path, loader: &'l BufferLoader<'l>) -> Result<Program<'l>, Failure> {
    Program::load(loader)
        .map_err(|e| Failure(format!("{}: cannot load program: {e}", model.display())))
}

fn select(
    models: &[PathBuf],
    ops: Option<&str>,
    yamls: &[PathBuf],
    output: &Path,
) -> Result<(), Failure> {
    if models.is_empty() && ops.is_none() && yamls.is_empty() {
        eprintln!("etch select: give at least one model, --ops or --yaml");
        std::process::exit(2);
    }
    let mut merged: Option<selection::Selection> = None;
    let mut add = |s: selection::Selection| match &mut merged {
        Some(m) => m.merge(&s),
        None => merged = Some(s),
    };
    for model in models {
        let bytes = std::fs::read(model)
            .map_err(|e| Failure(format!("cannot read {}: {e}", model.display())))?;
        // ExecuTorch's files record the path the model was given as.
        let label = model.display().to_string();
        let backends: [&dyn selection::DelegateMetadata; 1] = [&et_xnnpack_schema::NodeKinds];
        add(
            selection::Selection::from_program_with(&bytes, &label, &backends)
                .map_err(|e| Failure(format!("{}: {e}", model.display())))?,
        );
    }
    if let Some(list) = ops {
        add(selection::Selection::from_op_list(list).map_err(|e| Failure(format!("--ops: {e}")))?);
    }
    for path in yamls {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
        let parsed = selection::Selection::parse_yaml(&text).and_then(|s| {
            s.check_metadata(&et_xnnpack_schema::NodeKinds)?;
            Ok(s)
        });
        add(parsed.map_err(|e| Failure(format!("{}: {e}", path.display())))?);
    }
    let merged = merged.unwrap_or_default();
    std::fs::write(output, merged.to_yaml())
        .map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
    eprintln!(
        "etch: wrote {} ({} operators)",
        output.display(),
        merged.operators().count()
    );
    Ok(())
}

fn check(models: &[PathBuf]) -> Result<(), Failure> {
    let mut missing: Vec<String> = Vec::new();
    let mut add = |line: String| {
        if !missing.contains(&line) {
            missing.push(line);
        }
    };
    for model in models {
        let map = open(model)?;
        let loader = bundled::program_loader(model, &map)?;
        let program = load(model, &loader)?;
        let model = model.display();
        for name in program.method_names() {
            let meta = program.method_meta(name)?;
            for call in et_runtime::registry::missing_kernels(&meta) {
                let (op, key) = (call.operator, call.key);
                add(format!("{model}: {op} (kernel key {key}) in method {name}"));
            }
            for d in delegates::summarize(&program, name)? {
                if et_runtime::backend::find_backend(&d.backend).is_none() {
                    add(format!("{model}: backend {} in method {name}", d.backend));
                }
                for kind in d.missing_node_kinds() {
                    add(format!(
                        "{model}: {} node kind {kind} in method {name}",
                        d.backend
                    ));
                }
            }
        }
    }
    if missing.is_empty() {
        println!("ok: this binary's kernels cover {} model(s)", models.len());
        Ok(())
    } else {
        Err(Failure(format!("missing kernels:\n{}", missing.join("\n"))))
    }
}

fn dtype_label(entry: &et_runtime::registry::KernelEntry) -> String {
    match entry.dtype().dtype() {
        Some(t) => t.name().to_string(),
        None if entry.signature.dtypes == et_runtime::DtypeSet::ALL => "any".to_string(),
        None => {
            let names: Vec<&str> = et_runtime::ScalarType::ALL
                .iter()
                .filter(|t| entry.signature.dtypes.contains(**t))
                .map(|t| t.name())
                .collect();
            format!("any of {}", names.join("|"))
        }
    }
}

fn kernels(json: bool) {
    let all = et_runtime::registry::kernels();
    if json {
        let rows: Vec<String> = all
            .iter()
            .map(|e| {
                format!(
                    "{{\"name\":{},\"dtype\":{},\"crate\":{}}}",
                    format::json_str(&e.name().to_string()),
                    format::json_str(&dtype_label(e)),
                    format::json_str(e.signature.crate_name.as_str())
                )
            })
            .collect();
        let dups: Vec<String> = et_runtime::registry::duplicates()
            .map(|(a, _)| format::json_str(&a.name().to_string()))
            .collect();
        let linked = delegates::linked_node_kinds();
        let kinds: Vec<String> = linked.iter().map(|(k, _)| format::json_str(k)).collect();
        let datatypes: Vec<String> = linked
            .iter()
            .map(|(k, ds)| {
                let ds: Vec<String> = ds.iter().map(|d| format::json_str(d)).collect();
                format!("{}:[{}]", format::json_str(k), ds.join(","))
            })
            .collect();
        println!(
            "{{\"total\":{},\"kernels\":[{}],\"duplicates\":[{}],\"xnnpack_node_kinds\":[{}],\"xnnpack_node_datatypes\":{{{}}}}}",
            all.len(),
            rows.join(","),
            dups.join(","),
            kinds.join(","),
            datatypes.join(",")
        );
        return;
    }
    let mut rows: Vec<(String, String, &str)> = all
        .iter()
        .map(|e| {
            let name = e.name().to_string();
            (name, dtype_label(e), e.signature.crate_name.as_str())
        })
        .collect();
    rows.sort();
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    for (name, dtype, krate) in &rows {
        println!("{name:width$}  {dtype:10}  {krate}");
    }
    println!("{} kernels registered", all.len());
    let kinds = delegates::linked_node_kinds();
    if !kinds.is_empty() {
        // Each kind with its datatype families: `Conv2d (fp32, qint8)`.
        let listed: Vec<String> = kinds
            .iter()
            .map(|(k, ds)| format!("{k} ({})", ds.join(", ")))
            .collect();
        println!(
            "XnnpackBackend node kinds ({}): {}",
            kinds.len(),
            listed.join(", ")
        );
    }
    for (a, b) in et_runtime::registry::duplicates() {
        println!(
            "duplicate: {} ({}) registered by {} and {}",
            a.name(),
            dtype_label(a),
            a.signature.crate_name,
            b.signature.crate_name
        );
    }
}
