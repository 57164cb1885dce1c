//! The size-test program, shared by `size_test` (no kernels), `size_test_all_ops` (every
//! et-ops kernel) and `size_test_mv2` (kernels selected for MobileNetV2): map a `.pte`
//! file, load the program and its first method into static pools, set float inputs to
//! ones, execute, read the outputs.
//!
//! It reaches the OS only through libc (`open`, `fstat`, `mmap`, `write`) and never
//! formats text with `core::fmt`: messages are static strings and numbers are printed
//! by a small routine, so the binary measures the runtime, not a formatting library.
//! With `panic = "abort"` (the `release-size` profile) the binaries are `no_std`.

#![no_std]

use core::cell::UnsafeCell;

use et_runtime::{BufferLoader, EValue, MemoryManager, Program, ScalarType};

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

/// Writes `n` in decimal.
pub fn write_number(fd: i32, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    write(fd, &digits[i..]);
}

fn fail(message: &[u8], code: u32) -> i32 {
    write(2, b"size_test: ");
    write(2, message);
    write(2, b" (error 0x");
    let hex = b"0123456789abcdef";
    write(
        2,
        &[hex[(code >> 4 & 15) as usize], hex[(code & 15) as usize]],
    );
    write(2, b")\n");
    1
}

/// Maps `path` (a NUL-terminated C string) read-only; `None` on any failure.
///
/// # Safety
/// `path` must point to a NUL-terminated string.
unsafe fn map_file(path: *const libc::c_char) -> Option<&'static [u8]> {
    // SAFETY: `path` is NUL-terminated (caller); the flags are plain constants.
    let fd = unsafe { libc::open(path, libc::O_RDONLY) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `stat` is plain old data; all-zero is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: `fd` is open and `st` is writable.
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    let len = st.st_size as usize;
    if !ok || len == 0 {
        // SAFETY: `fd` is open.
        unsafe { libc::close(fd) };
        return None;
    }
    // SAFETY: a fresh private read-only mapping of an open file; the result is checked.
    let ptr = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            fd,
            0,
        )
    };
    // SAFETY: `fd` is open; the mapping stays valid after closing it.
    unsafe { libc::close(fd) };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the mapping is `len` readable bytes that are never unmapped or written
    // (the process exits when done), so a 'static shared slice is sound.
    Some(unsafe { core::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

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
    // SAFETY: `argc >= 2`, so `argv[1]` exists and is NUL-terminated (caller).
    let Some(bytes) = (unsafe { map_file(*argv.add(1)) }) else {
        write(2, b"size_test: cannot read the program file\n");
        return 1;
    };
    let loader = match BufferLoader::new(bytes) {
        Ok(l) => l,
        Err(e) => return fail(b"program data is misaligned", e.code()),
    };
    let program = match Program::load(&loader) {
        Ok(p) => p,
        Err(e) => return fail(b"cannot load the program", e.error.code()),
    };
    let name = match program.method_name(0) {
        Ok(n) => n,
        Err(e) => return fail(b"the program has no method", e.code()),
    };
    let meta = match program.method_meta(name) {
        Ok(m) => m,
        Err(e) => return fail(b"bad method metadata", e.code()),
    };

    // Carve the planned arenas out of one static pool.
    // SAFETY: `run` is called once, so each pool is taken once.
    let (method_pool, mut rest, temp_pool) =
        unsafe { (METHOD_POOL.take(), PLANNED_POOL.take(), TEMP_POOL.take()) };
    let mut planned: [&mut [u8]; MAX_PLANNED] = Default::default();
    let count = meta.num_planned_buffers();
    if count > MAX_PLANNED {
        return fail(b"too many planned buffers", 0x25);
    }
    for (i, slot) in planned.iter_mut().take(count).enumerate() {
        let size = match meta.planned_buffer_size(i) {
            Ok(s) => s,
            Err(e) => return fail(b"bad planned buffer size", e.code()),
        };
        // Keep each arena 16-byte aligned.
        let size = (size + 15) & !15;
        if size > rest.len() {
            return fail(b"planned memory pool too small", 0x21);
        }
        let (head, tail) = core::mem::take(&mut rest).split_at_mut(size);
        *slot = head;
        rest = tail;
    }
    let mut memory = MemoryManager::new(method_pool, &mut planned[..count], temp_pool);
    let mut method = match program.load_method(name, &mut memory) {
        Ok(m) => m,
        Err(e) => return fail(b"cannot load the method", e.error.code()),
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
        return fail(b"execute failed", e.error.code());
    }
    let mut elements = 0u64;
    for i in 0..method.num_outputs() {
        if let Ok(EValue::Tensor(t)) = method.output(i) {
            elements += t.numel() as u64;
        }
    }
    write(1, b"ok: ");
    write_number(1, method.num_outputs() as u64);
    write(1, b" outputs, ");
    write_number(1, elements);
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
            extern "C" fn main(argc: $crate::libc::c_int, argv: *const *const $crate::libc::c_char) -> $crate::libc::c_int {
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
