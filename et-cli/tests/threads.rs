//! `etch run --threads N`: mv2 on 2 threads writes the same outputs as on 1, bit for bit
//! (the split kernels keep every element's summation order), also with `--profile` and
//! `--iterations`; a build without the `threads` feature refuses N > 1.

use std::process::Command;

use etch_tests::fixtures_dir;

/// Runs mv2 with the fixture input on `threads` threads plus `extra` arguments; returns
/// the bytes of its output 0.
fn mv2_output(threads: &str, extra: &[&str]) -> Vec<u8> {
    let dir = fixtures_dir();
    let out_dir = std::env::temp_dir().join(format!(
        "etch-threads-{}-{threads}-{}",
        std::process::id(),
        extra.len()
    ));
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .arg("run")
        .arg(dir.join("mv2.pte"))
        .arg("--input")
        .arg(dir.join("mv2.in0.bin"))
        .args(["--threads", threads, "--output-dir"])
        .arg(&out_dir)
        .args(extra)
        .output()
        .expect("etch runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "--threads {threads}: {stderr}");
    let bytes = std::fs::read(out_dir.join("output0.bin")).unwrap();
    std::fs::remove_dir_all(&out_dir).ok();
    bytes
}

#[cfg(feature = "threads")]
#[test]
fn mv2_on_two_threads_equals_one() {
    let one = mv2_output("1", &[]);
    assert_eq!(one.len(), 1000 * 4);
    assert!(mv2_output("2", &[]) == one, "--threads 2 differs from 1");
    let profiled = mv2_output("2", &["--iterations", "2", "--profile"]);
    assert!(profiled == one, "--threads 2 --profile differs from 1");
}

#[cfg(not(feature = "threads"))]
#[test]
fn more_than_one_thread_needs_the_feature() {
    let dir = fixtures_dir();
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .arg("run")
        .arg(dir.join("mv2.pte"))
        .args(["--threads", "2"])
        .output()
        .expect("etch runs");
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("`threads` feature"), "{stderr}");
    // One thread needs nothing.
    assert_eq!(mv2_output("1", &[]).len(), 1000 * 4);
}
