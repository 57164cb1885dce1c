//! Whole programs on a 2-thread pool (`Method::execute_with`): the same outputs as
//! ExecuTorch's, within each fixture's tolerance, and bit for bit the same as one thread
//! (etch's split kernels keep every element's summation order).

use et_runtime::threads::ThreadPool;
use etch_tests::{compare, fixtures_dir, run_case, run_case_with_pool, IoSpec};

use et_ops as _;
use et_xnnpack as _;

fn check(name: &str) {
    let pool = ThreadPool::new(2).unwrap();
    let spec = IoSpec::read(&fixtures_dir(), name);
    let got =
        run_case_with_pool(&fixtures_dir(), &spec, &pool).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    let one = run_case(&fixtures_dir(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (i, (a, b)) in got.iter().zip(&one).enumerate() {
        assert!(
            a.sizes == b.sizes && a.bytes == b.bytes,
            "{name}: output {i} differs between 2 threads and 1"
        );
    }
}

#[test]
fn mv2_on_two_threads() {
    check("mv2");
}

#[test]
fn tiny_transformer_on_two_threads() {
    check("tiny_transformer");
}

#[test]
fn small_cnn_on_two_threads() {
    check("small_cnn");
}

#[test]
fn mlp_on_two_threads() {
    check("mlp");
}

// Inside the XNNPACK backend: convolutions, depthwise and direct kernels cut into bands
// of output rows.
#[test]
fn mv2_xnnpack_on_two_threads() {
    check("mv2_xnnpack");
}

#[test]
fn mv2_xnnpack_q8_on_two_threads() {
    check("mv2_xnnpack_q8");
}

#[test]
fn tiny_transformer_xnnpack_on_two_threads() {
    check("tiny_transformer_xnnpack");
}
