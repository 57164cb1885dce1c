//! Float32 kernels registered by hand through the runtime's registry slice, for tests
//! of the runtime core that must not link the kernel library.

use et_runtime::__private::{
    linkme, ArgKind, DtypeKey, KernelEntry, KernelSignature, ReturnKind, KERNELS,
};
use et_runtime::{
    backend::KernelArgs, DtypeSet, KernelContext, KernelError, KernelResult, ScalarType,
};

/// The broadcast shape of `a` and `b` (rank <= 16), without touching the heap.
fn out_shape_broadcast(a: &[usize], b: &[usize]) -> Option<([usize; 16], usize)> {
    let n = a.len().max(b.len());
    let mut out = [0usize; 16];
    for (i, slot) in out.iter_mut().enumerate().take(n) {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        *slot = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some((out, n))
}

/// Elementwise f32 `op` where `b` is either the same shape or a single element.
fn binary_f32(args: &KernelArgs<'_>, out_pos: usize, op: impl Fn(f32, f32) -> f32) -> KernelResult {
    let a = args.tensor(0)?;
    let b = args.tensor(1)?;
    // SAFETY: each position is taken once.
    let out = unsafe { args.tensor_mut(out_pos)? };
    let (shape, rank) =
        out_shape_broadcast(a.sizes(), b.sizes()).ok_or(KernelError::invalid("shapes differ"))?;
    out.resize(&shape[..rank])?;
    let (x, y) = (a.data::<f32>()?, b.data::<f32>()?);
    let o = out.data_mut::<f32>()?;
    for (i, r) in o.iter_mut().enumerate() {
        let xa = if x.len() == 1 { x[0] } else { x[i] };
        let yb = if y.len() == 1 { y[0] } else { y[i] };
        *r = op(xa, yb);
    }
    Ok(())
}

fn add_out(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let alpha = args.scalar(2)?.to_f64() as f32;
    binary_f32(args, 3, |a, b| a + alpha * b)
}

fn mul_out(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    binary_f32(args, 2, |a, b| a * b)
}

/// `sum.IntList_out` over all dims (empty list) or the last dim with keepdim.
fn sum_out(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let a = args.tensor(0)?;
    let dims = args.int_list(1)?;
    // SAFETY: position 4 is taken once.
    let out = unsafe { args.tensor_mut(4)? };
    let x = a.data::<f32>()?;
    if dims.is_empty() {
        out.data_mut::<f32>()?[0] = x.iter().sum();
        return Ok(());
    }
    let rows = a.sizes()[0];
    let cols = a.numel() / rows.max(1);
    out.resize(&[rows, 1])?;
    let o = out.data_mut::<f32>()?;
    for r in 0..rows {
        o[r] = x[r * cols..(r + 1) * cols].iter().sum();
    }
    Ok(())
}

fn gt_scalar_out(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let a = args.tensor(0)?;
    let s = args.scalar(1)?.to_f64() as f32;
    // SAFETY: position 2 is taken once.
    let out = unsafe { args.tensor_mut(2)? };
    let x = a.data::<f32>()?;
    let o = out.data_mut::<et_runtime::Bool>()?;
    for (r, &v) in o.iter_mut().zip(x) {
        *r = (v > s).into();
    }
    Ok(())
}

macro_rules! register {
    ($id:ident, $name:literal, $f:path, [$($k:ident),*]) => {
        #[linkme::distributed_slice(KERNELS)]
        #[linkme(crate = linkme)]
        static $id: KernelEntry = et_runtime::kernel_entry!(
            $name,
            DtypeKey::FALLBACK,
            $f,
            &KernelSignature {
                args: &[$(ArgKind::$k),*],
                returns: ReturnKind::Outs,
                crate_name: et_runtime::__private::CrateName(&"etch-tests"),
                dtypes: DtypeSet(ScalarType::Float.bit() | ScalarType::Bool.bit()),
            },
        );
    };
}

register!(
    ADD,
    "aten::add.out",
    add_out,
    [Tensor, Tensor, Scalar, TensorMut]
);
register!(MUL, "aten::mul.out", mul_out, [Tensor, Tensor, TensorMut]);
register!(
    SUM,
    "aten::sum.IntList_out",
    sum_out,
    [Tensor, OptionalIntList, Bool, OptionalScalarType, TensorMut]
);
register!(
    GT,
    "aten::gt.Scalar_out",
    gt_scalar_out,
    [Tensor, Scalar, TensorMut]
);
