//! The int8 table lookup of XNNPACK's tabulated activations on NEON: 16 bytes at a time
//! through the 256-entry table held in 16 q-registers. `tbl` with four registers looks
//! up indices 0-63 and gives 0 for the rest; three `tbx` then fill indices 64-255 from
//! the other quarters, each with the index's top two bits flipped so that only its own
//! quarter lands in 0-63 (`tbx` leaves a lane alone for an index of 64 or more).

use core::arch::aarch64::*;

/// `out[i] = table[x[i] as u8]` for `i < min(x.len(), out.len())`, as
/// [`lookup`](super::lookup) defines it.
pub(crate) fn lookup(table: &[i8; 256], x: &[i8], out: &mut [i8]) {
    let n = x.len().min(out.len());
    let whole = n - n % 16;
    // SAFETY: the table loads read 64 bytes at each of 0, 64, 128 and 192 of a 256-byte
    // array; each block's load and store touch bytes `i..i + 16` with `i + 16 <= whole
    // <= n`, inside `x` and `out`. NEON is aarch64's baseline.
    unsafe {
        let t = table.as_ptr().cast::<u8>();
        let quarter = |at: usize| {
            uint8x16x4_t(
                vld1q_u8(t.add(at)),
                vld1q_u8(t.add(at + 16)),
                vld1q_u8(t.add(at + 32)),
                vld1q_u8(t.add(at + 48)),
            )
        };
        let (t0, t1, t2, t3) = (quarter(0), quarter(64), quarter(128), quarter(192));
        let (f1, f2, f3) = (vdupq_n_u8(0x40), vdupq_n_u8(0x80), vdupq_n_u8(0xC0));
        for i in (0..whole).step_by(16) {
            let idx = vld1q_u8(x.as_ptr().add(i).cast());
            let v = vqtbl4q_u8(t0, idx);
            let v = vqtbx4q_u8(v, t1, veorq_u8(idx, f1));
            let v = vqtbx4q_u8(v, t2, veorq_u8(idx, f2));
            let v = vqtbx4q_u8(v, t3, veorq_u8(idx, f3));
            vst1q_u8(out.as_mut_ptr().add(i).cast(), v);
        }
    }
    for (o, &v) in out[whole..n].iter_mut().zip(&x[whole..n]) {
        *o = table[usize::from(v as u8)];
    }
}
