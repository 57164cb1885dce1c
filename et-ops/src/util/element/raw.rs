//! Elements read from and written to raw (native-endian) bytes.

use et_runtime::Bool;

use super::Num;

/// Element types that can be read from and written to raw (native-endian) bytes.
pub trait RawElement: Num {
    /// Reads one element from the start of `b` (zero if `b` is too short).
    fn read(b: &[u8]) -> Self;
    /// Writes one element to the start of `b` (nothing if `b` is too short).
    fn write(self, b: &mut [u8]);
}

macro_rules! raw_element {
    ($($t:ty),*) => {$(
        impl RawElement for $t {
            #[inline(always)]
            fn read(b: &[u8]) -> Self {
                match b.first_chunk() {
                    Some(a) => <$t>::from_ne_bytes(*a),
                    None => <$t as Num>::ZERO,
                }
            }
            #[inline(always)]
            fn write(self, b: &mut [u8]) {
                if let Some(a) = b.first_chunk_mut() {
                    *a = self.to_ne_bytes();
                }
            }
        }
    )*};
}

raw_element!(
    u8,
    i8,
    i16,
    i32,
    i64,
    u16,
    u32,
    u64,
    f32,
    f64,
    et_runtime::f16,
    et_runtime::bf16
);

impl RawElement for Bool {
    #[inline(always)]
    fn read(b: &[u8]) -> Self {
        Bool(b.first().copied().unwrap_or(0))
    }
    #[inline(always)]
    fn write(self, b: &mut [u8]) {
        if let Some(x) = b.first_mut() {
            // Kernels write canonical 0/1 bools.
            *x = self.get() as u8;
        }
    }
}
