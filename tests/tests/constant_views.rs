//! Constant views (et-ops' rewrite rule in `linalg/constant_view.rs`): a `permute_copy`
//! of a constant weight read only by et-ops' `addmm`/`mm` (how `nn.Linear` exports)
//! becomes a view of the constant at load and never runs, and the programs still match ExecuTorch's outputs.
//!
//! The permute's kernel here is the test's own float32 entry (`counted_permute`), which
//! counts its calls and then runs et-ops' kernel: the count is what an execute really ran
//! (the view does not depend on which crate serves the permute).

mod counted_permute;

use counted_permute::permutes_during;
use et_runtime::{FileLoader, Program};
use etch_tests::{compare, fixture, fixtures_dir, run_case, IoSpec};

/// The program's `aten::permute_copy.out` calls.
fn permute_calls(name: &str) -> usize {
    let loader = FileLoader::open(fixture(&format!("{name}.pte"))).expect("fixture");
    let program = Program::load(&loader).expect("valid program");
    let meta = program.method_meta("forward").expect("forward");
    meta.kernel_calls()
        .map(|c| c.expect("well formed"))
        .filter(|c| (c.operator.name, c.operator.overload) == ("aten::permute_copy", "out"))
        .count()
}

/// Runs fixture `name` once, compares its outputs with ExecuTorch's, and returns how many
/// permutes the execute ran.
fn permutes_run(name: &str) -> usize {
    let spec = IoSpec::read(&fixtures_dir(), name);
    let (got, ran) = permutes_during(|| run_case(&fixtures_dir(), &spec));
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    ran
}

/// mv2's one permute transposes the classifier's 1000x1280 weight for `addmm`: it becomes
/// a view, and the execute runs no permute at all.
#[test]
fn mv2_runs_no_permute() {
    assert_eq!(permute_calls("mv2"), 1);
    assert_eq!(permutes_run("mv2"), 0);
}

/// mlp's two linears: both weights become views.
#[test]
fn mlp_runs_no_permute() {
    assert_eq!(permute_calls("mlp"), 2);
    assert_eq!(permutes_run("mlp"), 0);
}

/// tiny_transformer permutes its four linear weights (views now) and, in attention, the
/// activations (inputs computed at run time, so those permutes still run, and the outputs
/// still match).
#[test]
fn tiny_transformer_runs_only_the_activation_permutes() {
    assert_eq!(permute_calls("tiny_transformer"), 9);
    assert_eq!(permutes_run("tiny_transformer"), 5);
}
