//! Shared helpers for etch's integration tests: fixture paths, io.yaml descriptions, and
//! running a method with heap-backed memory.

use std::path::PathBuf;

use et_runtime::{
    DataFile, FileLoader, MemoryManager, MethodBufferSizes, Program, ScalarType, Verification,
};
use serde::Deserialize;

/// `tests/fixtures` in the workspace.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A fixture file by name (`add.pte`, `opcases/abs_float32.pte`).
pub fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// One tensor of an io.yaml.
#[derive(Debug, Deserialize, Clone)]
pub struct IoTensor {
    /// NumPy dtype name.
    pub dtype: String,
    /// Sizes.
    pub sizes: Vec<usize>,
    /// File name next to the yaml.
    pub file: String,
}

/// A case's `NAME.io.yaml`.
#[derive(Debug, Deserialize, Clone)]
pub struct IoSpec {
    /// The program file.
    pub program: String,
    /// Method to run.
    pub method: String,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Inputs in order.
    pub inputs: Vec<IoTensor>,
    /// Expected outputs in order.
    pub outputs: Vec<IoTensor>,
    /// `.ptd` data files the program needs, next to the yaml, in search order.
    #[serde(default)]
    pub data_files: Vec<String>,
    /// `shape_only`: the outputs are random or uninitialised, so only their dtypes and
    /// sizes are specified (the `.out` files hold one sample); absent: compare values.
    #[serde(default)]
    pub check: Option<String>,
}

impl IoSpec {
    /// Whether only the outputs' dtypes and sizes are to be compared.
    pub fn shape_only(&self) -> bool {
        self.check.as_deref() == Some("shape_only")
    }
}

impl IoSpec {
    /// Reads `dir/NAME.io.yaml`.
    pub fn read(dir: &std::path::Path, name: &str) -> IoSpec {
        let path = dir.join(format!("{name}.io.yaml"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

/// The dtype of a NumPy name.
pub fn dtype_of(name: &str) -> ScalarType {
    ScalarType::from_name(name).unwrap_or_else(|| panic!("unknown dtype {name}"))
}

pub use et_runtime::MethodBuffers;

/// An output tensor copied out of a method: dtype, sizes, row-major bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedOutput {
    /// Element type.
    pub dtype: ScalarType,
    /// Sizes.
    pub sizes: Vec<usize>,
    /// Row-major little-endian bytes.
    pub bytes: Vec<u8>,
}

/// Loads `dir/spec.program` with the spec's data files, runs `spec.method` on the spec's
/// inputs once, and returns the outputs; `Err` carries the runtime's message.
pub fn run_case(dir: &std::path::Path, spec: &IoSpec) -> Result<Vec<OwnedOutput>, String> {
    run_case_with_data(dir, spec, &spec.data_files)
}

/// Opens each of `names` (files in `dir`) as a data file.
pub fn open_data_files(dir: &std::path::Path, names: &[String]) -> Result<Vec<FileLoader>, String> {
    names
        .iter()
        .map(|n| FileLoader::open(dir.join(n)).map_err(|e| format!("{n}: {e}")))
        .collect()
}

/// [`run_case`] with other data files than the spec's (none, or damaged ones).
pub fn run_case_with_data(
    dir: &std::path::Path,
    spec: &IoSpec,
    data_files: &[String],
) -> Result<Vec<OwnedOutput>, String> {
    run_case_on(dir, spec, data_files, None)
}

/// [`run_case`] with the kernels splitting their work over `pool`
/// (`Method::execute_with`).
pub fn run_case_with_pool(
    dir: &std::path::Path,
    spec: &IoSpec,
    pool: &dyn et_runtime::Parallel,
) -> Result<Vec<OwnedOutput>, String> {
    run_case_on(dir, spec, &spec.data_files, Some(pool))
}

fn run_case_on(
    dir: &std::path::Path,
    spec: &IoSpec,
    data_files: &[String],
    pool: Option<&dyn et_runtime::Parallel>,
) -> Result<Vec<OwnedOutput>, String> {
    let data_loaders = open_data_files(dir, data_files)?;
    let data: Vec<DataFile<'_>> = data_loaders
        .iter()
        .zip(data_files)
        .map(|(l, name)| DataFile::load(l, name).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<_, _>>()?;
    let data_refs: Vec<&DataFile<'_>> = data.iter().collect();
    let loader = FileLoader::open(dir.join(&spec.program)).map_err(|e| e.to_string())?;
    let program = Program::load_with_data(&loader, Verification::default(), &data_refs)
        .map_err(|e| e.to_string())?;
    let mut buffers = MethodBuffers::for_program_method(&program, &spec.method, 64 << 20)
        .map_err(|e| e.to_string())?;
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program
        .load_method(&spec.method, &mut memory)
        .map_err(|e| e.to_string())?;
    for (i, input) in spec.inputs.iter().enumerate() {
        let data = std::fs::read(dir.join(&input.file)).map_err(|e| e.to_string())?;
        method
            .set_input_bytes(i, dtype_of(&input.dtype), &input.sizes, &data)
            .map_err(|e| format!("input {i}: {e}"))?;
    }
    match pool {
        Some(pool) => method.execute_with(pool),
        None => method.execute(),
    }
    .map_err(|e| e.to_string())?;
    owned_outputs(&method)
}

/// Copies every output of `method` out (each must be a tensor).
pub fn owned_outputs(method: &et_runtime::Method<'_>) -> Result<Vec<OwnedOutput>, String> {
    (0..method.num_outputs())
        .map(|i| {
            let v = method.output(i).map_err(|e| e.to_string())?;
            let t = v
                .as_tensor()
                .ok_or_else(|| format!("output {i} is not a tensor"))?;
            Ok(OwnedOutput {
                dtype: t.dtype(),
                sizes: t.sizes().to_vec(),
                bytes: t.to_row_major_bytes().map_err(|e| e.to_string())?,
            })
        })
        .collect()
}

/// The bytes of a `u128` buffer (16-byte aligned memory for the runtime).
pub fn bytes_of(v: &mut [u128]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: u128 has no padding; any byte pattern is a valid u8; the view covers exactly
    // the slice's memory and borrows it mutably.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

/// Elements as f64 for comparison (bool as 0/1; a complex element as its real and
/// imaginary parts, in that order, as the data interleaves them).
pub fn as_f64(dtype: ScalarType, bytes: &[u8]) -> Vec<f64> {
    let part = match dtype {
        ScalarType::ComplexFloat => Some(ScalarType::Float),
        ScalarType::ComplexDouble => Some(ScalarType::Double),
        _ => None,
    };
    if let Some(part) = part {
        return as_f64(part, bytes);
    }
    bytes
        .chunks_exact(dtype.element_size())
        .map(|c| {
            dtype
                .read_f64(c)
                .unwrap_or_else(|| panic!("no comparison for {dtype}"))
        })
        .collect()
}

/// Compares outputs with the expected tensors: same dtype and sizes, and
/// `|got - want| <= atol + rtol * |want|` for floats and each part of a complex (NaN
/// matches NaN), exact otherwise; a `shape_only` spec stops after dtype and sizes.
pub fn compare(dir: &std::path::Path, spec: &IoSpec, got: &[OwnedOutput]) -> Result<(), String> {
    if got.len() != spec.outputs.len() {
        return Err(format!(
            "{} outputs, expected {}",
            got.len(),
            spec.outputs.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(&spec.outputs).enumerate() {
        let want_dtype = dtype_of(&w.dtype);
        if g.dtype != want_dtype || g.sizes != w.sizes {
            return Err(format!(
                "output {i}: got {} {:?}, expected {} {:?}",
                g.dtype, g.sizes, want_dtype, w.sizes
            ));
        }
        if spec.shape_only() {
            continue;
        }
        let want_bytes = std::fs::read(dir.join(&w.file)).map_err(|e| e.to_string())?;
        if want_dtype.is_floating() || is_complex(want_dtype) {
            let (gv, wv) = (as_f64(g.dtype, &g.bytes), as_f64(want_dtype, &want_bytes));
            if gv.len() != wv.len() {
                return Err(format!(
                    "output {i}: {} elements, expected {}",
                    gv.len(),
                    wv.len()
                ));
            }
            for (k, (a, b)) in gv.iter().zip(&wv).enumerate() {
                let ok = (a.is_nan() && b.is_nan())
                    || a == b
                    || (a - b).abs() <= spec.atol + spec.rtol * b.abs();
                if !ok {
                    return Err(format!("output {i} element {k}: got {a}, expected {b}"));
                }
            }
        } else if g.bytes != want_bytes {
            let (gv, wv) = (as_f64(g.dtype, &g.bytes), as_f64(want_dtype, &want_bytes));
            let k = gv.iter().zip(&wv).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!(
                "output {i} element {k}: got {:?}, expected {:?}",
                gv.get(k),
                wv.get(k)
            ));
        }
    }
    Ok(())
}

/// Loads every method of a (possibly corrupted) program and runs it on zero inputs,
/// ignoring errors: what matters is that nothing panics, hangs or over-allocates. Methods
/// whose buffers would exceed 16 MiB are skipped.
pub fn load_and_run_bytes(bytes: &[u8]) {
    load_and_run_with_data(bytes, None);
}

/// [`load_and_run_bytes`] with a `.ptd` data file from arbitrary bytes.
pub fn load_and_run_with_data(bytes: &[u8], data: Option<&[u8]>) {
    load_and_run_limited(bytes, data, 1 << 24);
}

/// [`load_and_run_bytes`] for programs whose methods take up to `limit` bytes (a large
/// model's packed weights exceed the default 16 MiB).
pub fn load_and_run_bytes_within(bytes: &[u8], limit: usize) {
    load_and_run_limited(bytes, None, limit);
}

fn load_and_run_limited(bytes: &[u8], data: Option<&[u8]>, limit: usize) {
    let data_loader = FileLoader::from_bytes(data.unwrap_or(&[]));
    let data = match data.map(|_| DataFile::load(&data_loader, "data.ptd")) {
        Some(Err(_)) => return,
        Some(Ok(d)) => Some(d),
        None => None,
    };
    let files: Vec<&DataFile<'_>> = data.iter().collect();
    let loader = FileLoader::from_bytes(bytes);
    let Ok(program) = Program::load_with_data(&loader, Verification::default(), &files) else {
        return;
    };
    for name in program.method_names().collect::<Vec<_>>() {
        // Sizes come from the (corrupted) file: checked against the limit before any
        // allocation, as a tool must.
        let Ok(sizes) = MethodBufferSizes::for_program_method(&program, name, 16 << 10) else {
            continue;
        };
        let Ok(mut buffers) = MethodBuffers::allocate(&sizes, limit) else {
            continue;
        };
        let (method_mem, mut planned, scratch) = buffers.split();
        let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
        let Ok(mut method) = program.load_method(name, &mut memory) else {
            continue;
        };
        method.set_instruction_limit(10_000);
        for i in 0..method.num_inputs() {
            if let Ok(t) = method.input_tensor_mut(i) {
                let _ = t.bytes_mut().map(|b| b.fill(0));
            }
        }
        let _ = method.execute();
    }
}

/// Whether `dtype` is one of the complex types compared part by part.
fn is_complex(dtype: ScalarType) -> bool {
    matches!(dtype, ScalarType::ComplexFloat | ScalarType::ComplexDouble)
}
