//! `#[kernel]` accepted forms: each registers what it should, with the declared argument
//! kinds, and the registered wrappers run real programs correctly.

use et_macros::kernel;
use et_runtime::__private::{ArgKind, DtypeKey, ReturnKind};
use et_runtime::{
    et_switch, registry::find_kernel, DtypeSelection, DtypeSet, Element, KernelContext,
    KernelError, KernelResult, Scalar, ScalarType, Tensor, TensorListMut,
};
use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

// --- Small numerics shared by the test kernels ---------------------------------------

/// The element arithmetic the test kernels need.
trait Num: Element {
    fn from_f64(v: f64) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

macro_rules! num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            fn from_f64(v: f64) -> Self { v as $t }
            fn add(self, o: Self) -> Self { self.wrapping_add_(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul_(o) }
        }
    )*};
}

trait Wrapping: Sized {
    fn wrapping_add_(self, o: Self) -> Self;
    fn wrapping_mul_(self, o: Self) -> Self;
}
macro_rules! wrapping_int {
    ($($t:ty),*) => {$(impl Wrapping for $t {
        fn wrapping_add_(self, o: Self) -> Self { self.wrapping_add(o) }
        fn wrapping_mul_(self, o: Self) -> Self { self.wrapping_mul(o) }
    })*};
}
macro_rules! wrapping_float {
    ($($t:ty),*) => {$(impl Wrapping for $t {
        fn wrapping_add_(self, o: Self) -> Self { self + o }
        fn wrapping_mul_(self, o: Self) -> Self { self * o }
    })*};
}
wrapping_int!(i32, i64);
wrapping_float!(f32, f64);
num!(f32, f64, i32, i64);

/// Broadcasts two row-major tensors to `out`'s shape and applies `f` elementwise.
fn broadcast<T: Num>(
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
    f: impl Fn(T, T) -> T,
) -> KernelResult {
    let n = a.dim().max(b.dim());
    let dim_of = |t: &Tensor, d: usize| (d + t.dim()).checked_sub(n).map_or(1, |k| t.sizes()[k]);
    let shape: Vec<usize> = (0..n).map(|d| dim_of(a, d).max(dim_of(b, d))).collect();
    out.resize(&shape)?;
    let index = |t: &Tensor, mut i: usize| {
        let (mut off, mut stride) = (0, 1);
        for d in (0..n).rev() {
            let k = i % shape[d];
            i /= shape[d];
            let size = dim_of(t, d);
            if size != 1 {
                off += k * stride;
            }
            stride *= size;
        }
        off
    };
    let (x, y) = (a.data::<T>()?, b.data::<T>()?);
    let o = out.data_mut::<T>()?;
    for (i, r) in o.iter_mut().enumerate() {
        *r = f(x[index(a, i)], y[index(b, i)]);
    }
    Ok(())
}

fn run_fixture(dir: &std::path::Path, name: &str) {
    let spec = IoSpec::read(dir, name);
    let got = run_case(dir, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

// --- `dtype = f32`: one entry for float32 -------------------------------------------

#[kernel("aten::add.out", dtype = f32)]
fn add_f32(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let alpha = alpha.to_f64() as f32;
    broadcast::<f32>(a, b, out, |x, y| x + alpha * y)
}

#[test]
fn dtype_kernel_is_registered_for_its_dtype_only() {
    let entry = find_kernel("aten::add", "out", Some(ScalarType::Float)).expect("registered");
    assert_eq!(entry.name(), "aten::add.out");
    assert_eq!(entry.dtype(), DtypeKey::of(ScalarType::Float));
    assert_eq!(entry.hash(), et_runtime::registry::op_hash("aten::add.out"));
    assert_eq!(
        entry.signature.args,
        &[
            ArgKind::Tensor,
            ArgKind::Tensor,
            ArgKind::Scalar,
            ArgKind::TensorMut
        ]
    );
    assert_eq!(entry.signature.returns, ReturnKind::Outs);
    assert_eq!(entry.signature.crate_name, "etch-tests");
    assert!(find_kernel("aten::add", "out", Some(ScalarType::Double)).is_none());
}

#[test]
fn dtype_kernel_runs_add_pte() {
    run_fixture(&fixtures_dir(), "add");
}

// --- `dtype = [..]` on a generic function: one entry per dtype -----------------------

#[kernel("aten::mul.out", dtype = [f32, f64, i32])]
fn mul<T: Num>(_ctx: &KernelContext<'_>, a: &Tensor, b: &Tensor, out: &mut Tensor) -> KernelResult {
    broadcast::<T>(a, b, out, T::mul)
}

#[test]
fn generic_kernel_has_one_entry_per_dtype() {
    for dtype in [ScalarType::Float, ScalarType::Double, ScalarType::Int] {
        let entry = find_kernel("aten::mul", "out", Some(dtype)).expect("registered");
        assert_eq!(entry.dtype(), DtypeKey::of(dtype));
        assert_eq!(
            entry.signature.args,
            &[ArgKind::Tensor, ArgKind::Tensor, ArgKind::TensorMut]
        );
    }
    assert!(find_kernel("aten::mul", "out", Some(ScalarType::Long)).is_none());
    let count = et_runtime::registry::kernels()
        .iter()
        .filter(|e| e.name() == "aten::mul.out")
        .count();
    assert_eq!(count, 3);
}

#[test]
fn generic_kernel_runs_each_instantiation() {
    let dir = fixtures_dir().join("opcases");
    for case in ["mul_float32", "mul_float64", "mul_int32"] {
        run_fixture(&dir, case);
    }
}

// --- Fallback with `et_switch!` over the selected dtypes ------------------------------

fn sub_impl<T: Num>(a: &Tensor, b: &Tensor, alpha: Scalar, out: &mut Tensor) -> KernelResult {
    let alpha = T::from_f64(alpha.to_f64());
    let minus_one = T::from_f64(-1.0);
    broadcast::<T>(a, b, out, |x, y| x.add(minus_one.mul(alpha.mul(y))))
}

#[kernel("aten::sub.out")]
fn sub<S: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    // No selection in this build: the selection parameter is every dtype.
    assert_eq!(S::SET, DtypeSet::ALL);
    et_switch!(S, a.dtype(), [f32, f64, i32, i64], T => sub_impl::<T>(a, b, alpha, out))
}

#[test]
fn fallback_kernel_serves_every_dtype() {
    for dtype in [None, Some(ScalarType::Float), Some(ScalarType::Long)] {
        let entry = find_kernel("aten::sub", "out", dtype).expect("registered");
        assert_eq!(entry.dtype(), DtypeKey::FALLBACK);
        assert_eq!(entry.signature.dtypes, DtypeSet::ALL);
    }
    let dir = fixtures_dir().join("opcases");
    for case in ["sub_float32", "sub_float64", "sub_int32", "sub_int64"] {
        run_fixture(&dir, case);
    }
}

#[test]
fn fallback_kernel_rejects_unlisted_dtype_at_execute() {
    let dir = fixtures_dir().join("opcases");
    let spec = IoSpec::read(&dir, "sub_int16");
    let err = run_case(&dir, &spec).expect_err("int16 is not in the et_switch! list");
    assert!(err.contains("unsupported dtype"), "{err}");
}

// --- Every parameter kind -------------------------------------------------------------

#[allow(clippy::too_many_arguments, reason = "one parameter per argument kind")]
#[kernel("etch_test::every_kind.out")]
fn every_kind(
    _ctx: &KernelContext<'_>,
    _tensor: &Tensor,
    _opt_tensor: Option<&Tensor>,
    _tensors: &[&Tensor],
    _opt_tensors: &[Option<&Tensor>],
    _scalar: Scalar,
    _opt_scalar: Option<Scalar>,
    _int: i64,
    _opt_int: Option<i64>,
    _double: f64,
    _opt_double: Option<f64>,
    _bool: bool,
    _opt_bool: Option<bool>,
    _ints: &[i64],
    _opt_ints: Option<&[i64]>,
    _doubles: &[f64],
    _opt_doubles: Option<&[f64]>,
    _bools: &[bool],
    _dtype: ScalarType,
    _opt_dtype: Option<ScalarType>,
    _string: &str,
    _opt_string: Option<&str>,
    _outs: TensorListMut<'_>,
    _out: &mut Tensor,
) -> KernelResult {
    Ok(())
}

#[test]
fn every_parameter_kind_is_declared_in_order() {
    let entry = find_kernel("etch_test::every_kind", "out", None).expect("registered");
    use ArgKind::*;
    assert_eq!(
        entry.signature.args,
        &[
            Tensor,
            OptionalTensor,
            TensorList,
            OptionalTensorList,
            Scalar,
            OptionalScalar,
            Int,
            OptionalInt,
            Double,
            OptionalDouble,
            Bool,
            OptionalBool,
            IntList,
            OptionalIntList,
            DoubleList,
            OptionalDoubleList,
            BoolList,
            ScalarType,
            OptionalScalarType,
            String,
            OptionalString,
            TensorListMut,
            TensorMut,
        ]
    );
}

// --- Paths, patterns, explicit lifetimes, `Result<(), KernelError>` -------------------

#[kernel("etch_test::paths.out")]
fn paths<'a>(
    _: &et_runtime::KernelContext<'a>,
    _: &'a et_runtime::Tensor,
    mut _out: &mut et_runtime::Tensor,
) -> Result<(), et_runtime::KernelError> {
    _out = &mut *_out;
    let _ = _out;
    Ok(())
}

#[test]
fn qualified_paths_and_patterns_are_accepted() {
    let entry = find_kernel("etch_test::paths", "out", None).expect("registered");
    assert_eq!(entry.signature.args, &[ArgKind::Tensor, ArgKind::TensorMut]);
    let _: fn() -> KernelError = || KernelError::invalid("unused");
}

// --- Functional returns ---------------------------------------------------------------

#[kernel("etch_test::ret.int")]
fn ret_int(_: &KernelContext<'_>, t: &Tensor) -> KernelResult<i64> {
    Ok(t.dim() as i64)
}

#[kernel("etch_test::ret.double")]
fn ret_double(_: &KernelContext<'_>, x: f64) -> KernelResult<f64> {
    Ok(x * 2.0)
}

#[kernel("etch_test::ret.bool")]
fn ret_bool(_: &KernelContext<'_>, x: bool) -> KernelResult<bool> {
    Ok(!x)
}

#[kernel("etch_test::ret.Scalar")]
fn ret_scalar(_: &KernelContext<'_>, x: Scalar) -> Result<Scalar, KernelError> {
    Ok(x)
}

#[kernel("etch_test::ret_unit")]
fn ret_unit(_: &KernelContext<'_>) -> KernelResult<()> {
    Ok(())
}

#[test]
fn return_kinds() {
    let returns = |overload| {
        find_kernel("etch_test::ret", overload, None)
            .expect("registered")
            .signature
            .returns
    };
    assert_eq!(returns("int"), ReturnKind::Int);
    assert_eq!(returns("double"), ReturnKind::Double);
    assert_eq!(returns("bool"), ReturnKind::Bool);
    assert_eq!(returns("Scalar"), ReturnKind::Scalar);
    let unit = find_kernel("etch_test::ret_unit", "", None).expect("no overload");
    assert_eq!(unit.signature.returns, ReturnKind::Outs);
    assert!(unit.signature.args.is_empty());
}

// --- `crate = path` -------------------------------------------------------------------

mod reexport {
    pub use et_runtime::__private;
}

#[kernel("etch_test::reexported.out", crate = crate::reexport)]
fn reexported(_: &KernelContext<'_>, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

#[test]
fn crate_path_override() {
    assert!(find_kernel("etch_test::reexported", "out", None).is_some());
}

// --- Every dtype name, single dtype on a generic function -----------------------------

#[kernel("etch_test::all_dtypes.out", dtype = [f16, bf16, f32, f64, u8, i8, i16, i32, i64, bool, u16, u32, u64])]
fn all_dtypes<T: Element>(_: &KernelContext<'_>, out: &mut Tensor) -> KernelResult {
    out.data_mut::<T>().map(|_| ())
}

#[kernel("etch_test::one_generic.out", dtype = i64)]
fn one_generic<T: Element>(_: &KernelContext<'_>, out: &mut Tensor) -> KernelResult {
    out.data_mut::<T>().map(|_| ())
}

#[test]
fn every_dtype_name_maps_to_its_scalar_type() {
    use ScalarType::*;
    let all = [
        Half, BFloat16, Float, Double, Byte, Char, Short, Int, Long, Bool, UInt16, UInt32, UInt64,
    ];
    for dtype in all {
        let entry = find_kernel("etch_test::all_dtypes", "out", Some(dtype)).expect("registered");
        assert_eq!(entry.dtype().dtype(), Some(dtype));
    }
    let entry = find_kernel("etch_test::one_generic", "out", Some(Long)).expect("registered");
    assert_eq!(entry.dtype(), DtypeKey::of(Long));
}

// --- Duplicate registrations ----------------------------------------------------------

#[kernel("etch_test::twice.out")]
fn twice_a(_: &KernelContext<'_>, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

#[kernel("etch_test::twice.out")]
fn twice_b(_: &KernelContext<'_>, _out: &mut Tensor) -> KernelResult {
    Ok(())
}

#[test]
fn duplicate_registrations_are_detected() {
    let dups: Vec<_> = et_runtime::registry::duplicates().collect();
    assert_eq!(
        dups.len(),
        1,
        "only etch_test::twice.out is registered twice"
    );
    let (a, b) = dups[0];
    assert_eq!(a.name(), "etch_test::twice.out");
    assert_eq!(b.name(), "etch_test::twice.out");
    assert_eq!(a.dtype(), DtypeKey::FALLBACK);
    // Resolution is deterministic: the first entry in link order, every time.
    let first = find_kernel("etch_test::twice", "out", None).expect("registered");
    assert!(core::ptr::eq(first, a));
}

// --- A kernel defined inside a function body ------------------------------------------

#[test]
fn kernel_in_a_block_registers() {
    #[kernel("etch_test::local.out")]
    fn local(_: &KernelContext<'_>, _out: &mut Tensor) -> KernelResult {
        Ok(())
    }
    assert!(find_kernel("etch_test::local", "out", None).is_some());
}

// --- Several out tensors ----------------------------------------------------------------

#[allow(clippy::too_many_arguments, reason = "the operator's schema")]
#[kernel("etch_test::topk.values")]
fn topk_values(
    _: &KernelContext<'_>,
    _x: &Tensor,
    _k: i64,
    _dim: i64,
    _largest: bool,
    _sorted: bool,
    _values: &mut Tensor,
    _indices: &mut Tensor,
) -> KernelResult {
    Ok(())
}

#[test]
fn several_out_tensors() {
    let entry = find_kernel("etch_test::topk", "values", None).expect("registered");
    use ArgKind::*;
    assert_eq!(
        entry.signature.args,
        &[Tensor, Int, Int, Bool, Bool, TensorMut, TensorMut]
    );
}

// --- One function under two operators ---------------------------------------------------

#[kernel("etch_test::stacked_a.out", dtype = f32)]
#[kernel("etch_test::stacked_b.out", dtype = f32)]
fn stacked<S: DtypeSelection>(_: &KernelContext<'_>, _out: &mut Tensor) -> KernelResult {
    // Both entries call one instantiation, with the union of both operators' dtypes.
    assert_eq!(S::SET, DtypeSet::ALL);
    Ok(())
}

#[test]
fn one_function_can_serve_two_operators() {
    for op in ["etch_test::stacked_a", "etch_test::stacked_b"] {
        let entry = find_kernel(op, "out", Some(ScalarType::Float)).expect("registered");
        assert_eq!(entry.dtype(), DtypeKey::of(ScalarType::Float));
    }
}
