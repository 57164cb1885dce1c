//! The size-test program, shared by `size_test` (no kernels), `size_test_all_ops` (every
//! et-ops kernel) and `size_test_mv2` (kernels selected for MobileNetV2): map a `.pte`
//! file, load the program and its first method into static pools, set float inputs to
//! ones, execute, read the outputs.
//!
//! It reaches the OS only through libc (`open` and `read` into a static buffer, `write`)
//! and never formats text with `core::fmt`: messages are static strings and numbers are
//! printed by a small routine, so the binary measures the runtime, not a formatting
//! library. With `panic = "abort"` (the `release-size` profile) the binaries are
//! `no_std`.

#![no_std]

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

use et_runtime::{BufferLoader, EValue, MemoryManager, Program, ScalarType, Verification};

#[doc(hidden)]
pub use libc;

/// A zero-initialized, 16-byte aligned static memory pool (it lives in `.bss`, so it
/// costs no file size).
#[repr(C, align(16))]
pub struct Pool<const N: usize>(UnsafeCell<[u8; N]>);

// SAFETY: a pool is only handed out once, by `take`, whose caller guarantees exclusive use.
unsafe impl<const N: usize> Sync for Pool<N> {}

impl<const N: usize> Pool<N> {
    /// A zeroed pool.
    pub const fn new() -> Self {
        Pool(UnsafeCell::new([0; N]))
    }

    /// The pool's bytes.
    ///
    /// # Safety
    /// Must be called at most once per pool for the life of the program.
    #[allow(clippy::mut_from_ref, reason = "one-time handout of a static buffer")]
    pub unsafe fn take(&'static self) -> &'static mut [u8] {
        // SAFETY: the caller calls this once, so no other reference to the array exists.
        unsafe { &mut *self.0.get() }
    }
}

impl<const N: usize> core::fmt::Debug for Pool<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Pool").field("bytes", &N).finish()
    }
}

impl<const N: usize> Default for Pool<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes bytes to stdout (fd 1) or stderr (fd 2).
pub fn write(fd: i32, bytes: &[u8]) {
    // SAFETY: `bytes` is a valid readable buffer of `bytes.len()` bytes.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

/// Writes `n` in base `radix` (10 to 16: a `u64` then has at most 20 digits).
pub fn write_number(fd: i32, mut n: u64, radix: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while let Some(d) = i.checked_sub(1).and_then(|k| digits.get_mut(k)) {
        *d = b"0123456789abcdef"[(n % radix) as usize & 15];
        i -= 1;
        n /= radix;
        if n == 0 {
            break;
        }
    }
    write(fd, digits.get(i..).unwrap_or_default());
}

/// Reports a failure as the step that failed and the runtime's error code (the runner's
/// messages are bytes of the measured binary too, so they stay short). Cold: the
/// compiler then lays the failure paths out of the way, in fewer bytes.
#[cold]
fn fail(message: &[u8], code: u32) -> i32 {
    write(2, b"size_test: ");
    write(2, message);
    write(2, b" (error 0x");
    write_number(2, code.into(), 16);
    write(2, b")\n");
    1
}

/// Reads the file at `path` (a NUL-terminated C string) into `pool`; `None` on any
/// failure, or when the file does not fit.
///
/// # Safety
/// `path` must point to a NUL-terminated string.
unsafe fn read_file(path: *const libc::c_char, pool: &mut [u8]) -> Option<&[u8]> {
    // SAFETY: `path` is NUL-terminated (caller); the flags are plain constants.
    let fd = unsafe { libc::open(path, libc::O_RDONLY) };
    if fd < 0 {
        return None;
    }
    let mut len = 0;
    loop {
        let rest = pool.get_mut(len..)?;
        if rest.is_empty() {
            // No room left to tell the end of the file from a full pool.
            return None;
        }
        // SAFETY: `rest` is writable for `rest.len()` bytes.
        let n = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        match n {
            0 => break,
            n if n > 0 => len += n as usize,
            _ => return None,
        }
    }
    // The descriptor is left open: the process exits when done.
    pool.get(..len)
}

/// The program file's bytes (a `.pte` up to this size; `.bss`, so free on disk).
static FILE_POOL: Pool<{ 32 << 20 }> = Pool::new();
static METHOD_POOL: Pool<{ 512 << 10 }> = Pool::new();
static PLANNED_POOL: Pool<{ 16 << 20 }> = Pool::new();
static TEMP_POOL: Pool<{ 8 << 20 }> = Pool::new();

/// Most planned arenas a method may have here.
const MAX_PLANNED: usize = 8;

/// Runs the size test on `argv[1]`; returns the process exit code.
///
/// # Safety
/// `argv` must hold `argc` valid NUL-terminated strings, and this must be called once.
pub unsafe fn run(argc: i32, argv: *const *const libc::c_char) -> i32 {
    if argc < 2 {
        write(2, b"usage: size_test PROGRAM.pte\n");
        return 2;
    }
    // SAFETY: `argc >= 2`, so `argv[1]` exists and is NUL-terminated (caller); `run`
    // is called once, so the pool is taken once.
    let Some(bytes) = (unsafe { read_file(*argv.add(1), FILE_POOL.take()) }) else {
        write(2, b"size_test: cannot read the file (or over 32 MiB)\n");
        return 1;
    };
    let loader = match BufferLoader::new(bytes) {
        Ok(l) => l,
        Err(e) => return fail(b"misaligned data", e.code()),
    };
    let program = match Program::load_with(&loader, Verification::Minimal) {
        Ok(p) => p,
        Err(e) => return fail(b"Program::load", e.error.code()),
    };
    let name = match program.method_name(0) {
        Ok(n) => n,
        Err(e) => return fail(b"no method", e.code()),
    };
    let meta = match program.method_meta(name) {
        Ok(m) => m,
        Err(e) => return fail(b"method_meta", e.code()),
    };

    // Carve the planned arenas out of one static pool. Their failures share one step
    // name, told apart by the code: 0x25 (OutOfResources) for more arenas than slots,
    // 0x21 (MemoryAllocationFailed) for a pool too small, else the size's own error.
    // SAFETY: `run` is called once, so each pool is taken once.
    let (method_pool, mut rest, temp_pool) =
        unsafe { (METHOD_POOL.take(), PLANNED_POOL.take(), TEMP_POOL.take()) };
    // Left uninitialized: only the first `count` slots are used, and each is written
    // below before the slice of them is formed, so nothing fills the rest.
    let mut slots = [const { MaybeUninit::<&mut [u8]>::uninit() }; MAX_PLANNED];
    let count = meta.num_planned_buffers();
    let Some(uninit) = slots.get_mut(..count) else {
        return fail(b"planned memory", 0x25);
    };
    for (i, slot) in uninit.iter_mut().enumerate() {
        let size = match meta.planned_buffer_size(i) {
            Ok(s) => s,
            Err(e) => return fail(b"planned memory", e.code()),
        };
        // Keep each arena 16-byte aligned.
        let split = size
            .checked_next_multiple_of(16)
            .and_then(|size| core::mem::take(&mut rest).split_at_mut_checked(size));
        let Some((head, tail)) = split else {
            return fail(b"planned memory", 0x21);
        };
        slot.write(head);
        rest = tail;
    }
    // SAFETY: the loop above wrote every one of these `count` slots (it returns on any
    // failure before the slice is formed), and `MaybeUninit<T>` has `T`'s layout.
    let planned = unsafe { &mut *(uninit as *mut [MaybeUninit<&mut [u8]>] as *mut [&mut [u8]]) };
    let mut memory = MemoryManager::new(method_pool, planned, temp_pool);
    let mut method = match program.load_method(name, &mut memory) {
        Ok(m) => m,
        Err(e) => return fail(b"load_method", e.error.code()),
    };
    for i in 0..method.num_inputs() {
        if let Ok(t) = method.input_tensor_mut(i) {
            if t.dtype() == ScalarType::Float {
                if let Ok(data) = t.data_mut::<f32>() {
                    data.fill(1.0);
                }
            }
        }
    }
    if let Err(e) = method.execute() {
        return fail(b"execute", e.error.code());
    }
    let mut elements = 0u64;
    for i in 0..method.num_outputs() {
        if let Ok(EValue::Tensor(t)) = method.output(i) {
            elements += t.numel() as u64;
        }
    }
    write(1, b"ok: ");
    write_number(1, method.num_outputs() as u64, 10);
    write(1, b" outputs, ");
    write_number(1, elements, 10);
    write(1, b" elements\n");
    0
}

/// Defines the binary's entry point around [`run`]: with `panic = "abort"` a `no_main`
/// C `main`, a panic handler and an allocator that always fails (the binary is `no_std`);
/// otherwise an ordinary `main`. Use with `#![cfg_attr(panic = "abort", no_std, no_main)]`.
#[macro_export]
macro_rules! entry {
    () => {
        #[cfg(panic = "abort")]
        mod no_std_entry {
            use core::alloc::{GlobalAlloc, Layout};

            /// The flatbuffers crate links `alloc`, though reading never allocates; an allocator
            /// that always fails satisfies the linker and proves nothing allocates.
            struct NoHeap;

            // SAFETY: `alloc` always reports failure (null), which is a valid answer; `dealloc` is
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
            fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
                // SAFETY: abort has no preconditions.
                unsafe { $crate::libc::abort() }
            }

            #[unsafe(no_mangle)]
            extern "C" fn main(
                argc: $crate::libc::c_int,
                argv: *const *const $crate::libc::c_char,
            ) -> $crate::libc::c_int {
                // SAFETY: the C runtime passes `argc` valid strings, and `main` runs once.
                unsafe { $crate::run(argc, argv) }
            }
        }

        #[cfg(not(panic = "abort"))]
        fn main() {
            let args: Vec<std::ffi::CString> = std::env::args()
                .map(|a| std::ffi::CString::new(a).expect("arguments have no NUL"))
                .collect();
            let argv: Vec<*const $crate::libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
            // SAFETY: `argv` holds `args.len()` NUL-terminated strings that outlive the call,
            // and `run` is called once.
            let code = unsafe { $crate::run(argv.len() as i32, argv.as_ptr()) };
            std::process::exit(code);
        }
    };
}
