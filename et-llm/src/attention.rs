//! The attention loop every SDPA operator of this crate runs: one query row at a time,
//! an online (flash-style) softmax over blocks of keys, and only over the keys the row
//! may see, so a decode step costs what the filled part of the cache costs, not the
//! whole cache.

use et_runtime::KernelContext;

use et_ops::vmath;

/// Keys scored per block. The scores of one block live on the stack; 64 keeps them in
/// a few cache lines while amortizing the rescale of the accumulator over many keys.
const KEY_BLOCK: usize = 64;

/// Below this many multiply-adds (queries x keys x head_dim) a call stays on the calling
/// thread: waking the pool costs about a microsecond, more than a small decode step's
/// whole attention.
const SPLIT_MIN_WORK: usize = 1 << 16;

/// The most bands one call splits its output into (the bands live on the stack).
const MAX_BANDS: usize = 16;

/// Where the rows of a 4-D operand are: element strides of its batch, sequence and head
/// dims. The head_dim elements of one row are always contiguous.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows {
    pub batch: usize,
    pub seq: usize,
    pub head: usize,
}

impl Rows {
    #[inline(always)]
    pub fn at(&self, b: usize, pos: usize, h: usize) -> usize {
        b * self.batch + pos * self.seq + h * self.head
    }
}

/// One operand's rows as the loop reads them: f32 data, or int8 data with a scale and a
/// zero point per row.
pub(crate) trait Operand: Sync {
    /// `dot(q, row)`, `q` being head_dim long.
    fn dot(&self, q: &[f32], b: usize, pos: usize, h: usize) -> f32;
    /// `acc += w * row`.
    fn axpy(&self, acc: &mut [f32], w: f32, b: usize, pos: usize, h: usize);
    /// The row as f32, for the query: in place when it is f32, else dequantized into
    /// `buf` (at least head_dim long).
    fn query<'s>(&'s self, buf: &'s mut [f32], b: usize, pos: usize, h: usize) -> &'s [f32];
    /// Asks the CPU to start loading a row that will be read soon (no effect if out of
    /// range or on CPUs without a prefetch hint).
    fn prefetch(&self, b: usize, pos: usize, h: usize);
}

/// How many keys ahead of the one being read the loop prefetches. A cache's rows for one
/// head are a whole row of every head apart, more than the hardware prefetchers follow
/// across pages, so without hints each key row waits for memory.
const PREFETCH_AHEAD: usize = 8;

/// Starts loading the cache lines of `data[at..at + len]` (bytes), if in range.
#[inline(always)]
fn prefetch_bytes<T>(data: &[T], at: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(row) = data.get(at..at + len) {
        let bytes = core::mem::size_of_val(row);
        let start = row.as_ptr().cast::<i8>();
        for line in (0..bytes).step_by(64) {
            // SAFETY: `prefetcht0` only hints the cache; the address is inside `row`
            // (SSE is part of x86-64's baseline).
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    start.add(line),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, at, len);
}

/// An f32 operand.
pub(crate) struct F32Rows<'a> {
    pub data: &'a [f32],
    pub rows: Rows,
    pub dim: usize,
}

impl F32Rows<'_> {
    #[inline(always)]
    fn row(&self, b: usize, pos: usize, h: usize) -> &[f32] {
        let at = self.rows.at(b, pos, h);
        &self.data[at..at + self.dim]
    }
}

impl Operand for F32Rows<'_> {
    #[inline(always)]
    fn dot(&self, q: &[f32], b: usize, pos: usize, h: usize) -> f32 {
        dot(q, self.row(b, pos, h))
    }

    #[inline(always)]
    fn axpy(&self, acc: &mut [f32], w: f32, b: usize, pos: usize, h: usize) {
        for (a, &x) in acc.iter_mut().zip(self.row(b, pos, h)) {
            *a += w * x;
        }
    }

    #[inline(always)]
    fn query<'s>(&'s self, _: &'s mut [f32], b: usize, pos: usize, h: usize) -> &'s [f32] {
        self.row(b, pos, h)
    }

    #[inline(always)]
    fn prefetch(&self, b: usize, pos: usize, h: usize) {
        prefetch_bytes(self.data, self.rows.at(b, pos, h), self.dim);
    }
}

/// An int8 operand quantized per row: `x = (q - zero_point) * scale`.
pub(crate) struct I8Rows<'a> {
    pub data: &'a [i8],
    pub rows: Rows,
    pub dim: usize,
    pub scales: &'a [f32],
    pub zero_points: &'a [i8],
    /// Where a row's scale and zero point are (both tensors share one layout).
    pub params: Rows,
}

impl I8Rows<'_> {
    #[inline(always)]
    fn row(&self, b: usize, pos: usize, h: usize) -> (&[i8], f32, f32) {
        let at = self.rows.at(b, pos, h);
        let p = self.params.at(b, pos, h);
        (
            &self.data[at..at + self.dim],
            self.scales[p],
            f32::from(self.zero_points[p]),
        )
    }
}

impl Operand for I8Rows<'_> {
    #[inline(always)]
    fn dot(&self, q: &[f32], b: usize, pos: usize, h: usize) -> f32 {
        let (row, scale, zp) = self.row(b, pos, h);
        let mut acc = [0f32; 8];
        let (qc, rc) = (q.chunks_exact(8), row.chunks_exact(8));
        let (qt, rt) = (qc.remainder(), rc.remainder());
        for (a, r) in qc.zip(rc) {
            for i in 0..8 {
                acc[i] += a[i] * (f32::from(r[i]) - zp);
            }
        }
        let mut s = sum8(acc);
        for (a, &r) in qt.iter().zip(rt) {
            s += a * (f32::from(r) - zp);
        }
        s * scale
    }

    #[inline(always)]
    fn axpy(&self, acc: &mut [f32], w: f32, b: usize, pos: usize, h: usize) {
        let (row, scale, zp) = self.row(b, pos, h);
        let w = w * scale;
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += w * (f32::from(x) - zp);
        }
    }

    #[inline(always)]
    fn query<'s>(&'s self, buf: &'s mut [f32], b: usize, pos: usize, h: usize) -> &'s [f32] {
        let (row, scale, zp) = self.row(b, pos, h);
        let buf = &mut buf[..self.dim];
        for (o, &x) in buf.iter_mut().zip(row) {
            *o = (f32::from(x) - zp) * scale;
        }
        buf
    }

    #[inline(always)]
    fn prefetch(&self, b: usize, pos: usize, h: usize) {
        prefetch_bytes(self.data, self.rows.at(b, pos, h), self.dim);
    }
}

/// A sum in a fixed order, so that every build and every thread count rounds alike.
#[inline(always)]
fn sum8(a: [f32; 8]) -> f32 {
    ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]))
}

/// `sum(a[i] * b[i])` with eight independent partial sums: the loop the compiler turns
/// into vector multiply-adds (a single running sum would serialize on its latency).
#[inline(always)]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let (at, bt) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s = sum8(acc);
    for (x, y) in at.iter().zip(bt) {
        s += x * y;
    }
    s
}

/// An additive float mask: `data[row * row_stride + key]` for query row `row`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mask<'a> {
    pub data: &'a [f32],
    pub row_stride: usize,
}

/// One attention call, its shapes already checked against the data.
pub(crate) struct Problem<'a, Q, K, V> {
    pub q: Q,
    pub k: K,
    pub v: V,
    pub seq: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub dim: usize,
    /// The cache position of query row 0.
    pub start_pos: usize,
    /// How many keys (from position 0) any query may see: the filled prefix of the
    /// cache, or the mask's width.
    pub keys: usize,
    pub causal: bool,
    pub mask: Option<Mask<'a>>,
    pub scale: f32,
    /// The output is [batch, seq, heads, dim] (true) or [batch, heads, seq, dim].
    pub out_seq_first: bool,
}

/// The most head_dim a quantized query can have: its dequantized row lives on the stack.
pub(crate) const MAX_QUANTIZED_HEAD_DIM: usize = 512;

impl<Q: Operand, K: Operand, V: Operand> Problem<'_, Q, K, V> {
    /// Computes every output row into `out` (contiguous, in the output's layout),
    /// splitting the rows over the context's pool when the call is big enough. Each row
    /// is computed by the same code whichever thread runs it, so the result does not
    /// depend on the pool.
    pub fn run(&self, ctx: &KernelContext<'_>, out: &mut [f32]) {
        let d = self.dim;
        let rows = out.len() / d.max(1);
        let work = rows.saturating_mul(self.keys).saturating_mul(d);
        let workers = ctx.workers().min(MAX_BANDS).min(rows);
        if workers <= 1 || work < SPLIT_MIN_WORK {
            self.rows(0, out);
            return;
        }
        let per_band = rows.div_ceil(workers) * d;
        let mut items: [Option<(usize, &mut [f32])>; MAX_BANDS] = Default::default();
        let mut n = 0;
        let mut first = 0;
        for band in out.chunks_mut(per_band) {
            let len = band.len() / d;
            items[n] = Some((first, band));
            first += len;
            n += 1;
        }
        ctx.parallel_each(&mut items[..n], |_, item| {
            if let Some((first, band)) = item.take() {
                self.rows(first, band);
            }
        });
    }

    /// Output rows `first..` into `band` (a whole number of rows).
    fn rows(&self, first: usize, band: &mut [f32]) {
        // Only an int8 query is copied here (its checks bound its head_dim).
        let mut qbuf = [0f32; MAX_QUANTIZED_HEAD_DIM];
        for (i, out) in band.chunks_exact_mut(self.dim).enumerate() {
            let r = first + i;
            let (b, s, h) = if self.out_seq_first {
                (
                    r / (self.seq * self.heads),
                    r / self.heads % self.seq,
                    r % self.heads,
                )
            } else {
                (
                    r / (self.seq * self.heads),
                    r % self.seq,
                    r / self.seq % self.heads,
                )
            };
            let q = self.q.query(&mut qbuf, b, s, h);
            self.row(q, b, s, h, out);
        }
    }

    /// One query row: `out = softmax(q . K^T * scale + mask) V` over the keys it may see.
    fn row(&self, q: &[f32], b: usize, s: usize, h: usize, out: &mut [f32]) {
        let hk = h / (self.heads / self.kv_heads);
        let n_keys = if self.causal {
            (self.start_pos + s + 1).min(self.keys)
        } else {
            self.keys
        };
        let mask = self.mask.map(|m| {
            let at = s * m.row_stride;
            &m.data[at..at + self.keys]
        });
        out.fill(0.0);
        let mut scores = [0f32; KEY_BLOCK];
        let mut max = f32::NEG_INFINITY;
        let mut sum = 0f32;
        let mut n0 = 0;
        while n0 < n_keys {
            let len = KEY_BLOCK.min(n_keys - n0);
            let scores = &mut scores[..len];
            let mut block_max = f32::NEG_INFINITY;
            for (j, x) in scores.iter_mut().enumerate() {
                self.k.prefetch(b, n0 + j + PREFETCH_AHEAD, hk);
                let mut v = self.k.dot(q, b, n0 + j, hk) * self.scale;
                if let Some(m) = mask {
                    v += m[n0 + j];
                }
                *x = v;
                block_max = block_max.max(v);
            }
            if block_max > max {
                // Rescale what was accumulated against the old maximum. Before the first
                // finite score nothing was accumulated, and exp(-inf) would be 0 anyway.
                if sum > 0.0 {
                    let c = exp(max - block_max);
                    sum *= c;
                    out.iter_mut().for_each(|o| *o *= c);
                }
                max = block_max;
            }
            // A block whose keys are all masked out (-inf) contributes nothing.
            if max != f32::NEG_INFINITY {
                // The block's weights first, by the vectorized exponential.
                scores.iter_mut().for_each(|x| *x -= max);
                vmath::exp_in_place(scores);
                for (j, &p) in scores.iter().enumerate() {
                    self.v.prefetch(b, n0 + j + PREFETCH_AHEAD, hk);
                    if p != 0.0 {
                        sum += p;
                        self.v.axpy(out, p, b, n0 + j, hk);
                    }
                }
            }
            n0 += len;
        }
        // A row with no visible key gets 0/0 = NaN, as ExecuTorch and PyTorch give.
        let inv = 1.0 / sum;
        out.iter_mut().for_each(|o| *o *= inv);
    }
}

/// `e^x` of one value, by the function that weighs the blocks.
fn exp(x: f32) -> f32 {
    let mut v = [x];
    vmath::exp_in_place(&mut v);
    v[0]
}
