//! Dtype-erased element access and accumulation (`dst[i] += src[j]`) for kernels whose
//! loops do not need the element type: the scatter-adds (`scatter_add`, `index_put` with
//! `accumulate`, the max-pool gradient), and the kernels that only read values
//! (`nonzero`, `prod`, `max.dim`/`min.dim`, `convolution_backward`). The dtype lives only
//! in a loader and a storer picked once per call, so each kernel is one non-generic loop
//! instead of one copy per dtype: these operators are rare in models, and binary size
//! matters more for them than per-element speed.

use et_runtime::{et_switch, DtypeSelection, KernelResult, ScalarType};

use super::convert::{loader, storer, Loader, Storer, Val};

/// Reads and writes elements of one dtype as [`Val`]s.
#[derive(Clone, Copy, Debug)]
pub struct Accumulator {
    load: Loader,
    store: Storer,
}

impl Accumulator {
    /// The accumulator for `dtype` (only selected dtypes exist).
    pub fn new<Sel: DtypeSelection>(dtype: ScalarType) -> KernelResult<Accumulator> {
        et_switch!(Sel, dtype, @all, T => Ok(Accumulator {
            load: loader::<T>(),
            store: storer::<T>(),
        }))
    }

    /// The element width in bytes.
    pub fn width(&self) -> usize {
        self.store.size
    }

    /// Element `i` of `bytes` (zero past the end).
    #[inline]
    pub fn get(&self, bytes: &[u8], i: usize) -> Val {
        let w = self.width();
        match bytes.get(i * w..(i + 1) * w) {
            Some(b) => (self.load.load)(b),
            None => Val::Int(0),
        }
    }

    /// Element `i` of `bytes` as f64 (0 past the end).
    #[inline]
    pub fn get_f64(&self, bytes: &[u8], i: usize) -> f64 {
        match self.get(bytes, i) {
            Val::Int(v) => v as f64,
            Val::Float(v) => v,
        }
    }

    /// Writes `v` as element `i` of `bytes` (C++ cast rules); false past the end.
    #[inline]
    pub fn set(&self, bytes: &mut [u8], i: usize, v: Val) -> bool {
        let w = self.width();
        match bytes.get_mut(i * w..(i + 1) * w) {
            Some(b) => {
                (self.store.store)(b, v);
                true
            }
            None => false,
        }
    }

    /// `dst[d] += src[s]`: integers wrap (a bool sum of two trues stays true), floats add
    /// in f64 and round once at the store, which for two operands of one float type is
    /// the type's own addition. Returns false for an offset out of bounds.
    #[inline]
    pub fn add(&self, dst: &mut [u8], d: usize, src: &[u8], s: usize) -> bool {
        let w = self.width();
        let Some(from) = src.get(s * w..(s + 1) * w) else {
            return false;
        };
        let b = (self.load.load)(from);
        let Some(to) = dst.get_mut(d * w..(d + 1) * w) else {
            return false;
        };
        let sum = match ((self.load.load)(to), b) {
            (Val::Int(x), Val::Int(y)) => Val::Int(x.wrapping_add(y)),
            (Val::Float(x), Val::Float(y)) => Val::Float(x + y),
            // One dtype loads one variant; mixed variants cannot occur.
            (x, _) => x,
        };
        (self.store.store)(to, sum);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::AllDtypes;

    #[test]
    fn adds_in_place() {
        let acc = Accumulator::new::<AllDtypes>(ScalarType::Char).unwrap();
        let mut dst = [127u8, 1];
        let src = [1u8, 0xff];
        assert!(acc.add(&mut dst, 0, &src, 0));
        assert!(acc.add(&mut dst, 1, &src, 1));
        assert_eq!(dst, [0x80, 0]);
        assert!(!acc.add(&mut dst, 2, &src, 0));
        let f = Accumulator::new::<AllDtypes>(ScalarType::Float).unwrap();
        let mut d = 1.5f32.to_ne_bytes();
        f.add(&mut d, 0, &2.25f32.to_ne_bytes(), 0);
        assert_eq!(f32::from_ne_bytes(d), 3.75);
    }
}
