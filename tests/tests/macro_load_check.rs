//! The argument kinds `#[kernel]` declares are checked against each call when the method
//! loads: a kernel whose parameters do not fit its operator's call fails `load_method`
//! with the operator, the position, and what was expected versus found, instead of
//! misreading values at execute time.

use et_macros::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};
use etch_tests::{fixtures_dir, run_case, IoSpec};

// `aten::add.out(Tensor self, Tensor other, *, Scalar alpha, Tensor(a!) out)`: the
// program passes an int for `alpha`, this kernel declares a bool.
#[kernel("aten::add.out", dtype = f32)]
fn add_wrong_kind(
    _: &KernelContext<'_>,
    _a: &Tensor,
    _b: &Tensor,
    _alpha: bool,
    _out: &mut Tensor,
) -> KernelResult {
    unreachable!("never called: load_method rejects the call")
}

// `aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)`: one parameter short.
#[kernel("aten::mm.out", dtype = f32)]
fn mm_too_few(_: &KernelContext<'_>, _a: &Tensor, _out: &mut Tensor) -> KernelResult {
    unreachable!("never called: load_method rejects the call")
}

fn load_error(dir: &std::path::Path, case: &str) -> String {
    let spec = IoSpec::read(dir, case);
    run_case(dir, &spec).expect_err("the kernel does not fit the call")
}

#[test]
fn wrong_argument_kind_fails_at_load() {
    let err = load_error(&fixtures_dir(), "add");
    assert!(err.contains("argument 2 of aten::add.out"), "{err}");
    assert!(err.contains("should be a bool"), "{err}");
    assert!(err.contains("passes a value of kind `int`"), "{err}");
}

#[test]
fn wrong_argument_count_fails_at_load() {
    let err = load_error(&fixtures_dir().join("opcases"), "mm_float32");
    assert!(err.contains("aten::mm.out"), "{err}");
    assert!(err.contains("its kernel takes 3"), "{err}");
}
