//! The operator conformance suite: every case in `tests/fixtures/opcases` (379 programs
//! over 101 operators, expected outputs from eager PyTorch) runs through the real loader
//! and the kernel library and must match within the case's tolerance.
//!
//! `ETCH_OPCASE_FILTER=substring` limits the run to matching case names.

use etch_tests::{compare, fixtures_dir, run_case, IoSpec};
use serde::Deserialize;

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

#[derive(Deserialize)]
struct IndexEntry {
    case: String,
    operators: Vec<String>,
    executorch_agrees: bool,
}

#[test]
fn every_opcase_matches_pytorch() {
    let dir = fixtures_dir().join("opcases");
    let index: Vec<IndexEntry> =
        serde_yaml::from_str(&std::fs::read_to_string(dir.join("index.yaml")).unwrap()).unwrap();
    assert_eq!(index.len(), 428, "the suite has 428 cases");
    let filter = std::env::var("ETCH_OPCASE_FILTER").unwrap_or_default();
    let mut failures = Vec::new();
    let mut ran = 0;
    for entry in index.iter().filter(|e| e.case.contains(&filter)) {
        ran += 1;
        let spec = IoSpec::read(&dir, &entry.case);
        let result = run_case(&dir, &spec).and_then(|got| compare(&dir, &spec, &got));
        if let Err(e) = result {
            let note = if entry.executorch_agrees {
                ""
            } else {
                " [ExecuTorch also fails this one]"
            };
            failures.push(format!(
                "{} ({}){note}: {e}",
                entry.case,
                entry.operators.join(", ")
            ));
        }
    }
    assert!(ran > 0, "no case matches ETCH_OPCASE_FILTER={filter}");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
