//! The portable micro-kernel.

use super::{merge_full, Out};

/// The portable micro-kernel: `T = sum_p a[p] (outer) b[p]` over one packed A panel and
/// one packed B panel. Written on fixed-size arrays so the compiler keeps the tile in
/// vector registers.
#[inline(always)]
pub(super) fn ukr_portable<const MR: usize, const NR: usize>(
    a: &[[f32; MR]],
    b: &[f32],
    ldb: usize,
    out: Out<'_, MR, NR>,
) {
    let mut t = [[0.0f32; NR]; MR];
    for (av, brow) in a.iter().zip(b.chunks(ldb)) {
        let Some(bv) = brow.first_chunk::<NR>() else {
            break;
        };
        for i in 0..MR {
            let x = av[i];
            for j in 0..NR {
                t[i][j] += x * bv[j];
            }
        }
    }
    match out {
        Out::Tile(dst) => *dst = t,
        Out::C {
            c,
            rs,
            alpha,
            beta,
            map,
        } => merge_full(&t, c, rs, alpha, beta, map),
    }
}
