//! The parity conformance suite: every case in `tests/fixtures/opcases/index-parity.yaml`
//! (395 programs over 104 operators of ExecuTorch's portable library, expected outputs
//! from eager PyTorch) runs through the real loader and the kernel library.
//!
//! Operators not implemented yet are listed in [`PENDING`]: their cases are skipped, and
//! the test fails if one of them is registered, so the list can only shrink. Every other
//! case must match within its tolerance (`check: shape_only` cases: dtype and sizes only).
//!
//! `ETCH_OPCASE_FILTER=substring` limits the run to matching case names.

use etch_tests::{compare, fixtures_dir, run_case, IoSpec};
use serde::Deserialize;

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

/// Target operators of the parity cases that etch does not register yet.
const PENDING: &[&str] = &[];

#[derive(Deserialize)]
struct IndexEntry {
    case: String,
    target: String,
    operators: Vec<String>,
    executorch_agrees: bool,
}

/// `name.overload` split as a program stores it (`aten::copy_` has no overload).
fn split_operator(full: &str) -> (&str, &str) {
    full.split_once('.').unwrap_or((full, ""))
}

fn is_registered(full: &str) -> bool {
    let (name, overload) = split_operator(full);
    et_runtime::registry::has_operator(name, overload)
}

fn read_index() -> Vec<IndexEntry> {
    let path = fixtures_dir().join("opcases").join("index-parity.yaml");
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn pending_operators_are_not_registered() {
    let index = read_index();
    let stale: Vec<&str> = PENDING
        .iter()
        .copied()
        .filter(|op| is_registered(op))
        .collect();
    assert!(
        stale.is_empty(),
        "registered now, remove from PENDING: {stale:?}"
    );
    let unknown: Vec<&str> = PENDING
        .iter()
        .copied()
        .filter(|op| !index.iter().any(|e| e.target == *op))
        .collect();
    assert!(unknown.is_empty(), "not a parity target: {unknown:?}");
}

#[test]
fn every_parity_opcase_matches_pytorch() {
    let dir = fixtures_dir().join("opcases");
    let index = read_index();
    assert_eq!(index.len(), 395, "the parity suite has 395 cases");
    let filter = std::env::var("ETCH_OPCASE_FILTER").unwrap_or_default();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut skipped = 0;
    for entry in index.iter().filter(|e| e.case.contains(&filter)) {
        if PENDING.contains(&entry.target.as_str()) {
            skipped += 1;
            continue;
        }
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
    assert!(
        ran + skipped > 0,
        "no case matches ETCH_OPCASE_FILTER={filter}"
    );
    eprintln!("{ran} parity cases ran, {skipped} skipped (pending operators)");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
