//! The firmware's model is the build's selection: `ET_SELECT_OPS_MODEL` names one `.pte`,
//! which `#[kernel]` reads for the kernels to compile in, and which this script
//!
//! - measures on the host (`MethodBufferSizes::measure`, with the same kernels, backend
//!   and selection as the firmware) and writes as constants the firmware's statics are
//!   declared from (`model.rs`);
//! - hands to the firmware to embed (`MODEL_PTE`), with the fixture's input, expected
//!   output and tolerance next to it (`NAME.in0.bin`, `NAME.out0.bin`, `NAME.io.yaml`);
//! - puts `memory.x` on the linker's path.

use std::path::{Path, PathBuf};

use et_runtime::{FileLoader, MethodBufferSizes, Program};

use et_ops as _;
use et_xnnpack as _;

const MODEL_VAR: &str = "ET_SELECT_OPS_MODEL";

/// The one model named by `ET_SELECT_OPS_MODEL`: an absolute path, as the selective
/// build needs (`#[kernel]` would take a relative one from the compiler's directory).
fn model_path() -> Result<PathBuf, String> {
    let value = std::env::var(MODEL_VAR).unwrap_or_default();
    let paths: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let [path] = paths.as_slice() else {
        return Err(format!(
            "{MODEL_VAR}={value:?}: name the one .pte the firmware runs (see .cargo/config.toml)"
        ));
    };
    let path = Path::new(path);
    if !path.is_absolute() {
        return Err(format!(
            "{MODEL_VAR}={value:?}: give an absolute path (`$PWD/{value}`)"
        ));
    }
    path.canonicalize()
        .map_err(|e| format!("{MODEL_VAR}: {}: {e}", path.display()))
}

fn measure(path: &Path) -> Result<MethodBufferSizes, String> {
    let loader = FileLoader::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let program = Program::load(&loader).map_err(|e| format!("{}: {e}", path.display()))?;
    MethodBufferSizes::measure(&program, "forward")
        .map_err(|e| format!("{}: measuring method forward: {e}", path.display()))
}

/// A top-level number of the fixture's `io.yaml` (`atol: 1.0e-05`).
fn io_number(io_yaml: &str, key: &str) -> Option<f32> {
    io_yaml
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// Path of the fixture file next to the model: `dir/NAME.pte` -> `dir/NAME{suffix}`.
fn beside(model: &Path, suffix: &str) -> Result<PathBuf, String> {
    let stem = model
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: no file name", model.display()))?;
    let path = model.with_file_name(format!("{stem}{suffix}"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{}: the firmware checks its output against {}, which does not exist",
            model.display(),
            path.display()
        ))
    }
}

fn utf8(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{}: not UTF-8", path.display()))
}

fn generate(out: &Path) -> Result<(), String> {
    let model = model_path()?;
    let input = beside(&model, ".in0.bin")?;
    let expected = beside(&model, ".out0.bin")?;
    let io_path = beside(&model, ".io.yaml")?;
    for path in [&model, &input, &expected, &io_path] {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let io_yaml =
        std::fs::read_to_string(&io_path).map_err(|e| format!("{}: {e}", io_path.display()))?;
    let tolerance = |key| {
        io_number(&io_yaml, key).ok_or_else(|| format!("{}: no number `{key}:`", io_path.display()))
    };
    let (atol, rtol) = (tolerance("atol")?, tolerance("rtol")?);
    let sizes = measure(&model)?;
    let name = model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");

    println!("cargo:rustc-env=MODEL_PTE={}", utf8(&model)?);
    println!("cargo:rustc-env=MODEL_INPUT={}", utf8(&input)?);
    println!("cargo:rustc-env=MODEL_EXPECTED={}", utf8(&expected)?);
    let consts = format!(
        "{}/// The model's name (its file's).\npub const MODEL_NAME: &str = {name:?};\n\
         /// Absolute tolerance of the check (the fixture's).\npub const MODEL_ATOL: f32 = {atol:?};\n\
         /// Relative tolerance of the check (the fixture's).\npub const MODEL_RTOL: f32 = {rtol:?};\n",
        sizes.to_rust_consts("MODEL"),
    );
    std::fs::copy("memory.x", out.join("memory.x"))
        .and_then(|_| std::fs::write(out.join("model.rs"), consts))
        .map_err(|e| format!("writing to {}: {e}", out.display()))
}

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-env-changed={MODEL_VAR}");
    println!("cargo:rustc-link-search={}", out.display());
    if let Err(e) = generate(&out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
