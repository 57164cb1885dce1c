//! Running sum along a dim.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
    MAX_DIM,
};

use crate::util::convert::{loader, storer, Loader, Storer, Val};
use crate::util::layout::{istrides, normalize_dim, Walk};
use crate::util::reduction::store_at;

/// `out = self.cumsum(dim, dtype=dtype)`: the input is cast to `out`'s dtype (which
/// must be `dtype` when given), then summed in PyTorch's CPU accumulation type (double
/// for float32/float64, float for float16, int64 wrapping for integers), each prefix
/// rounded once into `out`.
#[kernel("aten::cumsum.out", accepts = [all])]
pub fn cumsum_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if dtype.is_some_and(|d| d != out.dtype()) {
        return Err(KernelError::invalid(
            "out dtype must match the dtype argument",
        ));
    }
    if out.dtype() == ScalarType::Bool {
        // PyTorch has no bool running sum either; bool inputs sum into integer outs.
        return Err(KernelError::invalid("cumsum cannot write a bool out"));
    }
    let d = normalize_dim(dim, input.dim())?;
    out.resize(input.sizes())?;
    // One dtype-erased loop: per-dtype code is only the element loader and storer.
    let from = et_switch!(Sel, input.dtype(), @all, T => Ok(loader::<T>()))?;
    let (to, back) = et_switch!(Sel, out.dtype(), @reals, T => Ok((storer::<T>(), loader::<T>())))?;
    let acc = match out.dtype() {
        ScalarType::Half | ScalarType::BFloat16 => Acc::F32,
        ScalarType::Float | ScalarType::Double => Acc::F64,
        _ => Acc::Int,
    };
    scan(input, d, [from, back], to, acc, out)
}

/// What the running sum accumulates in, by out dtype (as PyTorch): f32 for the half
/// types, f64 for f32 and f64, wrapping i64 for the integers (truncated at each store,
/// which gives the out type's own wrap-around).
#[derive(Clone, Copy, PartialEq)]
enum Acc {
    F32,
    F64,
    Int,
}

fn scan(
    input: &Tensor,
    d: usize,
    [from, back]: [Loader; 2],
    to: Storer,
    mode: Acc,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let (is, os) = (istrides(input)?, istrides(out)?);
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let (len, in_step, out_step) = if n == 0 {
        (1, 0, 0)
    } else {
        (sizes[d], is[d], os[d])
    };
    if n > 0 {
        sizes[d] = 1;
    }
    let lines = Walk::new(&sizes[..n], [&os[..n], &is[..n]])?;
    if len == 0 || lines.numel() == 0 {
        return Ok(());
    }
    let same = input.dtype() == out.dtype();
    let src = input.bytes()?;
    let width = from.size;
    // Each element is first converted to the out dtype (as PyTorch's `to(dtype)` before
    // the scan): a store and a load through a one-element buffer.
    let read = |i: usize| -> Val {
        let v = (from.load)(&src[i * width..(i + 1) * width]);
        if same {
            return v;
        }
        let mut tmp = [0u8; 8];
        (to.store)(&mut tmp, v);
        (back.load)(&tmp)
    };
    let numel = out.numel();
    Walk::new(input.sizes(), [&os[..n], &is[..n]])?.check([0, 0], [numel, input.numel()])?;
    let dst = out.bytes_mut()?;
    lines.for_each([0, 0], [numel, input.numel()], |[o, s]| {
        let (o, s) = (o as isize, s as isize);
        let (mut f, mut i) = (0f64, 0i64);
        let mut f32acc = 0f32;
        for k in 0..len as isize {
            let v = read((s + k * in_step) as usize);
            let sum = match (mode, v) {
                (Acc::Int, Val::Int(x)) => {
                    i = i.wrapping_add(x);
                    Val::Int(i)
                }
                (Acc::F32, v) => {
                    f32acc += val_f64(v) as f32;
                    Val::Float(f64::from(f32acc))
                }
                (_, v) => {
                    f += val_f64(v);
                    Val::Float(f)
                }
            };
            store_at(dst, &to, (o + k * out_step) as usize, sum);
        }
    })
}

/// A loaded value as f64.
fn val_f64(v: Val) -> f64 {
    match v {
        Val::Int(i) => i as f64,
        Val::Float(f) => f,
    }
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, Bool, TensorBuf};

    #[test]
    fn running_sums() {
        let mut scratch = std::vec![0u8; 1 << 10];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &x, 1, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 3., 6., 4., 9., 15.]);
        cumsum_out::<AllDtypes>(&ctx, &x, 0, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3., 5., 7., 9.]);
        // int32 -> int64 (PyTorch's default for integer inputs), and wrap-around.
        let i = TensorBuf::from_slice(&[3], &[i32::MAX, 1, -5]).unwrap();
        let mut l = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &i, 0, None, &mut l).unwrap();
        assert_eq!(
            l.data::<i64>().unwrap(),
            &[i32::MAX as i64, i32::MAX as i64 + 1, i32::MAX as i64 - 4]
        );
        let mut w = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &i, 0, Some(ScalarType::Int), &mut w).unwrap();
        // The int64 accumulator comes back into range after the overflow.
        assert_eq!(
            w.data::<i32>().unwrap(),
            &[i32::MAX, i32::MIN, i32::MAX - 4]
        );
        let b = TensorBuf::from_slice(&[3], &[Bool(1), Bool(0), Bool(1)]).unwrap();
        cumsum_out::<AllDtypes>(&ctx, &b, -1, None, &mut l).unwrap();
        assert_eq!(l.data::<i64>().unwrap(), &[1, 1, 2]);
        assert!(cumsum_out::<AllDtypes>(&ctx, &x, 2, None, &mut o).is_err());
    }
}
