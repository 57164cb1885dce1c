//! The prim ops on tensors: `et_view`, `et_copy_index`, and the element reading of
//! `_local_scalar_dense` (which the scalar interpreter runs).

use super::{prim, signatures};
use core::mem::MaybeUninit;

use crate::error::{Error, KernelError, KernelResult};
use crate::kernel::{KernelArgs, KernelContext};
use crate::scalar::Scalar;
use crate::tensor::Tensor;
use crate::tensor::MAX_DIM;
use et_schema::scalar_type::ScalarType;

signatures! {
    VIEW: [Tensor, IntList, TensorMut] -> Outs;
    COPY_INDEX: [TensorMut, Tensor, Int] -> Outs;
}

/// `_local_scalar_dense(self)`: the one element of tensor `t` as a scalar (run by the
/// scalar interpreter, which unboxes `t` and boxes the result).
#[inline(always)]
pub(super) fn local_scalar(t: &Tensor) -> KernelResult<Scalar> {
    if t.numel() != 1 {
        return Err(KernelError::invalid(
            "_local_scalar_dense needs a one-element tensor",
        ));
    }
    // The element's bytes, little-endian, widened to 8 bytes (element sizes are 1..=8):
    // folded from the last byte down, rather than copied into a zeroed array.
    let raw = t
        .bytes()?
        .iter()
        .rev()
        .fold(0u64, |v, &b| v << 8 | u64::from(b));
    let dtype = t.dtype();
    // Signed integers: the element's sign bit extended over the upper bytes (one shift
    // pair for every width, rather than an arm per type).
    // Byte (0) is zero-extended; Char, Short, Int and Long (1..=4) sign-extended.
    let code = dtype as u8;
    let unused_bits = if code == 0 {
        0
    } else {
        64 - 8 * dtype.element_size() as u32
    };
    // Ranges of the dtype code rather than an arm per dtype (a `match` compiles to a
    // jump table of 8-byte words in a non-PIE build). ExecuTorch's numbering fixes the
    // codes; checked here all the same.
    const _: () = assert!(
        ScalarType::Byte as u8 == 0
            && ScalarType::Char as u8 == 1
            && ScalarType::Short as u8 == 2
            && ScalarType::Int as u8 == 3
            && ScalarType::Long as u8 == 4
    );
    Ok(if dtype == ScalarType::Bool {
        Scalar::Bool(raw != 0)
    } else if code <= ScalarType::Long as u8 {
        Scalar::Int(((raw << unused_bits) as i64) >> unused_bits)
    } else if dtype == ScalarType::Half {
        Scalar::Double(f16_to_f64(raw as u16))
    } else if dtype == ScalarType::Float {
        Scalar::Double(f32::from_bits(raw as u32) as f64)
    } else if dtype == ScalarType::Double {
        Scalar::Double(f64::from_bits(raw))
    } else {
        return Err(KernelError::unsupported(
            "_local_scalar_dense: unsupported dtype",
        ));
    })
}

/// The value of the IEEE half-precision number with bits `h`, exactly (NaN stays NaN).
///
/// A shift and one multiplication rather than `half::f16::to_f64`'s case analysis (half
/// the code): the half's exponent and mantissa bits, moved to the top of a double's
/// mantissa and the bottom of its exponent, read as the same number scaled by
/// 2^(15 - 1023), subnormals included; infinities and NaNs get the all-ones exponent.
/// The sign bit goes straight to the double's (the scaling keeps it), rather than
/// negating the result (which needs a sign-mask constant).
pub(super) fn f16_to_f64(h: u16) -> f64 {
    const SCALE: f64 = f64::from_bits((1023 + 1023 - 15) << 52); // 2^(1023 - 15)
    let h = u64::from(h);
    let bits = (h & 0x8000) << 48 | (h & 0x7fff) << 42;
    if h & 0x7c00 == 0x7c00 {
        f64::from_bits(bits | 0x7ff << 52)
    } else {
        f64::from_bits(bits) * SCALE
    }
}

/// `et_view(self, size, out)`: `out` becomes a view of `self`'s data with new sizes
/// (one may be -1 and is inferred).
fn et_view(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let src = args.tensor(0)?;
    let size = args.int_list(1)?;
    // SAFETY: position 2 is taken once and only its shape and data pointer are changed;
    // the planner may place a view's output on its input's memory, which is the point.
    let out = unsafe { args.tensor_mut_for_view(2)? };
    if size.len() != out.dim() || size.len() > MAX_DIM {
        return Err(KernelError::invalid(
            "et_view: size list does not match the output rank",
        ));
    }
    if src.dtype() != out.dtype() {
        return Err(KernelError::invalid("et_view: dtype mismatch"));
    }
    let numel = src.numel();
    // Left uninitialized: every slot below `size.len()` (at most `MAX_DIM`, checked
    // above) is written before the slice of them is formed, so nothing zeroes the rest.
    let mut sizes = [const { MaybeUninit::<usize>::uninit() }; MAX_DIM];
    let mut infer = None;
    let mut known = 1usize;
    for (&s, slot) in size.iter().zip(sizes.iter_mut()) {
        if s == -1 {
            // Written below once inferred (or the view fails).
            if infer.replace(slot).is_some() {
                return Err(KernelError::invalid(
                    "et_view: more than one -1 in the size",
                ));
            }
            continue;
        }
        let s = usize::try_from(s).map_err(|_| KernelError::invalid("et_view: negative size"))?;
        slot.write(s);
        known = known
            .checked_mul(s)
            .ok_or(KernelError::invalid("et_view: size overflows"))?;
    }
    // `known` is the product of the given sizes: with an inferred one it becomes `numel`
    // exactly, without one it must already be.
    match infer {
        Some(slot) => {
            if known == 0 || numel % known != 0 {
                return Err(KernelError::invalid(
                    "et_view: cannot infer the -1 dimension",
                ));
            }
            slot.write(numel / known);
        }
        None if known != numel => {
            return Err(KernelError::invalid("et_view: element count differs"));
        }
        None => {}
    }
    let sizes = sizes.get(..size.len()).unwrap_or_default();
    // SAFETY: every slot of `sizes` (the first `size.len()`) was written: the loop wrote
    // each given size, and the one -1 slot was written above (the other arms return).
    // `MaybeUninit<usize>` has `usize`'s layout.
    let sizes = unsafe { &*(sizes as *const [MaybeUninit<usize>] as *const [usize]) };
    if numel > out.numel_bound() {
        return Err(KernelError::invalid(
            "et_view: view is larger than the output's bound",
        ));
    }
    out.resize(sizes)?;
    // SAFETY: `src`'s data is valid for its `numel` elements (== out's new numel) for the
    // method's lifetime; a read-only source stays read-only through the view.
    unsafe { out.set_data(src.data_ptr() as *mut u8, src.is_read_only()) };
    Ok(())
}
prim!(ET_VIEW, executorch_prim::"et_view.default", &VIEW, et_view);

/// `et_copy_index(copy_to, copy_from, index)`: writes `copy_from` into row `index` of
/// `copy_to`, growing its first dimension (within its bound) when needed.
fn et_copy_index(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    // SAFETY: position 0 is taken once; the signature (`COPY_INDEX`, checked at load)
    // makes position 1 the only other tensor.
    let (to, from) = unsafe { args.tensor_mut_and_source(0, 1)? };
    let index = usize::try_from(args.int(2)?)
        .map_err(|_| KernelError::invalid("et_copy_index: negative index"))?;
    let (rows, row_shape) = match to.sizes().split_first() {
        Some((&rows, rest)) if to.dtype() == from.dtype() && rest.len() == from.dim() => {
            (rows, rest)
        }
        _ => {
            return Err(KernelError::invalid(
                "et_copy_index: shapes or dtypes do not fit",
            ))
        }
    };
    // Element by element: slice `!=` is an out-of-line comparison that calls libc's
    // `bcmp`, which the smallest binaries do not otherwise link.
    if !row_shape.iter().eq(from.sizes()) {
        return Err(KernelError::invalid("et_copy_index: row shape differs"));
    }
    let overflow = KernelError::invalid("et_copy_index: index overflows");
    if rows <= index {
        let rows = index.checked_add(1).ok_or(overflow)?;
        // The new shape: `rows`, then the row shape (which is `from`'s). Built element by
        // element: zeroing an array and copying into it took more code.
        let sizes: [usize; MAX_DIM] = core::array::from_fn(|d| match d.checked_sub(1) {
            None => rows,
            Some(r) => from.sizes().get(r).copied().unwrap_or(0),
        });
        to.resize(sizes.get(..to.dim()).unwrap_or_default())?;
    }
    let src = from.bytes()?;
    let dst = to.bytes_mut()?;
    let start = index.checked_mul(src.len()).ok_or(overflow)?;
    let end = start.checked_add(src.len()).ok_or(overflow)?;
    dst.get_mut(start..end)
        .ok_or(KernelError::new(
            Error::InvalidArgument,
            "et_copy_index: index out of range",
        ))?
        .copy_from_slice(src);
    Ok(())
}
prim!(
    ET_COPY_INDEX,
    executorch_prim::"et_copy_index.tensor",
    &COPY_INDEX,
    et_copy_index
);
