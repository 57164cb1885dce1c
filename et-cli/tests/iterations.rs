//! `etch run --iterations N`: every run starts from the inputs (the memory plan reuses
//! input bytes for intermediates), every run agrees, and the written outputs are
//! ExecuTorch's.

use std::path::PathBuf;
use std::process::Command;

use etch_tests::{compare, fixtures_dir, IoSpec, OwnedOutput};

/// Runs `etch run NAME.pte --iterations 3 --output-dir DIR` with the fixture's inputs and
/// compares the files it writes with the reference outputs.
fn run_three_times(name: &str) {
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, name);
    let out_dir = std::env::temp_dir().join(format!("etch-iter-{}-{name}", std::process::id()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_etch"));
    cmd.arg("run")
        .arg(dir.join(&spec.program))
        .args([
            "--method",
            &spec.method,
            "--iterations",
            "3",
            "--output-dir",
        ])
        .arg(&out_dir);
    for input in &spec.inputs {
        let shape: Vec<String> = input.sizes.iter().map(|s| s.to_string()).collect();
        let path: PathBuf = dir.join(&input.file);
        cmd.arg("--input")
            .arg(format!("{}:{}", path.display(), shape.join("x")));
    }
    let o = cmd.output().expect("etch runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name}: {stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("execute over 3 runs (inputs set before each, outputs identical)"),
        "{name}: {stdout}"
    );
    let got: Vec<OwnedOutput> = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(i, w)| OwnedOutput {
            dtype: etch_tests::dtype_of(&w.dtype),
            sizes: w.sizes.clone(),
            bytes: std::fs::read(out_dir.join(format!("output{i}.bin"))).unwrap(),
        })
        .collect();
    compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    std::fs::remove_dir_all(&out_dir).ok();
}

#[test]
fn mv2_three_runs_match_the_reference() {
    run_three_times("mv2");
}

#[test]
fn tiny_transformer_three_runs_match_the_reference() {
    run_three_times("tiny_transformer");
}

#[test]
fn int_ops_three_runs_match_the_reference() {
    run_three_times("int_ops");
}

#[test]
fn dynamic_three_runs_match_the_reference() {
    // Exported for batches up to 16, run at batch 3 (`FILE:3x8`).
    run_three_times("dynamic");
}

#[test]
fn small_cnn_and_many_adds_three_runs_match_the_reference() {
    run_three_times("small_cnn");
    run_three_times("many_adds");
}

#[cfg(feature = "xnnpack")]
#[test]
fn xnnpack_programs_three_runs_match_executorch() {
    run_three_times("mv2_xnnpack");
    run_three_times("tiny_transformer_xnnpack");
    run_three_times("small_cnn_xnnpack");
}
