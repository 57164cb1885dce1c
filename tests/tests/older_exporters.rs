//! Programs written by older ExecuTorch releases still run: for each release in
//! [`RELEASES`], an MLP, a small CNN, a transformer block and the MLP lowered to XNNPACK
//! (fixtures in `tests/fixtures/older/<release>/`, made by `scripts/gen-older-fixtures.py`
//! with that release and its torch), compared with that release's own runtime outputs.

use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

// Link the kernel libraries: nothing else in this test names them.
use et_ops as _;
use et_xnnpack as _;

/// The releases with fixtures. A release's directory must hold exactly [`CASES`].
const RELEASES: &[&str] = &["1.0.1", "1.2.0", "1.4.1"];

const CASES: &[&str] = &["mlp", "small_cnn", "transformer_block", "mlp_xnnpack"];

fn runs(release: &str) {
    let dir = fixtures_dir().join("older").join(release);
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".io.yaml").map(str::to_owned)
        })
        .collect();
    found.sort();
    let mut want: Vec<&str> = CASES.to_vec();
    want.sort();
    assert_eq!(found, want, "release {release}'s cases");
    for case in CASES {
        let spec = IoSpec::read(&dir, case);
        let got = run_case(&dir, &spec).unwrap_or_else(|e| panic!("{release} {case}: {e}"));
        compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{release} {case}: {e}"));
    }
}

#[test]
fn every_release_has_fixtures() {
    let dir = fixtures_dir().join("older");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "README.md")
        .collect();
    found.sort();
    assert_eq!(found, RELEASES);
}

#[test]
fn release_1_0_programs_run() {
    runs("1.0.1");
}

#[test]
fn release_1_2_programs_run() {
    runs("1.2.0");
}

#[test]
fn release_1_4_programs_run() {
    runs("1.4.1");
}
