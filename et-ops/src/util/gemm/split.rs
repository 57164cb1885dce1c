//! Splitting one f32 product over the kernel context's pool: C is cut into blocks of
//! whole rows (or, when C has one row, of columns), each block with its own packing
//! buffers, and each block runs the ordinary blocked driver as one task.
//!
//! Only the dimension whose blocks are disjoint runs of C's memory is cut (rows of a
//! row-major C), so every task writes its own slice and no unsafe code is needed. Blocks
//! are whole multiples of the micro-kernel's tile when that costs little balance, and a
//! product is split only when each task gets at least [`MIN_MACS_PER_PART`]
//! multiply-adds, so small products (a transformer's 32-wide projections, one-element
//! programs) never pay for waking threads.

use et_runtime::{KernelContext, KernelResult};

use super::{
    alloc_packs, check_shapes, round_up, run_blocked, tiling, Epilogue, Level, Mat, MatMut,
};

/// The least work (multiply-adds) worth a task: about 3-5 us on one core with AVX2, well
/// above the cost of handing a task to a spinning worker.
const MIN_MACS_PER_PART: usize = 1 << 18;

/// The most blocks one product is cut into (the parts' views live on the stack).
const MAX_PARTS: usize = 16;

/// How a product is cut.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    /// Cut C's rows (else its columns).
    rows: bool,
    /// Number of blocks, at least 2.
    parts: usize,
    /// Rows (or columns) per block; the last block may be shorter.
    chunk: usize,
}

/// The cut for a product into `c` with inner dimension `k` on `workers` threads, or
/// `None` to run it whole (one worker, too little work, or no dimension of C whose
/// blocks are disjoint in memory).
pub(super) fn plan(workers: usize, c: &MatMut<'_, f32>, k: usize, level: Level) -> Option<Plan> {
    if workers < 2 {
        return None;
    }
    let (m, n) = (c.rows, c.cols);
    let (mr, nr, _) = tiling(level);
    // Blocks of rows are disjoint when one row's extent is below the row stride; the
    // products cannot overflow: `check_shapes` proved both extents lie inside C's data.
    let (rows, len, unit) = if m >= 2 && c.rs > (n - 1) * c.cs {
        (true, m, mr)
    } else if n >= 2 && c.cs > (m - 1) * c.rs {
        (false, n, nr)
    } else {
        return None;
    };
    let by_work = m.saturating_mul(n).saturating_mul(k) / MIN_MACS_PER_PART;
    let want = workers.min(by_work).min(MAX_PARTS).min(len);
    if want < 2 {
        return None;
    }
    let mut chunk = len.div_ceil(want);
    // Whole tiles per block when a block holds at least two: the rounding then shifts
    // at most a tile of work between tasks.
    if chunk >= 2 * unit {
        chunk = round_up(chunk, unit);
    }
    let parts = len.div_ceil(chunk);
    (parts >= 2).then_some(Plan { rows, parts, chunk })
}

/// One block of the product: its operands, its slice of C (and the epilogue of its rows)
/// and its packing buffers.
struct Part<'x> {
    a: Mat<'x, f32>,
    b: Mat<'x, f32>,
    c: MatMut<'x, f32>,
    epilogue: Option<Epilogue<'x>>,
    ap: &'x mut [f32],
    bp: &'x mut [f32],
}

/// Runs the product cut as `plan` says. `ap0`/`bp0` are the whole product's packing
/// buffers (the first block uses them); if the scratch cannot hold the other blocks'
/// buffers, the product runs whole with them instead.
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
pub(super) fn sgemm_split(
    ctx: &KernelContext<'_>,
    plan: Plan,
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    level: Level,
    ap0: &mut [f32],
    bp0: &mut [f32],
) -> KernelResult {
    let (m, n, k) = (c.rows, c.cols, a.cols);
    let (len, stride) = if plan.rows { (m, c.rs) } else { (n, c.cs) };
    // Every block's scratch is taken here, before the split: the arena is not shared
    // between threads.
    let mut packs: [Option<(&mut [f32], &mut [f32])>; MAX_PARTS] = Default::default();
    packs[0] = Some((ap0, bp0));
    for slot in packs.iter_mut().take(plan.parts).skip(1) {
        let (pm, pn) = if plan.rows {
            (plan.chunk, n)
        } else {
            (m, plan.chunk)
        };
        match alloc_packs(ctx, pm, pn, k, level) {
            Ok(p) => *slot = Some(p),
            Err(_) => {
                let Some((ap, bp)) = packs[0].take() else {
                    return Ok(());
                };
                run_blocked(alpha, a, b, beta, c, epilogue, level, ap, bp);
                return Ok(());
            }
        }
    }
    let mut parts: [Option<Part<'_>>; MAX_PARTS] = Default::default();
    let mut rest = c.data;
    for (p, (slot, pack)) in parts
        .iter_mut()
        .zip(&mut packs)
        .take(plan.parts)
        .enumerate()
    {
        let lo = p * plan.chunk;
        let count = plan.chunk.min(len - lo);
        // Blocks are consecutive runs of C: this one ends where the next begins (the
        // last takes the rest).
        let take = if p + 1 == plan.parts {
            rest.len()
        } else {
            (count * stride).min(rest.len())
        };
        let (piece, tail) = core::mem::take(&mut rest).split_at_mut(take);
        rest = tail;
        let Some((ap, bp)) = pack.take() else {
            continue;
        };
        let part = if plan.rows {
            Part {
                a: Mat {
                    data: a.data.get(lo * a.rs..).unwrap_or(&[]),
                    rows: count,
                    ..a
                },
                b,
                c: MatMut {
                    data: piece,
                    rows: count,
                    cols: n,
                    rs: c.rs,
                    cs: c.cs,
                },
                epilogue: epilogue.map(|e| e.rows_from(lo)),
                ap,
                bp,
            }
        } else {
            Part {
                a,
                b: Mat {
                    data: b.data.get(lo * b.cs..).unwrap_or(&[]),
                    cols: count,
                    ..b
                },
                c: MatMut {
                    data: piece,
                    rows: m,
                    cols: count,
                    rs: c.rs,
                    cs: c.cs,
                },
                epilogue,
                ap,
                bp,
            }
        };
        // Holds by construction; checked so that a mistake is an error, not a panic in
        // a worker.
        check_shapes(&part.a, &part.b, &part.c)?;
        *slot = Some(part);
    }
    ctx.parallel_each(&mut parts[..plan.parts], |_, slot| {
        if let Some(p) = slot.take() {
            run_blocked(alpha, p.a, p.b, beta, p.c, p.epilogue, level, p.ap, p.bp);
        }
    });
    Ok(())
}
