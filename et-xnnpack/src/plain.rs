//! Plain numbers and views of one plain type's memory as another: how steps read values,
//! scratch and packed weights of another element type than they were allocated as.

use core::mem::{align_of, size_of};

/// Plain numbers: every bit pattern (all-zero included) is a valid value, and there is
/// no padding.
pub(crate) trait Plain: Copy {}
impl Plain for f32 {}
impl Plain for i32 {}
impl Plain for i16 {}
impl Plain for u16 {}
impl Plain for i8 {}
impl Plain for u8 {}

/// Whether `A`'s memory may be viewed as `B`s: `B` is no larger than `A` and divides it,
/// and needs no more alignment (constants: the check folds away).
const fn fits<A, B>() -> bool {
    size_of::<B>() <= size_of::<A>()
        && size_of::<A>().is_multiple_of(size_of::<B>())
        && align_of::<B>() <= align_of::<A>()
}

/// `x` as `B`s (`size_of::<A>() / size_of::<B>()` per `A`).
///
/// # Panics
/// When `B` is larger than `A`, does not divide it or needs more alignment: a mistake
/// in the calling code, caught by its tests, never by data.
pub(crate) fn cast<A: Plain, B: Plain>(x: &[A]) -> &[B] {
    assert!(fits::<A, B>());
    // SAFETY: `B` is no larger than `A`, divides it and needs no more alignment
    // (asserted), so the view covers exactly `x`'s bytes at a suitable address; both are
    // `Plain` (no padding, every bit pattern valid); the borrow is `x`'s.
    unsafe {
        core::slice::from_raw_parts(
            x.as_ptr().cast::<B>(),
            x.len() * (size_of::<A>() / size_of::<B>()),
        )
    }
}

/// [`cast`] of a mutable slice.
pub(crate) fn cast_mut<A: Plain, B: Plain>(x: &mut [A]) -> &mut [B] {
    assert!(fits::<A, B>());
    // SAFETY: as in `cast`; the view replaces the exclusive borrow of the same memory.
    unsafe {
        core::slice::from_raw_parts_mut(
            x.as_mut_ptr().cast::<B>(),
            x.len() * (size_of::<A>() / size_of::<B>()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_cover_the_same_bytes() {
        let mut words = [0x0403_0201i32, -1];
        assert_eq!(cast::<i32, i8>(&words), [1, 2, 3, 4, -1, -1, -1, -1]);
        cast_mut::<i32, i16>(&mut words)[1] = 0x0605;
        assert_eq!(words[0], 0x0605_0201);
        assert_eq!(cast::<i8, u8>(&[-1i8, 2]), [255, 2]);
        assert_eq!(cast::<f32, i32>(&[1.0f32]), [0x3f80_0000]);
    }

    #[test]
    #[should_panic]
    fn a_wider_view_is_refused() {
        let _ = cast::<i8, i32>(&[0; 8]);
    }
}
