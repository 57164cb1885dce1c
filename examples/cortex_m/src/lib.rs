//! etch on a Cortex-M: the firmware (`src/main.rs`) runs one model from flash in static
//! buffers sized at build time from the program, checks its output against ExecuTorch's
//! and the stack it used against the stack reserved, and exits through semihosting (0
//! when both hold, 1 otherwise).
//!
//! No heap: the `.pte` is read in place from flash, constants included; the method's
//! tables, activations and kernel scratch live in the statics the firmware declares from
//! the constants `build.rs` measured (`MethodBufferSizes::measure`).

#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

use cortex_m_semihosting::hprintln;
use et_runtime::{BufferLoader, EValue, MemoryManager, Program, Verification};

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

/// Prints the stack's high-water mark and the bytes `memory.x` reserves for it; `false`
/// when the stack reached the bottom of its reserve (it may have gone past it, into the
/// statics below).
///
/// cortex-m-rt's `paint-stack` fills the reserve, `_stack_end` up to `_stack_start`, with
/// `STACK_PAINT_VALUE` before `main`; the lowest word that no longer holds it is the
/// deepest the stack has reached.
pub fn report_stack() -> bool {
    extern "C" {
        static _stack_start: u32;
        static _stack_end: u32;
    }
    let top = (&raw const _stack_start).expose_provenance();
    let bottom = (&raw const _stack_end).expose_provenance();
    let mut deepest = bottom;
    while deepest < top {
        let word = core::ptr::with_exposed_provenance::<u32>(deepest);
        // SAFETY: `word` is a word-aligned address (cortex-m-rt asserts both ends of the
        // reserve are) inside the reserve, RAM that is always mapped. Every word below the
        // first changed one still holds the paint, so no frame has ever been there and no
        // Rust object lives there; the first changed one is only read, never written. A
        // volatile read of a `u32`, whatever its bits, is defined.
        if unsafe { word.read_volatile() } != cortex_m_rt::STACK_PAINT_VALUE {
            break;
        }
        deepest += 4;
    }
    let (used, reserved) = (top - deepest, top - bottom);
    let ok = used < reserved;
    hprintln!(
        "stack (bytes): {} used of {} reserved{}",
        used,
        reserved,
        if ok {
            ""
        } else {
            ": OVERFLOW (the stack reached the bottom of its reserve)"
        }
    );
    ok
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
