//! etch on a Cortex-M: each binary (`src/bin/`) runs one model from flash in static
//! buffers sized at build time from the program, checks its output against ExecuTorch's
//! and exits through semihosting (0 when the output matches, 1 otherwise).
//!
//! No heap: the `.pte` is read in place from flash, constants included; the method's
//! tables, activations and kernel scratch live in the statics the binary declares from
//! the constants `build.rs` measured (`MethodBufferSizes::measure`).

#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

use cortex_m_semihosting::hprintln;
use et_runtime::{BufferLoader, EValue, MemoryManager, Program, Verification};

#[doc(hidden)]
pub use cortex_m_rt;
#[doc(hidden)]
pub use cortex_m_semihosting;

// The kernels and the XNNPACK backend register themselves by being linked.
#[cfg(feature = "kernels")]
use et_ops as _;
#[cfg(feature = "kernels")]
use et_xnnpack as _;

/// `T` at the alignment the runtime asks of a program (`PROGRAM_ALIGNMENT`) and the
/// alignment the measured buffer sizes assume (`BUFFER_ALIGNMENT`, 64: XNNPACK aligns its
/// packed weights to it): a `static Aligned<[u8; N]>` of `include_bytes!` stays in flash.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Aligned<T: ?Sized>(pub T);

const _: () = assert!(core::mem::align_of::<Aligned<u8>>() >= et_runtime::PROGRAM_ALIGNMENT);

/// A zeroed, 64-byte aligned static buffer (in `.bss`: RAM, no flash).
#[derive(Debug)]
pub struct Pool<const N: usize>(UnsafeCell<Aligned<[u8; N]>>);

// SAFETY: a pool's bytes are only reached through `take`, whose caller guarantees it is
// called once, so no two references to them ever exist.
unsafe impl<const N: usize> Sync for Pool<N> {}

impl<const N: usize> Pool<N> {
    /// A zeroed pool.
    pub const fn new() -> Self {
        Pool(UnsafeCell::new(Aligned([0; N])))
    }

    /// The pool's bytes.
    ///
    /// # Safety
    /// At most once per pool for the life of the program.
    #[allow(clippy::mut_from_ref, reason = "one-time handout of a static buffer")]
    pub unsafe fn take(&'static self) -> &'static mut [u8] {
        // SAFETY: called once (caller), so this is the only reference to the array.
        unsafe { &mut (*self.0.get()).0 }
    }
}

impl<const N: usize> Default for Pool<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bytes of one pool holding every planned arena, each starting 16-byte aligned.
pub const fn planned_total(sizes: &[usize]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < sizes.len() {
        total += sizes[i].next_multiple_of(16);
        i += 1;
    }
    total
}

/// One model: its program, one input, the expected first output and the tolerance it
/// is checked with (`|got - want| <= atol + rtol * |want|`, as the fixtures state).
#[derive(Debug)]
pub struct Model {
    /// Its name, for the report.
    pub name: &'static str,
    /// The `.pte`, aligned (in flash).
    pub program: &'static [u8],
    /// Input 0's bytes (float32, little-endian), at the shape the program declares.
    pub input: &'static [u8],
    /// Output 0 as ExecuTorch computed it (float32, little-endian).
    pub expected: &'static [u8],
    /// Absolute tolerance.
    pub atol: f32,
    /// Relative tolerance.
    pub rtol: f32,
}

/// The statics a model runs in, as the sizes `build.rs` measured.
#[derive(Debug)]
pub struct Buffers<const K: usize> {
    /// The method arena.
    pub method: &'static mut [u8],
    /// The planned arenas' sizes.
    pub planned_sizes: [usize; K],
    /// One pool for the planned arenas ([`planned_total`] of the sizes).
    pub planned: &'static mut [u8],
    /// Kernel scratch.
    pub scratch: &'static mut [u8],
}

/// Loads and runs `model` in `buffers`, prints its output and how it compares with the
/// expected one; `true` when every element is within tolerance.
pub fn run<const K: usize>(model: &Model, buffers: Buffers<K>) -> bool {
    let Buffers {
        method,
        planned_sizes,
        planned,
        scratch,
    } = buffers;
    let declared = (method.len(), planned.len(), scratch.len());
    let mut rest = planned;
    let mut arenas: [&mut [u8]; K] = core::array::from_fn(|i| {
        let (head, tail) =
            core::mem::take(&mut rest).split_at_mut(planned_sizes[i].next_multiple_of(16));
        rest = tail;
        head
    });
    let loader = match BufferLoader::new(model.program) {
        Ok(l) => l,
        Err(e) => return failed(model, "the program's alignment", e),
    };
    let program = match Program::load_with(&loader, Verification::Minimal) {
        Ok(p) => p,
        Err(e) => return failed(model, "Program::load", e.error),
    };
    let mut memory = MemoryManager::new(method, &mut arenas, scratch);
    let ok = {
        let mut method = match program.load_method("forward", &mut memory) {
            Ok(m) => m,
            Err(e) => return failed(model, "load_method", e.error),
        };
        let copied = method
            .input_tensor_mut(0)
            .ok()
            .and_then(|t| t.bytes_mut().ok())
            .filter(|bytes| bytes.len() == model.input.len())
            .map(|bytes| bytes.copy_from_slice(model.input));
        if copied.is_none() {
            hprintln!(
                "{}: input 0 is not {} bytes of float32",
                model.name,
                model.input.len()
            );
            return false;
        }
        if let Err(e) = method.execute() {
            return failed(model, "execute", e.error);
        }
        match method.output(0) {
            Ok(EValue::Tensor(t)) => match t.data::<f32>() {
                Ok(got) => compare(model, got),
                Err(e) => failed(model, "output 0 as float32", e.error),
            },
            _ => {
                hprintln!("{}: output 0 is not a tensor", model.name);
                false
            }
        }
    };
    hprintln!(
        "{}: buffers (bytes) declared / used: method arena {} / {}, planned {} (in {} arenas), scratch {} / {}",
        model.name,
        declared.0,
        memory.method_bytes_used(),
        declared.1,
        K,
        declared.2,
        memory.scratch_bytes_peak(),
    );
    ok
}

/// Prints the outputs and the largest difference; `true` when all are within tolerance.
fn compare(model: &Model, got: &[f32]) -> bool {
    let want = model
        .expected
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if got.len() * 4 != model.expected.len() {
        hprintln!(
            "{}: {} outputs, expected {}",
            model.name,
            got.len(),
            model.expected.len() / 4
        );
        return false;
    }
    let mut worst = 0.0f32;
    let mut bad = 0usize;
    for (&g, w) in got.iter().zip(want) {
        let diff = (g - w).abs();
        worst = worst.max(diff);
        // A NaN difference fails too: it is not within any tolerance.
        let within = diff <= model.atol + model.rtol * w.abs();
        if !within {
            bad += 1;
        }
    }
    let shown = &got[..got.len().min(10)];
    hprintln!(
        "{}: output 0 ({} values) starts {:?}",
        model.name,
        got.len(),
        shown
    );
    hprintln!(
        "{}: largest difference from ExecuTorch's {:e} (atol {:e}, rtol {:e}): {}",
        model.name,
        worst,
        model.atol,
        model.rtol,
        if bad == 0 { "match" } else { "MISMATCH" }
    );
    bad == 0
}

#[cold]
fn failed(model: &Model, step: &str, e: et_runtime::Error) -> bool {
    hprintln!("{}: {} failed: {:?}", model.name, step, e);
    false
}

/// Ends the run: semihosting exit with success or failure, which QEMU returns as its
/// exit code (0 or 1).
pub fn exit(ok: bool) -> ! {
    use cortex_m_semihosting::debug;
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Only reached without a debugger or semihosting host.
    loop {
        core::hint::spin_loop();
    }
}

/// The flatbuffers crate links `alloc`, so the link needs a global allocator; this one
/// refuses every request, which proves nothing allocates (an allocation would fail).
struct NoHeap;

// SAFETY: `alloc` always reports failure (a null pointer), a valid answer; `dealloc` is
// never reached because nothing was ever allocated.
unsafe impl GlobalAlloc for NoHeap {
    unsafe fn alloc(&self, _: Layout) -> *mut u8 {
        core::ptr::null_mut()
    }
    unsafe fn dealloc(&self, _: *mut u8, _: Layout) {}
}

#[global_allocator]
static ALLOCATOR: NoHeap = NoHeap;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("panic: {}", info);
    exit(false)
}

/// A binary's `main` for one fixture: the program embedded in flash (aligned), its
/// inputs and expected outputs, the three buffers as statics of the sizes `build.rs`
/// measured (`METHOD`, `PLANNED`, `SCRATCH`: the consts it wrote for the model), and the
/// fixture's tolerance. `path` is the fixture's path under `tests/fixtures` without its
/// extension.
#[macro_export]
macro_rules! firmware {
    (
        name: $name:literal,
        path: $path:literal,
        sizes: ($method:ident, $planned:ident, $scratch:ident),
        atol: $atol:expr,
        rtol: $rtol:expr $(,)?
    ) => {
        include!(concat!(env!("OUT_DIR"), "/buffer_sizes.rs"));

        static PROGRAM: $crate::Aligned<
            [u8; include_bytes!(concat!("../../../../tests/fixtures/", $path, ".pte")).len()],
        > = $crate::Aligned(*include_bytes!(concat!(
            "../../../../tests/fixtures/",
            $path,
            ".pte"
        )));

        static METHOD: $crate::Pool<$method> = $crate::Pool::new();
        static PLANNED: $crate::Pool<{ $crate::planned_total(&$planned) }> = $crate::Pool::new();
        static SCRATCH: $crate::Pool<$scratch> = $crate::Pool::new();

        #[$crate::cortex_m_rt::entry]
        fn main() -> ! {
            let model = $crate::Model {
                name: $name,
                program: &PROGRAM.0,
                input: include_bytes!(concat!("../../../../tests/fixtures/", $path, ".in0.bin")),
                expected: include_bytes!(concat!(
                    "../../../../tests/fixtures/",
                    $path,
                    ".out0.bin"
                )),
                atol: $atol,
                rtol: $rtol,
            };
            // SAFETY: `main` runs once, so each pool is taken once.
            let buffers = unsafe {
                $crate::Buffers {
                    method: METHOD.take(),
                    planned_sizes: $planned,
                    planned: PLANNED.take(),
                    scratch: SCRATCH.take(),
                }
            };
            $crate::exit($crate::run(&model, buffers))
        }
    };
}
