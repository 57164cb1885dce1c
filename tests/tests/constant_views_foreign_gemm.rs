//! Constant views are only made for et-ops' own matrix products: here `aten::addmm.out`
//! for float32 is this crate's kernel, which accepts contiguous matrices only, so mv2's
//! permute of its classifier weight must keep running (and the outputs still match).

mod counted_permute;

use counted_permute::permutes_during;
use et_macros::kernel;
use et_runtime::{AllDtypes, KernelContext, KernelError, KernelResult, Scalar, Tensor};
use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

/// A downstream addmm that reads its matrices as contiguous (as a hand-written kernel
/// might): refuses any other layout, then computes with et-ops' kernel.
#[kernel("aten::addmm.out", dtype = f32)]
fn contiguous_addmm(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if !a.is_contiguous() || !b.is_contiguous() {
        return Err(KernelError::invalid(
            "this addmm reads contiguous matrices only",
        ));
    }
    et_ops::linalg::addmm::addmm_out::<AllDtypes>(ctx, input, a, b, beta, alpha, out)
}

#[test]
fn mv2_keeps_its_permute_for_a_foreign_addmm() {
    let spec = IoSpec::read(&fixtures_dir(), "mv2");
    let (got, ran) = permutes_during(|| run_case(&fixtures_dir(), &spec));
    let got = got.unwrap_or_else(|e| panic!("mv2: {e}"));
    assert_eq!(ran, 1);
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("mv2: {e}"));
}
