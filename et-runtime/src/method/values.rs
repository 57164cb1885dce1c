//! The value table: each of the program's `EValue`s built in method memory, plus the
//! value-index lists that refer to it (list items, inputs, outputs).
//!
//! Checked here: every value is of a kind the runtime knows, strings are UTF-8, and every
//! value index names a value (`indices`). Tensor values are checked in `tensors`; a call's
//! arguments, in `instructions`.

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use super::build::{Builder, Plan};
use crate::error::Error;
use crate::method_error::{note, LoadDetail};
use crate::program::{tag, Table, Vector};
use crate::value::{BoxedList, Value, NONE_INDEX};
use et_schema::fields as fb;

/// `index` as a `u32` if it names one of `n` entries (`n` a count of things in memory,
/// at most `isize::MAX`).
pub(super) fn in_range(index: i64, n: usize) -> Option<u32> {
    // One comparison: a negative index, as a `u64`, is at least 2^63, above any such `n`.
    if (index as u64) < n as u64 {
        Some(index as u32)
    } else {
        None
    }
}

// Int, Bool and Double keep their value at the same field offset (`build_value`).
const _: () = {
    assert!(fb::Int::VT_INT_VAL == fb::Bool::VT_BOOL_VAL);
    assert!(fb::Int::VT_INT_VAL == fb::Double::VT_DOUBLE_VAL);
};

impl<'a> Builder<'a, '_> {
    pub(super) fn build_values(&mut self) -> Result<(), Error> {
        let list = self
            .meta
            .list(Plan::VT_VALUES)
            .ok_or(Error::InvalidProgram)?;
        let n = list.len();
        if n >= u32::MAX as usize {
            return Err(Error::InvalidProgram);
        }
        let values = self.arena.alloc_array::<Value>(n)?;
        for index in 0..n {
            // SAFETY: `index < n`, the array's length; the slot is used by nothing else.
            let slot = unsafe { &mut *values.as_ptr().add(index).cast::<MaybeUninit<Value>>() };
            if let Err(e) = self.build_value_into(list.table(index), n, slot) {
                return Err(note(self.detail, e, LoadDetail::Value { index }));
            }
        }
        self.values = values;
        self.num_values = n;
        Ok(())
    }

    /// Builds value `ev` into `slot`. Out of line, with only an error code to return:
    /// inlined in the loop, its state crowded the loop's registers (spilled and reloaded
    /// around every value), and a returned `Value` would come back through memory.
    #[inline(never)]
    fn build_value_into(
        &self,
        ev: Option<Table<'a>>,
        n: usize,
        slot: &mut MaybeUninit<Value>,
    ) -> Result<(), Error> {
        slot.write(self.build_value(ev, n)?);
        Ok(())
    }

    fn build_value(&self, ev: Option<Table<'a>>, n: usize) -> Result<Value, Error> {
        let (kind, t) = ev
            .ok_or(Error::InvalidProgram)?
            .fields()
            .union(fb::EValue::VT_VAL_TYPE, fb::EValue::VT_VAL);
        if kind == tag::NULL {
            return Ok(Value::None);
        }
        let t = t.ok_or(Error::InvalidProgram)?;
        // Every list table keeps its items in its first field.
        let items = || t.vector(fb::IntList::VT_ITEMS).unwrap_or(Vector::EMPTY);
        // Tests on ranges of the tag rather than a `match` arm per kind, which compiles to
        // a jump table of 8-byte words in a non-PIE build.
        if (tag::INT..=tag::DOUBLE).contains(&kind) {
            // Int, Bool and Double hold their value in their first field.
            let raw = t.uint(fb::Int::VT_INT_VAL, if kind == tag::BOOL { 1 } else { 8 });
            return Ok(if kind == tag::INT {
                Value::Int(raw as i64)
            } else if kind == tag::BOOL {
                Value::Bool(raw != 0)
            } else {
                Value::Double(f64::from_bits(raw))
            });
        }
        if kind == tag::TENSOR {
            return Ok(Value::Tensor(self.build_tensor(t)?));
        }
        if kind == tag::STRING {
            let s = match t.bytes(fb::String::VT_STRING_VAL) {
                Some(b) => crate::program::to_str(b).ok_or(Error::InvalidProgram)?,
                None => "",
            };
            return Ok(Value::String(NonNull::from(s.as_bytes()).cast(), s.len()));
        }
        if kind == tag::DOUBLE_LIST || kind == tag::BOOL_LIST {
            // Copied into method memory: doubles as their bits, bools as 0 or 1.
            let items = items();
            let len = items.len();
            let double = kind == tag::DOUBLE_LIST;
            let elem = if double { 8 } else { 1 };
            let copy = self.arena.allocate_n(len, elem as usize, elem as usize)?;
            for k in 0..len {
                let v = items.uint(k, elem);
                // SAFETY: `k < len`; the allocation holds `len` elements of `elem`
                // bytes, aligned to `elem`.
                unsafe {
                    if double {
                        copy.cast::<u64>().as_ptr().add(k).write(v);
                    } else {
                        copy.as_ptr().add(k).write((v != 0) as u8);
                    }
                }
            }
            return Ok(if double {
                Value::DoubleList(copy.cast(), len)
            } else {
                Value::BoolList(copy.cast(), len)
            });
        }
        // Int, tensor and optional-tensor lists: value indices, and room for the items
        // gathered before each use (all-zero bytes are zero ints and null pointers).
        let int_list = kind == tag::INT_LIST;
        let optional = kind == tag::OPTIONAL_TENSOR_LIST;
        if !(int_list || optional || kind == tag::TENSOR_LIST) {
            return Err(Error::InvalidProgram);
        }
        let elem = if int_list { 8 } else { 4 };
        let bytes = match t.vector_bytes(fb::IntList::VT_ITEMS, elem as usize) {
            Some(bytes) => bytes,
            None if !t.has(fb::IntList::VT_ITEMS) => &[],
            None => return Err(Error::InvalidProgram),
        };
        let (indices, len) = self.indices(bytes, elem, optional, n)?;
        let items = self.arena.alloc_zeroed::<u64>(len)?;
        let list = self.arena.alloc(BoxedList {
            indices,
            items,
            len,
        })?;
        // One list serves every item type: `BoxedList` is `repr(C)`, and every item is an
        // 8-byte slot.
        Ok(if int_list {
            Value::IntList(list.cast())
        } else if optional {
            Value::OptionalTensorList(list.cast())
        } else {
            Value::TensorList(list.cast())
        })
    }

    /// Copies a vector of value indices (`bytes`: `elem`-byte signed integers, 4 or 8)
    /// into method memory, each checked to be below `n` (or -1 when `optional`, stored as
    /// [`NONE_INDEX`]).
    pub(super) fn indices(
        &self,
        bytes: &[u8],
        elem: u32,
        optional: bool,
        n: usize,
    ) -> Result<(NonNull<u32>, usize), Error> {
        let wide = elem == 8;
        let len = bytes.len() >> if wide { 3 } else { 2 };
        let out = self.arena.alloc_array::<u32>(len)?;
        for k in 0..len {
            // SAFETY: `bytes` holds `len` elements of `elem` bytes, 4 or 8.
            let raw = unsafe {
                let at = bytes.as_ptr().add(k * elem as usize);
                if wide {
                    i64::from_le_bytes(at.cast::<[u8; 8]>().read_unaligned())
                } else {
                    i64::from(i32::from_le_bytes(at.cast::<[u8; 4]>().read_unaligned()))
                }
            };
            let index = if optional && raw == -1 {
                NONE_INDEX
            } else {
                in_range(raw, n).ok_or(Error::InvalidProgram)?
            };
            // SAFETY: `k < len`, the array's length.
            unsafe { out.as_ptr().add(k).write(index) };
        }
        Ok((out, len))
    }

    /// An input or output list: value indices, each range-checked; tensors that are
    /// neither planned nor constant get method memory (`back_with_method_memory`).
    pub(super) fn io_list(
        &self,
        vt: et_schema::reader::VOffsetT,
    ) -> Result<(NonNull<u32>, usize), Error> {
        let list = self.meta.list(vt).ok_or(Error::InvalidProgram)?;
        let bytes = list.element_bytes(4).ok_or(Error::InvalidProgram)?;
        let (indices, len) = self.indices(bytes, 4, false, self.num_values)?;
        for k in 0..len {
            // SAFETY: `indices` holds `len` indices, each below `num_values`, the length
            // of the value table built by `build_values`.
            let v = unsafe { *self.values.as_ptr().add(*indices.as_ptr().add(k) as usize) };
            if let Value::Tensor(t) = v {
                self.back_with_method_memory(t)?;
            }
        }
        Ok((indices, len))
    }
}
