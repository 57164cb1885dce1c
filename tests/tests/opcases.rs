//! The operator conformance suite: every case in `tests/fixtures/opcases/index.yaml` (428
//! programs, expected outputs from eager PyTorch: 379 original cases and 49 `compat_*`
//! cases from PyTorch's OpInfo samples) runs through the real loader and the kernel
//! library and must match within the case's tolerance, except the [`KNOWN_GAPS`].
//!
//! `ETCH_OPCASE_FILTER=substring` limits the run to matching case names.

use etch_tests::{compare, fixtures_dir, run_case, IoSpec};
use serde::Deserialize;

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

/// Cases etch does not pass yet, with why: they run and are reported, and the test fails
/// if one starts passing, so the list can only shrink.
///
/// float32 `scaled_dot_product_attention` decomposed into `mul.Scalar`/`bmm`/`_softmax`/
/// `bmm`, samples 9, 12 and 13: etch lands up to 1.4e-5 from eager PyTorch, just outside
/// the default tolerance (atol 1e-5, rtol 1.3e-6). The expected outputs come from eager's
/// fused CPU flash-attention kernel (one `q @ k^T` scaled afterwards, unnormalized `exp`,
/// division by the sum after the `@ v`), while the exported graph is PyTorch's math
/// decomposition, which rounds `q * sqrt(scale)` and `k * sqrt(scale)` to float32 before
/// the product; with scores this large (inputs up to 9 in magnitude) those roundings alone
/// move the softmax by more than the tolerance.
///
/// etch evaluates the graph as written: its float32 `bmm` sums each element in order with
/// each product rounded (`util::gemm::sgemm_in_order`, ExecuTorch's portable `bmm`), its
/// `exp` rounds the double-precision one (as glibc's `expf` nearly always does). That
/// passes the 10 other samples and gives ExecuTorch's outputs bit for bit on 9 and 13,
/// which ExecuTorch's runtime fails too (`executorch_agrees: false`). On 12 ExecuTorch's
/// Python runtime passes because it registers the optimized `bmm`, whose vector lanes
/// use fused multiply-adds and whose scalar tail does not: its result is, element by
/// element, one of the two roundings, depending on the element's position in a vector.
const KNOWN_GAPS: &[&str] = &[
    "compat_sdpa_s9_float32",
    "compat_sdpa_s12_float32",
    "compat_sdpa_s13_float32",
];

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
        if KNOWN_GAPS.contains(&entry.case.as_str()) {
            match result {
                Ok(()) => failures.push(format!(
                    "{} passes now: remove it from KNOWN_GAPS",
                    entry.case
                )),
                Err(e) => eprintln!("known gap {}: {e}", entry.case),
            }
            continue;
        }
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
