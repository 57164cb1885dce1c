//! Out arguments: lending a call's out tensors as `&mut` only after proving that nothing
//! else in the call reaches them or their data, per call or once at load.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use super::args::wrong_kind;
use super::{ArgKind, KernelArgs};
use crate::error::{KernelError, KernelResult};
use crate::tensor::Tensor;
use crate::value::{Value, NONE_INDEX};

impl<'a> KernelArgs<'a> {
    /// Whether every out parameter (per `kinds`) is exclusive: the check `tensor_mut`
    /// would make, done once at load for calls whose aliasing cannot change.
    #[inline]
    pub(crate) fn outs_are_exclusive(&self, kinds: &[ArgKind]) -> bool {
        for (i, &kind) in kinds.iter().enumerate() {
            let exclusive = if kind == ArgKind::TensorMut {
                match self.entry(i) {
                    Ok(&Value::Tensor(t)) => self.is_exclusive(i, unsafe_ref(t)),
                    _ => false,
                }
            } else {
                kind != ArgKind::TensorListMut || self.out_list_exclusive(i).is_ok()
            };
            if !exclusive {
                return false;
            }
        }
        true
    }

    /// An out (or in-place) tensor argument.
    ///
    /// Fails if the tensor, or memory overlapping its data, is also passed at another
    /// parameter position, so the `&mut` never aliases another argument.
    ///
    /// # Safety
    /// The caller must not obtain position `i` again (shared or mutable) while the result
    /// lives. Generated wrappers take each position exactly once.
    pub unsafe fn tensor_mut(&self, i: usize) -> KernelResult<&'a mut Tensor> {
        let t = match *self.entry(i)? {
            Value::Tensor(t) => t,
            _ => return Err(wrong_kind()),
        };
        if !self.prechecked() {
            self.check_exclusive(i, t.as_ptr())?;
        }
        // SAFETY: no other parameter position refers to this tensor or overlaps its data
        // (checked above, or at load for a call whose aliasing cannot change), and the
        // caller does not take position `i` twice.
        Ok(unsafe { &mut *t.as_ptr() })
    }

    /// Out tensor `i` and source tensor `j` of a call whose only tensor parameters they
    /// are (as a prim op's signature fixes them: `et_copy_index` takes an out, a source
    /// and an int): [`tensor_mut`](Self::tensor_mut)'s check against that one other
    /// tensor, without the scan over every parameter and its tensor-list cases, which a
    /// binary with no kernels would otherwise carry for this op alone.
    ///
    /// # Safety
    /// As for [`tensor_mut`](Self::tensor_mut); and no parameter but `i` and `j` may be a
    /// tensor or a tensor list (the op's signature, checked at load, guarantees it).
    pub(crate) unsafe fn tensor_mut_and_source(
        &self,
        i: usize,
        j: usize,
    ) -> KernelResult<(&'a mut Tensor, &'a Tensor)> {
        let (Value::Tensor(t), Value::Tensor(u)) = (*self.entry(i)?, *self.entry(j)?) else {
            return Err(wrong_kind());
        };
        let target = unsafe_ref(t);
        if i == j || clashes(target, data_span(target), unsafe_ref(u)) {
            return Err(aliased());
        }
        // SAFETY: `u` is not the tensor `t` and shares no data byte with it (checked), no
        // other parameter is a tensor (the caller's promise), and the caller does not take
        // position `i` again.
        Ok((unsafe { &mut *t.as_ptr() }, unsafe_ref(u)))
    }

    /// An out tensor whose data the caller will not touch (only its shape and data
    /// pointer), so only tensor identity is checked, not data overlap: view ops alias
    /// their input's memory by design.
    ///
    /// # Safety
    /// As for [`tensor_mut`](Self::tensor_mut); additionally the caller must not read or
    /// write the tensor's data through the result.
    pub(crate) unsafe fn tensor_mut_for_view(&self, i: usize) -> KernelResult<&'a mut Tensor> {
        let t = match *self.entry(i)? {
            Value::Tensor(t) => t,
            _ => return Err(wrong_kind()),
        };
        for j in 0..self.params.min(self.len) {
            if j != i && matches!(*self.entry(j)?, Value::Tensor(u) if u == t) {
                return Err(KernelError::invalid("a view's output is also its input"));
            }
        }
        // SAFETY: no other parameter position refers to this tensor struct (checked), the
        // caller takes position `i` once and does not touch the data through it.
        Ok(unsafe { &mut *t.as_ptr() })
    }

    /// Out tensors passed as a list (`Tensor(a!)[] out`).
    ///
    /// # Safety
    /// As for [`tensor_mut`](Self::tensor_mut).
    pub unsafe fn tensor_list_mut(&self, i: usize) -> KernelResult<TensorListMut<'a>> {
        let items = if self.prechecked() {
            self.tensor_list(i)?
        } else {
            self.out_list_exclusive(i)?
        };
        Ok(TensorListMut {
            items: items.as_ptr() as *const *mut Tensor,
            len: items.len(),
            _m: PhantomData,
        })
    }

    /// The out list at position `i`, once each of its tensors is shown exclusive (no other
    /// position reaches it or its data) and distinct from the list's other items.
    fn out_list_exclusive(&self, i: usize) -> KernelResult<&'a [&'a Tensor]> {
        let items = self.tensor_list(i)?;
        for (k, &t) in items.iter().enumerate() {
            self.check_exclusive(i, t as *const Tensor as *mut Tensor)?;
            let data = data_span(t);
            if items[..k].iter().any(|&u| clashes(t, data, u)) {
                return Err(KernelError::invalid(
                    "an out tensor appears twice in an out list",
                ));
            }
        }
        Ok(items)
    }

    /// Checks that tensor `t`, passed at position `i`, is not reachable from any other
    /// parameter position and does not share data with one.
    fn check_exclusive(&self, i: usize, t: *mut Tensor) -> KernelResult<()> {
        // SAFETY: `t` points at a live tensor of the method; reading its metadata is fine.
        if self.is_exclusive(i, unsafe { &*t }) {
            Ok(())
        } else {
            Err(aliased())
        }
    }

    /// [`check_exclusive`](Self::check_exclusive)'s test, which the load-time proof
    /// ([`outs_are_exclusive`](Self::outs_are_exclusive)) shares. Tensors are compared in
    /// place, the arguments read without a bounds check per position.
    // Inline outside size-first builds: `load_method` proves every call with it (out of
    // line it was a call, a full register save and a reload of the arguments per out).
    #[cfg_attr(not(etch_size_first), inline(always))]
    fn is_exclusive(&self, i: usize, target: &Tensor) -> bool {
        let data = data_span(target);
        let n = self.params.min(self.len);
        for j in 0..n {
            if j == i {
                continue;
            }
            // SAFETY: `j < params.min(len)`.
            let clash = match unsafe { self.entry_unchecked(j) } {
                Value::Tensor(u) => clashes(target, data, unsafe_ref(u)),
                Value::TensorList(l) | Value::OptionalTensorList(l) => {
                    // SAFETY: list headers live in method memory for 'a.
                    let l = unsafe { l.as_ref() };
                    (0..l.len).any(|k| {
                        // SAFETY: `indices` holds `len` range-checked entries.
                        let idx = unsafe { *l.indices.as_ptr().add(k) };
                        idx != NONE_INDEX
                            && matches!(self.value_at_index(idx),
                                Value::Tensor(u) if clashes(target, data, unsafe_ref(u)))
                    })
                }
                _ => false,
            };
            if clash {
                return false;
            }
        }
        true
    }
}

/// The error of an out tensor that another argument reaches.
fn aliased() -> KernelError {
    KernelError::invalid("an out tensor aliases another argument of the same call")
}

fn unsafe_ref<'x>(t: NonNull<Tensor>) -> &'x Tensor {
    // SAFETY: used only for metadata reads of live method tensors inside alias checks.
    unsafe { t.as_ref() }
}

/// A tensor's data bytes, `start..end`; empty (`start..start`) when it has none, so that
/// an unbound tensor only clashes by identity. A pair rather than an `Option`: the overlap
/// test then needs no test of which case it is.
#[inline(always)]
fn data_span(t: &Tensor) -> (usize, usize) {
    let (start, end) = t.byte_range();
    (start, if t.data_ptr().is_null() { start } else { end })
}

/// Whether `u` is the tensor `t` (whose data is `data`, from [`data_span`]) or shares a
/// data byte with it: one out-of-line copy for every alias check.
#[cfg_attr(not(etch_size_first), inline(always))]
fn clashes(t: &Tensor, data: (usize, usize), u: &Tensor) -> bool {
    // Two spans share a byte when the later start is before the earlier end, which an
    // empty span (or one whose end wrapped around) never satisfies.
    let (t0, t1) = data;
    let (u0, u1) = data_span(u);
    core::ptr::eq(t, u) || t0.max(u0) < t1.min(u1)
}

/// Out tensors passed as one list; each is lent out mutably in turn.
pub struct TensorListMut<'a> {
    items: *const *mut Tensor,
    len: usize,
    _m: PhantomData<&'a mut Tensor>,
}

impl<'a> TensorListMut<'a> {
    /// Number of out tensors.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Out tensor `i`, or `None` past the end.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Tensor> {
        if i >= self.len {
            return None;
        }
        // SAFETY: `i < len`; the items are distinct, non-overlapping tensors no other
        // argument refers to (checked when the list was unboxed), and `&mut self` lends
        // out one at a time.
        Some(unsafe { &mut **self.items.add(i) })
    }

    /// Out tensor `i`, shared.
    pub fn get(&self, i: usize) -> Option<&Tensor> {
        if i >= self.len {
            return None;
        }
        // SAFETY: as in `get_mut`, shared.
        Some(unsafe { &**self.items.add(i) })
    }
}

impl fmt::Debug for TensorListMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorListMut")
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests;
