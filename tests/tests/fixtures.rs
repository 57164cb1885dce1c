//! Whole programs exported by ExecuTorch, run with the kernel library and compared with
//! ExecuTorch's own outputs (fixture `NAME.io.yaml` gives method, inputs, tolerance).

use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

use et_ops as _;

fn check(name: &str) {
    let spec = IoSpec::read(&fixtures_dir(), name);
    let got = run_case(&fixtures_dir(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn noop() {
    check("noop");
}

#[test]
fn add() {
    check("add");
}

#[test]
fn add_mul() {
    check("add_mul");
}

#[test]
fn two_methods() {
    // The io.yaml names the second method, `double_plus_one`.
    check("two_methods");
}

#[test]
fn mlp() {
    check("mlp");
}

#[test]
fn int_ops() {
    check("int_ops");
}

#[test]
fn dtype_mix() {
    check("dtype_mix");
}

#[test]
fn cond() {
    check("cond");
}

#[test]
fn cond_else() {
    check("cond_else");
}

#[test]
fn dynamic() {
    // Exported for batches up to 16, run at batch 3.
    check("dynamic");
}

#[test]
fn dynamic_view() {
    check("dynamic_view");
}

#[test]
fn tiny_transformer() {
    check("tiny_transformer");
}

#[test]
fn small_cnn() {
    check("small_cnn");
}

#[test]
fn mlp_ptd() {
    // Every weight in mlp_ptd.ptd (io.yaml `data_files`).
    check("mlp_ptd");
}

#[test]
fn mv2() {
    check("mv2");
}

#[test]
fn many_adds() {
    check("many_adds");
}
