//! The quantize and dequantize drivers, written once for every dtype pair.
//!
//! The arithmetic is the same whatever the element types: only loading and storing
//! differ. So a driver picks one loader for the input's dtype and one storer for the
//! out's (each a small function instantiated per dtype, behind `et_switch!` so a
//! selective build keeps only its dtypes) and runs one non-generic loop over chunks of
//! `CHUNK` elements staged on the stack. That is 8 small instantiations per driver
//! instead of 15 copies of the loop, for a loop that is not the bottleneck of any program.

use et_runtime::{et_switch, f16, DtypeSelection, KernelError, KernelResult, Tensor};

use super::{dequantize_val, inv_scale, quantize_val, Params};
use crate::util::element::Num;

/// Elements staged per chunk (2 KiB of stack for the two buffers).
pub(crate) const CHUNK: usize = 128;

/// Reads `dst.len()` elements from memory offset `start` as f64 (floats, exact).
pub(crate) type LoadF = fn(&Tensor, usize, &mut [f64]) -> KernelResult;
/// Reads `dst.len()` elements from memory offset `start` as i64 (integers, exact).
pub(crate) type LoadI = fn(&Tensor, usize, &mut [i64]) -> KernelResult;
/// Writes `src` from memory offset `start`, rounding to the element type.
pub(crate) type StoreF = fn(&mut Tensor, usize, &[f64]) -> KernelResult;
/// Writes `src` from memory offset `start`, wrapping to the element type (callers have
/// clamped to its range).
pub(crate) type StoreI = fn(&mut Tensor, usize, &[i64]) -> KernelResult;

const SHORT: KernelError = KernelError::invalid("tensor data shorter than its shape");

pub(crate) fn load_f<T: Num>(t: &Tensor, start: usize, dst: &mut [f64]) -> KernelResult {
    let src = t.data::<T>()?.get(start..start + dst.len()).ok_or(SHORT)?;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_f64();
    }
    Ok(())
}

pub(crate) fn load_i<T: Num>(t: &Tensor, start: usize, dst: &mut [i64]) -> KernelResult {
    let src = t.data::<T>()?.get(start..start + dst.len()).ok_or(SHORT)?;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_i64();
    }
    Ok(())
}

pub(crate) fn store_f<T: Num>(t: &mut Tensor, start: usize, src: &[f64]) -> KernelResult {
    let dst = t
        .data_mut::<T>()?
        .get_mut(start..start + src.len())
        .ok_or(SHORT)?;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = T::from_f64(s);
    }
    Ok(())
}

pub(crate) fn store_i<T: Num>(t: &mut Tensor, start: usize, src: &[i64]) -> KernelResult {
    let dst = t
        .data_mut::<T>()?
        .get_mut(start..start + src.len())
        .ok_or(SHORT)?;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = T::from_i64(s);
    }
    Ok(())
}

/// Quantizes every element of `input` into `out` (same sizes and dim order) with the
/// scale and zero point `params` gives each memory offset. Input float16/32/64, out
/// uint8, int8, uint16, int16 or int32.
pub(crate) fn quantize_with<Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
    qmin: i64,
    qmax: i64,
    params: &Params<'_>,
) -> KernelResult {
    let load: LoadF =
        et_switch!(Sel, input.dtype(), [f16, f32, f64], F => Ok(load_f::<F> as LoadF))?;
    let store: StoreI =
        et_switch!(Sel, out.dtype(), [u8, i8, u16, i16, i32], Q => Ok(store_i::<Q> as StoreI))?;
    let n = input.numel();
    let (mut xs, mut qs) = ([0.0f64; CHUNK], [0i64; CHUNK]);
    // The reciprocal is recomputed only when the channel changes.
    let mut last = usize::MAX;
    let (mut inv, mut zp) = (0.0f32, 0i32);
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        load(input, start, &mut xs[..len])?;
        for (k, (q, &x)) in qs[..len].iter_mut().zip(&xs[..len]).enumerate() {
            let c = params.channel(start + k);
            if c != last {
                last = c;
                inv = inv_scale(params.scale(c));
                zp = params.zero_point(c);
            }
            *q = quantize_val(inv, zp, x, qmin, qmax);
        }
        store(out, start, &qs[..len])?;
    }
    Ok(())
}

/// Dequantizes every element of `input` into `out` (same sizes and dim order) with the
/// scale and zero point `params` gives each memory offset. `wide` multiplies in float64
/// instead (ExecuTorch's per-channel kernel does for 1-d float64 outs). Input uint8,
/// int8, uint16, int16 or int32; out float16/32/64.
pub(crate) fn dequantize_with<Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
    wide: bool,
    params: &Params<'_>,
) -> KernelResult {
    let load: LoadI =
        et_switch!(Sel, input.dtype(), [u8, i8, u16, i16, i32], Q => Ok(load_i::<Q> as LoadI))?;
    let store: StoreF =
        et_switch!(Sel, out.dtype(), [f16, f32, f64], O => Ok(store_f::<O> as StoreF))?;
    let n = input.numel();
    let (mut qs, mut xs) = ([0i64; CHUNK], [0.0f64; CHUNK]);
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        load(input, start, &mut qs[..len])?;
        for (k, (x, &q)) in xs[..len].iter_mut().zip(&qs[..len]).enumerate() {
            let c = params.channel(start + k);
            let (scale, zp) = (params.scale(c) as f32, params.zero_point(c));
            *x = if wide {
                (q as i32).wrapping_sub(zp) as f64 * scale as f64
            } else {
                dequantize_val(q, zp, scale) as f64
            };
        }
        store(out, start, &xs[..len])?;
    }
    Ok(())
}
