//! ExecuTorch's quantized operator library (`quantized_decomposed::*`): the single-operator
//! `q_*` programs listed in `tests/fixtures/q_dq_ops.index.yaml` and the portable
//! quantized MobileNetV2 (`mv2_q8_portable`, 365 kernel calls), all exported by
//! ExecuTorch 1.5 and compared with ExecuTorch's own outputs within each io.yaml's
//! tolerance (the `q_*` cases exactly).

use etch_tests::{as_f64, compare, fixtures_dir, run_case, IoSpec};
use serde::Deserialize;

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

/// Every operator of ExecuTorch 1.5's `kernels/quantized/quantized.yaml`.
const QUANTIZED_YAML: &[&str] = &[
    "quantized_decomposed::add.out",
    "quantized_decomposed::choose_qparams.Tensor_out",
    "quantized_decomposed::choose_qparams_per_token_asymmetric.out",
    "quantized_decomposed::dequantize_per_channel.out",
    "quantized_decomposed::dequantize_per_tensor.out",
    "quantized_decomposed::dequantize_per_tensor.Tensor_out",
    "quantized_decomposed::dequantize_per_token.out",
    "quantized_decomposed::embedding_2bit.dtype_out",
    "quantized_decomposed::embedding_2bit.out",
    "quantized_decomposed::embedding_4bit.dtype_out",
    "quantized_decomposed::embedding_4bit.out",
    "quantized_decomposed::embedding_byte.dtype_out",
    "quantized_decomposed::embedding_byte.out",
    "quantized_decomposed::mixed_linear.out",
    "quantized_decomposed::mixed_mm.out",
    "quantized_decomposed::quantize_per_channel.out",
    "quantized_decomposed::quantize_per_tensor.out",
    "quantized_decomposed::quantize_per_tensor.Tensor_out",
    "quantized_decomposed::quantize_per_token.out",
];

#[derive(Deserialize)]
struct IndexEntry {
    case: String,
    operators: Vec<String>,
}

fn read_index() -> Vec<IndexEntry> {
    let path = fixtures_dir().join("q_dq_ops.index.yaml");
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn is_registered(full: &str) -> bool {
    let (name, overload) = full.split_once('.').unwrap_or((full, ""));
    et_runtime::registry::has_operator(name, overload)
}

fn check(name: &str) {
    let spec = IoSpec::read(&fixtures_dir(), name);
    let got = run_case(&fixtures_dir(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn every_quantized_yaml_operator_is_registered() {
    let missing: Vec<&str> = QUANTIZED_YAML
        .iter()
        .copied()
        .filter(|op| !is_registered(op))
        .collect();
    assert!(missing.is_empty(), "not registered: {missing:?}");
}

#[test]
fn every_index_operator_is_registered_and_in_quantized_yaml() {
    let index = read_index();
    assert_eq!(index.len(), 14, "q_dq_ops.index.yaml lists 14 cases");
    for e in &index {
        for op in &e.operators {
            assert!(is_registered(op), "{}: {op} not registered", e.case);
            assert!(QUANTIZED_YAML.contains(&op.as_str()), "{}: {op}", e.case);
        }
    }
}

#[test]
fn q_cases_match_executorch() {
    let index = read_index();
    let mut failures = Vec::new();
    for e in &index {
        let spec = IoSpec::read(&fixtures_dir(), &e.case);
        let result =
            run_case(&fixtures_dir(), &spec).and_then(|got| compare(&fixtures_dir(), &spec, &got));
        if let Err(err) = result {
            failures.push(format!("{}: {err}", e.case));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// One test per case as well, so a failure names its case in the test list.
macro_rules! q_case {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            check(stringify!($name));
        }
    )*};
}

q_case!(
    q_quantize_per_tensor_int8,
    q_quantize_per_tensor_uint8,
    q_quantize_per_tensor_tensor_int8,
    q_dequantize_per_tensor_int8,
    q_dequantize_per_tensor_uint8,
    q_dequantize_per_tensor_tensor_int8,
    q_quantize_per_channel_int8,
    q_dequantize_per_channel_int8,
    q_choose_qparams_tensor_int8,
    q_choose_qparams_per_token_asymmetric_int8,
    q_quantize_per_token_int8,
    q_dequantize_per_token_int8,
    q_embedding_byte_int8,
    q_embedding_byte_groupwise_int8,
);

/// The quantized MobileNetV2 on the portable and quantized kernels: within 24 output
/// quantization steps (the io.yaml's atol) of ExecuTorch. The largest error is printed
/// (`--nocapture`) to watch how close the float operators' summation order keeps it.
#[test]
fn mv2_q8_portable() {
    let name = "mv2_q8_portable";
    let spec = IoSpec::read(&fixtures_dir(), name);
    let got = run_case(&fixtures_dir(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = std::fs::read(fixtures_dir().join(&spec.outputs[0].file)).unwrap();
    let (g, w) = (
        as_f64(got[0].dtype, &got[0].bytes),
        as_f64(got[0].dtype, &want),
    );
    let max_err = g
        .iter()
        .zip(&w)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f64, f64::max);
    // The output's quantization step (atol is 24 of them).
    let step = spec.atol / 24.0;
    println!(
        "{name}: max |error| {max_err:.6} = {:.2} output steps (atol {} = 24 steps)",
        max_err / step,
        spec.atol
    );
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}
