//! Compile-time selection, end to end: a small probe crate using `#[kernel]` is built
//! with cargo under each selection mode (none, an op list, a YAML file, one and two
//! models) and prints what it registered. Also: changing a variable or the selection
//! file's contents rebuilds; unselected dtypes are never instantiated (their generic
//! instances are absent from the binary's symbols); every malformed input is one compile
//! error naming the variable, the path and the problem.
//!
//! The probe lives in this test's scratch directory, depends on `et-runtime` and
//! `et-macros` by path, and reuses the workspace's `Cargo.lock` and crate cache
//! (`--offline`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

const VARS: [&str; 3] = [
    "ET_SELECT_OPS_YAML",
    "ET_SELECT_OPS_MODEL",
    "ET_SELECT_OPS_LIST",
];

/// The probe's source. Its generic helpers are never inlined, so each instantiation
/// that exists shows up as a symbol.
const PROBE_SOURCE: &str = r#"
use et_macros::kernel;
use et_runtime::{et_switch, DtypeSelection, Element, KernelContext, KernelResult, Scalar, ScalarType, Tensor};

#[inline(never)]
fn generic_probe<T: Element>() -> KernelResult {
    core::hint::black_box(T::default());
    Ok(())
}

#[inline(never)]
fn switch_probe<T: Element>() -> KernelResult {
    core::hint::black_box(T::default());
    Ok(())
}

#[kernel("aten::add.out", dtype = [f32, f64, i64])]
fn add<T: Element>(_: &KernelContext<'_>, _a: &Tensor, _b: &Tensor, _alpha: Scalar, _out: &mut Tensor) -> KernelResult {
    generic_probe::<T>()
}

#[kernel("aten::add.out", dtype = i32)]
fn add_i32(_: &KernelContext<'_>, _a: &Tensor, _b: &Tensor, _alpha: Scalar, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

#[kernel("aten::add.out")]
fn add_any<S: DtypeSelection>(_: &KernelContext<'_>, a: &Tensor, _b: &Tensor, _alpha: Scalar, _out: &mut Tensor) -> KernelResult {
    et_switch!(S, a.dtype(), [f32, i64], T => switch_probe::<T>())
}

#[kernel("aten::mul.out")]
fn mul(_: &KernelContext<'_>, _a: &Tensor, _b: &Tensor, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

fn main() {
    let mut lines: Vec<String> = et_runtime::registry::kernels()
        .iter()
        .filter(|e| e.name() == "aten::add.out" || e.name() == "aten::mul.out")
        .map(|e| {
            let dtype = e.dtype().dtype().map_or("fallback", ScalarType::name);
            format!("{} {} {:x}", e.name(), dtype, e.signature.dtypes.0)
        })
        .collect();
    lines.sort();
    for line in lines {
        println!("{line}");
    }
}
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn fixture(name: &str) -> String {
    workspace()
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

struct Probe {
    dir: PathBuf,
}

/// Builds are serialized: every test shares the probe's target directory.
static BUILD: Mutex<()> = Mutex::new(());

impl Probe {
    fn new() -> Probe {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("selection-probe");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let manifest = format!(
            r#"[package]
name = "selection-probe"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
et-runtime = {{ path = "{ws}/et-runtime", features = ["std"] }}
et-macros = {{ path = "{ws}/et-macros" }}

[workspace]
"#,
            ws = workspace().display()
        );
        write_if_changed(&dir.join("Cargo.toml"), &manifest);
        // The workspace's versions, so `--offline` finds every crate in the cache.
        let lock = std::fs::read_to_string(workspace().join("Cargo.lock")).unwrap();
        write_if_changed(&dir.join("Cargo.lock"), &lock);
        Probe { dir }
    }

    /// Builds with the variables given (the others unset) and runs the probe:
    /// `Ok(stdout)` or `Err(compiler stderr)`.
    fn run(&self, vars: &[(&str, &str)]) -> Result<String, String> {
        let _guard = BUILD.lock().unwrap_or_else(|p| p.into_inner());
        write_if_changed(&self.dir.join("src/main.rs"), PROBE_SOURCE);
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--offline", "--quiet", "--manifest-path"])
            .arg(self.dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(self.dir.join("target"))
            // v0 symbol names spell out generic arguments (`switch_probe::<i64>`).
            .args([
                "--config",
                r#"build.rustflags=["-C", "symbol-mangling-version=v0"]"#,
            ])
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        for var in VARS {
            cmd.env_remove(var);
        }
        for (var, value) in vars {
            cmd.env(var, value);
        }
        let out = cmd.output().expect("cargo runs");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let bin = self.dir.join("target/debug/selection-probe");
        let out = Command::new(bin).output().expect("probe runs");
        assert!(out.status.success());
        Ok(String::from_utf8(out.stdout).unwrap())
    }

    fn registered(&self, vars: &[(&str, &str)]) -> String {
        self.run(vars)
            .unwrap_or_else(|e| panic!("probe build failed under {vars:?}:\n{e}"))
    }

    fn error(&self, vars: &[(&str, &str)]) -> String {
        match self.run(vars) {
            Ok(out) => panic!("probe built under {vars:?}, registering:\n{out}"),
            Err(e) => e,
        }
    }

    /// Whether the last built probe binary contains `function::<T>`, where `code` is the
    /// v0 mangling of `T` (`f` f32, `x` i64).
    fn has_instance(&self, function: &str, code: char) -> bool {
        let bin = std::fs::read(self.dir.join("target/debug/selection-probe")).unwrap();
        let needle = format!("{}{function}{code}E", function.len());
        bin.windows(needle.len()).any(|w| w == needle.as_bytes())
    }
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

const ALL: &str = "ffffffff";

fn lines(expected: &[&str]) -> String {
    expected.iter().map(|l| format!("{l}\n")).collect()
}

/// Each mode registers what it should. The source does not change between builds, so
/// each differing result also proves that changing a variable rebuilds.
#[test]
fn each_mode_registers_its_selection() {
    let probe = Probe::new();
    let everything = lines(&[
        &format!("aten::add.out fallback {ALL}"),
        &format!("aten::add.out float32 {ALL}"),
        &format!("aten::add.out float64 {ALL}"),
        &format!("aten::add.out int32 {ALL}"),
        &format!("aten::add.out int64 {ALL}"),
        &format!("aten::mul.out fallback {ALL}"),
    ]);
    assert_eq!(probe.registered(&[]), everything, "no selection");

    // An op list selects operators with every dtype.
    assert_eq!(
        probe.registered(&[("ET_SELECT_OPS_LIST", "aten::add.out")]),
        lines(&[
            &format!("aten::add.out fallback {ALL}"),
            &format!("aten::add.out float32 {ALL}"),
            &format!("aten::add.out float64 {ALL}"),
            &format!("aten::add.out int32 {ALL}"),
            &format!("aten::add.out int64 {ALL}"),
        ]),
        "op list"
    );

    // ExecuTorch's own selected_operators.yaml for add.pte: add.out on float32 only.
    let float_add = lines(&["aten::add.out fallback 40", "aten::add.out float32 40"]);
    let yaml = fixture("add.selected_operators.yaml");
    assert_eq!(
        probe.registered(&[("ET_SELECT_OPS_YAML", &yaml)]),
        float_add,
        "yaml"
    );

    // The model itself gives the same.
    let model = fixture("add.pte");
    assert_eq!(
        probe.registered(&[("ET_SELECT_OPS_MODEL", &model)]),
        float_add,
        "model"
    );

    // Two models merge: add.out float32 plus mul.out int32.
    let two = format!("{model},{}", fixture("opcases/mul_int32.pte"));
    assert_eq!(
        probe.registered(&[("ET_SELECT_OPS_MODEL", &two)]),
        lines(&[
            "aten::add.out fallback 40",
            "aten::add.out float32 40",
            "aten::mul.out fallback 8",
        ]),
        "two models"
    );

    // And back: unsetting the variable rebuilds with everything.
    assert_eq!(probe.registered(&[]), everything, "no selection again");
}

/// Unselected dtypes are never instantiated: with only `f32` selected for `add.out`,
/// neither the generic kernel's `i64` instance nor the fallback's `et_switch!` branch for
/// `i64` exists in the binary. Without a selection both do.
#[test]
fn unselected_dtypes_are_not_instantiated() {
    let probe = Probe::new();
    probe.registered(&[]);
    for function in ["generic_probe", "switch_probe"] {
        assert!(probe.has_instance(function, 'f'), "{function}::<f32>");
        assert!(probe.has_instance(function, 'x'), "{function}::<i64>");
    }
    let yaml = fixture("add.selected_operators.yaml");
    assert_eq!(
        probe.registered(&[("ET_SELECT_OPS_YAML", &yaml)]),
        lines(&["aten::add.out fallback 40", "aten::add.out float32 40"])
    );
    for function in ["generic_probe", "switch_probe"] {
        assert!(probe.has_instance(function, 'f'), "{function}::<f32>");
        assert!(!probe.has_instance(function, 'x'), "{function}::<i64>");
    }
}

/// Editing the selection file rebuilds the crates that use it.
#[test]
fn editing_the_selection_file_rebuilds() {
    let probe = Probe::new();
    let path = probe.dir.join("edited.yaml");
    let yaml = |key: &str| {
        format!("operators:\n  aten::add.out: {{}}\net_kernel_metadata:\n  aten::add.out:\n  - v1/{key};0,1|{key};0,1|{key};0,1|{key};0,1\n")
    };
    std::fs::write(&path, yaml("6")).unwrap();
    let var = [("ET_SELECT_OPS_YAML", path.to_str().unwrap())];
    assert_eq!(
        probe.registered(&var),
        lines(&["aten::add.out fallback 40", "aten::add.out float32 40"])
    );
    // Same length, new contents: only the contents tell the change.
    std::fs::write(&path, yaml("4")).unwrap();
    assert_eq!(
        probe.registered(&var),
        lines(&["aten::add.out fallback 10", "aten::add.out int64 10"])
    );
}

fn assert_one_error(err: &str, parts: &[&str]) {
    assert_eq!(
        err.matches("error: #[kernel] selection:").count(),
        1,
        "one error per crate, not one per kernel:\n{err}"
    );
    for part in parts {
        assert!(err.contains(part), "missing {part:?} in:\n{err}");
    }
}

#[test]
fn malformed_selections_are_compile_errors() {
    let probe = Probe::new();

    let err = probe.error(&[
        (
            "ET_SELECT_OPS_YAML",
            &fixture("add.selected_operators.yaml"),
        ),
        ("ET_SELECT_OPS_LIST", "aten::add.out"),
    ]);
    assert_one_error(
        &err,
        &[
            "ET_SELECT_OPS_YAML and ET_SELECT_OPS_LIST are set",
            "at most one",
        ],
    );

    let missing = probe.dir.join("no-such.yaml");
    let err = probe.error(&[("ET_SELECT_OPS_YAML", missing.to_str().unwrap())]);
    assert_one_error(
        &err,
        &[
            "ET_SELECT_OPS_YAML",
            missing.to_str().unwrap(),
            "cannot read it",
        ],
    );

    let bad = probe.dir.join("bad.yaml");
    std::fs::write(&bad, "operators: [unclosed\n").unwrap();
    let err = probe.error(&[("ET_SELECT_OPS_YAML", bad.to_str().unwrap())]);
    assert_one_error(
        &err,
        &[
            "ET_SELECT_OPS_YAML",
            bad.to_str().unwrap(),
            "invalid selected_operators.yaml",
        ],
    );

    let not_pte = fixture("add.selected_operators.yaml");
    let err = probe.error(&[("ET_SELECT_OPS_MODEL", &not_pte)]);
    assert_one_error(&err, &["ET_SELECT_OPS_MODEL", &not_pte]);

    let err = probe.error(&[("ET_SELECT_OPS_LIST", "add.out")]);
    assert_one_error(&err, &["ET_SELECT_OPS_LIST=\"add.out\"", "namespace"]);
}
