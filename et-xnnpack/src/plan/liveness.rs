//! Lays intermediate values out in one buffer: two values share bytes only when no node
//! needs both (their def..=last_use intervals are disjoint), first fit in order of
//! definition. Inputs and outputs of the same node are live at that node, so a node
//! never reads and writes overlapping memory.

use core::mem::size_of;

use et_runtime::backend::{BackendInitContext, DelegateError};
use et_runtime::Error;

use super::arena::arena_array;
use crate::builder::ALIGN;
use crate::values::{Storage, Value};

/// Bytes of method memory [`assign_offsets`] takes for its bookkeeping.
pub(crate) fn bookkeeping_bound(num_values: usize) -> usize {
    num_values * 2 * size_of::<u32>() + 2 * ALIGN
}

fn round_up(bytes: usize) -> Option<usize> {
    bytes.checked_add(ALIGN - 1).map(|b| b & !(ALIGN - 1))
}

/// Gives every value some node writes (and that is not a delegate output) an offset;
/// returns the buffer's size.
pub(crate) fn assign_offsets(
    ctx: &BackendInitContext<'_>,
    values: &mut [Value],
) -> Result<usize, DelegateError> {
    let overflow = || DelegateError::new(Error::InvalidProgram, "intermediate values overflow");
    // The values to place, in order of definition (insertion sort: graphs are small and
    // mostly in order already).
    let order = arena_array(ctx, values.len(), 0u32)?;
    let mut n = 0;
    for (i, v) in values.iter().enumerate() {
        if matches!(v.storage, Storage::Unused) && v.def != u32::MAX {
            let mut k = n;
            while k > 0 && values[order[k - 1] as usize].def > v.def {
                order[k] = order[k - 1];
                k -= 1;
            }
            order[k] = i as u32;
            n += 1;
        }
    }
    // Placed values as (offset, end) for the overlap scan.
    let placed = arena_array(ctx, n, 0u32)?;
    let mut total = 0usize;
    for p in 0..n {
        let i = order[p] as usize;
        let (def, last, size) = {
            let v = &values[i];
            let size = round_up(v.bytes()).ok_or_else(overflow)?;
            (v.def, v.last_use, size)
        };
        // First fit: the lowest offset clear of every earlier value live at the same time.
        let mut offset = 0usize;
        loop {
            let mut moved = false;
            for &q in &placed[..p] {
                let u = &values[q as usize];
                let Storage::Internal { offset: o } = u.storage else {
                    continue;
                };
                let u_size = u.bytes();
                let live_together = u.def <= last && def <= u.last_use;
                let end = offset.checked_add(size).ok_or_else(overflow)?;
                if live_together && o < end && offset < o + u_size {
                    offset = round_up(o + u_size).ok_or_else(overflow)?;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        values[i].storage = Storage::Internal { offset };
        placed[p] = i as u32;
        total = total.max(offset.checked_add(size).ok_or_else(overflow)?);
    }
    Ok(total)
}
