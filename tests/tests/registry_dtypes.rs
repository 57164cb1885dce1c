//! Every kernel in the registry, called for every dtype its registration declares, must
//! run, and must not fail with `InvalidType` ("unsupported dtype for this operator") at
//! execute: a dtype a kernel does not compute must be missing from its registration, so
//! that `load_method` refuses the call with its kernel key instead (issue 17).
//!
//! Each kernel is called with every pair of an input dtype and an out dtype among the
//! dtypes it declares. Arguments come from its declared signature (tensors `[2, 3]` of the
//! input dtype, resizable outs of the out dtype in each rank, scalars and ints 1, doubles
//! 1.0, int lists `[1]`, dtype arguments the out dtype, optionals `None`) or, where
//! those cannot work (shapes that must agree, index tensors, quantization parameters),
//! from a recipe in [`RECIPES`](recipes::RECIPES). A successful call *exercises* the dtypes of all its
//! tensors. The test fails when a call whose tensors all have one declared dtype is
//! refused with "unsupported dtype", and when a declared (kernel, dtype) pair is exercised
//! by no call (outside the few [`UNREACHABLE`](recipes::UNREACHABLE) kernels): so the registry claims no dtype
//! its kernel does not compute. `ETCH_REGISTRY_VERBOSE=1` prints what each such kernel
//! exercised; `ETCH_REGISTRY_OP=name` prints every attempt's error for one kernel.
//!
//! Registrations are dtype masks over all of a call's tensors, so a mixed-dtype kernel
//! (an int64 index, a bool mask, a quantized out) declares the union; a call whose
//! tensors all have one of those dtypes may still be malformed (an all-int8
//! `mixed_mm`) and is refused with `InvalidArgument` naming what is wrong.

use et_runtime::registry::{call_entry, kernels, ArgKind, CallArg, DtypeKey, KernelEntry};
use et_runtime::{
    Arena, DtypeSet, Error, KernelContext, ScalarType, ShapeDynamism, Tensor, TensorBuf,
};

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

#[path = "registry_dtypes/recipes.rs"]
mod recipes;
use recipes::{RECIPES, UNREACHABLE};

/// The dtypes tried, as far as each entry declares them.
const TRIED: [ScalarType; 13] = [
    ScalarType::Bool,
    ScalarType::Byte,
    ScalarType::Char,
    ScalarType::Short,
    ScalarType::Int,
    ScalarType::Long,
    ScalarType::Half,
    ScalarType::BFloat16,
    ScalarType::Float,
    ScalarType::Double,
    ScalarType::UInt16,
    ScalarType::UInt32,
    ScalarType::UInt64,
];

/// A tensor of `dtype` and `sizes` holding 1, 2, 3, ... (true for bool).
fn input(dtype: ScalarType, sizes: &[usize]) -> TensorBuf {
    let numel: usize = sizes.iter().product();
    let mut bytes = Vec::new();
    for v in 1..=numel as u8 {
        let f = f32::from(v);
        match dtype {
            ScalarType::Bool | ScalarType::Byte | ScalarType::Char => {
                bytes.push(if dtype == ScalarType::Bool { 1 } else { v })
            }
            ScalarType::Short | ScalarType::UInt16 => bytes.extend(u16::from(v).to_le_bytes()),
            ScalarType::Int | ScalarType::UInt32 => bytes.extend(u32::from(v).to_le_bytes()),
            ScalarType::Long | ScalarType::UInt64 => bytes.extend(u64::from(v).to_le_bytes()),
            ScalarType::Half => bytes.extend(et_runtime::f16::from_f32(f).to_le_bytes()),
            ScalarType::BFloat16 => bytes.extend(et_runtime::bf16::from_f32(f).to_le_bytes()),
            ScalarType::Float => bytes.extend(f.to_le_bytes()),
            ScalarType::Double => bytes.extend(f64::from(v).to_le_bytes()),
            other => panic!("no test values for {other:?}"),
        }
    }
    TensorBuf::from_bytes(dtype, sizes, &bytes).unwrap()
}

/// The out shapes tried: resizing keeps the rank, so one per rank an out may have, each
/// with room for the results of the arguments below (a padded `[1, 1, 3, 3, 3]` needs
/// 125 elements).
const OUT_SHAPES: [&[usize]; 6] = [
    &[2, 12],
    &[24],
    &[2, 3, 4],
    &[2, 4, 4, 4],
    &[2, 2, 4, 4, 4],
    &[],
];

/// A resizable out tensor of `dtype` with room for the elements of `sizes`.
fn output(dtype: ScalarType, sizes: &[usize]) -> TensorBuf {
    let order: Vec<u8> = (0..sizes.len() as u8).collect();
    TensorBuf::with_layout(dtype, sizes, &order, ShapeDynamism::Bound).unwrap()
}

/// One parsed recipe token.
enum Tok {
    In(ScalarType, Vec<usize>),
    /// Zeros: index tensors, grid points.
    Zeros(ScalarType, Vec<usize>),
    Out(Option<ScalarType>),
    /// An out of the dtypes tried, starting at a shape of its own.
    OutShaped(Vec<usize>),
    OutList,
    List(Vec<(ScalarType, Vec<usize>)>),
    Int(i64),
    Double(f64),
    Bool(bool),
    None,
    IntList(Vec<i64>),
    DoubleList(Vec<f64>),
    BoolList(Vec<bool>),
    /// A dtype argument: the dtype of the outs being tried.
    OutDtype,
    /// A dtype argument: the dtype of the inputs being tried.
    InDtype,
    /// An out of a dtype and shape of its own.
    OutTyped(ScalarType, Vec<usize>),
    Str(&'static str),
}

fn named_dtype(name: &str) -> ScalarType {
    *TRIED
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("unknown dtype {name}"))
}

fn shape(s: &str) -> Vec<usize> {
    if s == "0" {
        return Vec::new();
    }
    s.split('x').map(|d| d.parse().unwrap()).collect()
}

fn parse_recipe(recipe: &str, dtype: ScalarType, out: ScalarType) -> Vec<Tok> {
    recipe
        .split(' ')
        .map(|t| {
            let rest = |n: usize| &t[n..];
            match t {
                "O" => Tok::Out(None),
                "OL" => Tok::Out(Some(ScalarType::Long)),
                "OTL" => Tok::OutList,
                "N" => Tok::None,
                "DT" => Tok::OutDtype,
                "ID" => Tok::InDtype,
                // `>f64:1` an out of the named dtype.
                _ if t.starts_with('>') => {
                    let (name, sizes) = rest(1).split_once(':').unwrap();
                    Tok::OutTyped(named_dtype(name), shape(sizes))
                }
                "OB" => Tok::Out(Some(ScalarType::Bool)),
                _ if t.starts_with("Os") => Tok::OutShaped(shape(rest(2))),
                // `@f64:1` a tensor of the named dtype holding 1, 2, ...
                // (`@out:4` one of the dtype the outs are tried in).
                _ if t.starts_with('@') => {
                    let (name, sizes) = rest(1).split_once(':').unwrap();
                    let dtype = if name == "out" {
                        out
                    } else {
                        named_dtype(name)
                    };
                    Tok::In(dtype, shape(sizes))
                }
                "y" => Tok::Bool(true),
                "n" => Tok::Bool(false),
                _ if t.starts_with("TL") => {
                    Tok::List(rest(2).split(',').map(|s| (dtype, shape(s))).collect())
                }
                _ if t.starts_with("LL") => Tok::List(
                    rest(2)
                        .split(',')
                        .map(|s| (ScalarType::Long, shape(s)))
                        .collect(),
                ),
                _ if t.starts_with("IL") => {
                    Tok::IntList(rest(2).split(',').map(|v| v.parse().unwrap()).collect())
                }
                _ if t.starts_with("DL") => {
                    Tok::DoubleList(rest(2).split(',').map(|v| v.parse().unwrap()).collect())
                }
                _ if t.starts_with("BL") => {
                    Tok::BoolList(rest(2).split(',').map(|v| v == "1").collect())
                }
                _ if t.starts_with('T') => Tok::In(dtype, shape(rest(1))),
                _ if t.starts_with('L') => Tok::Zeros(ScalarType::Long, shape(rest(1))),
                _ if t.starts_with('B') => Tok::In(ScalarType::Bool, shape(rest(1))),
                _ if t.starts_with('F') => Tok::Zeros(ScalarType::Float, shape(rest(1))),
                _ if t.starts_with('I') || t.starts_with('i') || t.starts_with('S') => {
                    Tok::Int(rest(1).parse().unwrap())
                }
                _ if t.starts_with('D') => Tok::Double(rest(1).parse().unwrap()),
                _ => panic!("bad recipe token {t}"),
            }
        })
        .collect()
}

/// The generic recipe of a signature: `[2, 3]` tensors, ones, `[1]` lists, `None`s.
fn generic_recipe(kinds: &[ArgKind], dtype: ScalarType) -> Vec<Tok> {
    kinds
        .iter()
        .map(|kind| match kind {
            ArgKind::Tensor => Tok::In(dtype, vec![2, 3]),
            ArgKind::TensorMut => Tok::Out(None),
            ArgKind::TensorList => Tok::List(vec![(dtype, vec![2, 3]), (dtype, vec![2, 3])]),
            ArgKind::OptionalTensorList => Tok::List(vec![(dtype, vec![2, 3])]),
            ArgKind::TensorListMut => Tok::OutList,
            ArgKind::Scalar | ArgKind::Int => Tok::Int(1),
            ArgKind::Double => Tok::Double(1.0),
            ArgKind::Bool => Tok::Bool(false),
            ArgKind::IntList => Tok::IntList(vec![1]),
            ArgKind::DoubleList => Tok::DoubleList(vec![1.0]),
            ArgKind::BoolList => Tok::BoolList(vec![true]),
            ArgKind::ScalarType => Tok::OutDtype,
            ArgKind::String => Tok::Str("none"),
            _ => Tok::None,
        })
        .collect()
}

/// The tensors one call needs, kept alive while `CallArg`s borrow them.
struct Call {
    tensors: Vec<TensorBuf>,
}

/// Calls `entry` with inputs of `dtype` and outs of `out` (shaped `shape`), with the
/// arguments of `recipe` or the generic ones. Returns the dtypes of the call's tensors with
/// the result.
fn attempt(
    entry: &KernelEntry,
    recipe: Option<&str>,
    dtype: ScalarType,
    out: ScalarType,
    shape: &[usize],
    scratch: &mut [u8],
) -> (DtypeSet, Result<(), et_runtime::KernelError>) {
    let toks = match recipe {
        Some(r) => parse_recipe(r, dtype, out),
        None => generic_recipe(entry.signature.args, dtype),
    };
    // Allocate every tensor first, then borrow them in order.
    let mut call = Call {
        tensors: Vec::new(),
    };
    for tok in &toks {
        match tok {
            Tok::In(d, sizes) => call.tensors.push(input(*d, sizes)),
            Tok::Zeros(d, sizes) => call.tensors.push(TensorBuf::zeros(*d, sizes).unwrap()),
            Tok::Out(d) => call.tensors.push(output(d.unwrap_or(out), shape)),
            Tok::OutShaped(sizes) => call.tensors.push(output(out, sizes)),
            Tok::OutTyped(d, sizes) => call.tensors.push(output(*d, sizes)),
            Tok::OutList => call
                .tensors
                .extend([output(out, shape), output(out, shape)]),
            // List items of int64 are indices: zeros.
            Tok::List(items) => call.tensors.extend(items.iter().map(|(d, s)| {
                if *d == ScalarType::Long && *d != dtype {
                    TensorBuf::zeros(*d, s).unwrap()
                } else {
                    input(*d, s)
                }
            })),
            _ => {}
        }
    }
    let dtypes = call
        .tensors
        .iter()
        .fold(DtypeSet::EMPTY, |set, t| set.with(t.dtype()));
    let mut pool: Vec<&mut Tensor> = call.tensors.iter_mut().map(|t| &mut **t).collect();
    pool.reverse();
    let mut args = Vec::new();
    for tok in &toks {
        args.push(match tok {
            Tok::In(..) | Tok::Zeros(..) | Tok::Out(_) | Tok::OutShaped(_) | Tok::OutTyped(..) => {
                CallArg::Tensor(pool.pop().unwrap())
            }
            Tok::OutList => CallArg::TensorList(vec![pool.pop().unwrap(), pool.pop().unwrap()]),
            Tok::List(items) => {
                CallArg::TensorList(items.iter().map(|_| pool.pop().unwrap()).collect())
            }
            Tok::Int(i) => CallArg::Int(*i),
            Tok::Double(d) => CallArg::Double(*d),
            Tok::Bool(b) => CallArg::Bool(*b),
            Tok::None => CallArg::None,
            Tok::IntList(l) => CallArg::IntList(l),
            Tok::DoubleList(l) => CallArg::DoubleList(l),
            Tok::BoolList(l) => CallArg::BoolList(l),
            Tok::OutDtype => CallArg::Int(out as i64),
            Tok::InDtype => CallArg::Int(dtype as i64),
            Tok::Str(v) => CallArg::Str(v),
        });
    }
    let arena = Arena::new(scratch);
    let ctx = KernelContext::new(&arena);
    (dtypes, call_entry(entry, &ctx, &mut args))
}

/// The dtypes `entry` declares, among the tried ones.
fn declared(entry: &KernelEntry) -> Vec<ScalarType> {
    if entry.dtype() == DtypeKey::FALLBACK {
        let set: DtypeSet = entry.signature.dtypes;
        TRIED.into_iter().filter(|&d| set.contains(d)).collect()
    } else {
        entry
            .dtype()
            .dtype()
            .into_iter()
            .filter(|d| TRIED.contains(d))
            .collect()
    }
}

fn unsupported(e: &et_runtime::KernelError) -> bool {
    e.error == Error::InvalidType && e.message() == "unsupported dtype for this operator"
}

#[test]
fn no_kernel_refuses_a_declared_dtype_at_execute() {
    let verbose = std::env::var_os("ETCH_REGISTRY_VERBOSE").is_some();
    let debug = std::env::var("ETCH_REGISTRY_OP").ok();
    let mut scratch = vec![0u8; 1 << 20];
    let mut failures = Vec::new();
    let mut not_exercised = Vec::new();
    let (mut exercised, mut kernels_seen) = (0, 0);
    for entry in kernels()
        .iter()
        .filter(|e| e.signature.crate_name == "et-ops")
    {
        kernels_seen += 1;
        let declared = declared(entry);
        // Every combination of an input dtype and an out dtype the entry declares; a
        // successful call exercises the dtypes of all its tensors (index tensors, bool
        // masks and float scales included).
        let mut covered = DtypeSet::EMPTY;
        let mut first_err = std::collections::BTreeMap::new();
        let mut recipes: Vec<Option<&str>> = RECIPES
            .iter()
            .filter(|(name, _)| *name == entry.name())
            .map(|(_, recipe)| Some(*recipe))
            .collect();
        if recipes.is_empty() {
            recipes.push(None);
        }
        for &recipe in &recipes {
            for &input_dtype in &declared {
                for &out in &declared {
                    let mut refused = false;
                    for shape in OUT_SHAPES {
                        let (dtypes, result) =
                            attempt(entry, recipe, input_dtype, out, shape, &mut scratch);
                        let e = match result {
                            Ok(()) => {
                                covered.0 |= dtypes.0;
                                refused = false;
                                break;
                            }
                            Err(e) => e,
                        };
                        if debug.as_deref().is_some_and(|d| entry.name() == d) {
                            eprintln!(
                                "{} {} out {} {shape:?}: {e:?}",
                                entry.name(),
                                input_dtype.name(),
                                out.name()
                            );
                        }
                        // Refused: the call whose tensors all have one dtype (the call a
                        // dtype-keyed lookup or the fallback's declared set admits) fails
                        // with "unsupported" in every shape tried.
                        refused |= input_dtype == out && unsupported(&e);
                        first_err.entry(input_dtype).or_insert(e);
                    }
                    if refused {
                        failures.push(format!("{} {}", entry.name(), out.name()));
                    }
                }
            }
        }
        if verbose && declared.iter().any(|d| !covered.contains(*d)) {
            let names = |f: &dyn Fn(&ScalarType) -> bool| {
                declared
                    .iter()
                    .filter(|d| f(d))
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            eprintln!(
                "COVER {}: exercised [{}] not [{}]",
                entry.name(),
                names(&|d| covered.contains(*d)),
                names(&|d| !covered.contains(*d))
            );
        }
        let exempt = UNREACHABLE.iter().any(|(name, _)| *name == entry.name());
        for dtype in declared {
            if covered.contains(dtype) {
                exercised += 1;
            } else if !exempt {
                not_exercised.push(format!(
                    "{} {}: {:?}",
                    entry.name(),
                    dtype.name(),
                    first_err.get(&dtype)
                ));
            }
        }
    }
    if verbose {
        eprintln!(
            "not exercised ({}):\n{}",
            not_exercised.len(),
            not_exercised.join("\n")
        );
    }
    eprintln!("{kernels_seen} et-ops entries; {exercised} (kernel, dtype) pairs exercised");
    assert!(
        not_exercised.is_empty(),
        "{} declared (kernel, dtype) pairs no call exercised (add a recipe, or narrow the \
         kernel's `accepts`):\n{}",
        not_exercised.len(),
        not_exercised.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} (kernel, dtype) pairs declared but refused at execute:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What a kernel does not compute is missing from the registry, so `load_method` (and
/// `etch check`) refuse such calls with their kernel key before anything executes.
#[test]
fn undeclared_dtypes_resolve_to_no_kernel() {
    use et_runtime::registry::find_kernel;
    let has = |op: &str, d: ScalarType| {
        let (name, overload) = op.split_once('.').unwrap();
        find_kernel(name, overload, Some(d)).is_some()
    };
    for d in [
        ScalarType::Char,
        ScalarType::Byte,
        ScalarType::Int,
        ScalarType::Long,
    ] {
        assert!(has("aten::mm.out", d) && has("aten::addmm.out", d) && has("aten::bmm.out", d));
        assert!(has("aten::convolution.out", d));
    }
    assert!(has("aten::avg_pool2d.out", ScalarType::Long));
    assert!(!has("aten::avg_pool2d.out", ScalarType::Int));
    assert!(!has("aten::mm.out", ScalarType::Bool));
    assert!(!has("aten::add.out", ScalarType::BFloat16));
    assert!(!has("aten::_softmax.out", ScalarType::Long));
}
