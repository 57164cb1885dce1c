//! `size_test`: the runtime alone (program loader, method, prim ops), no kernels.
//!
//! Built with `panic = "abort"` (`cargo build --profile release-size -p size_test`) it is
//! a `no_std`, `no_main` binary over libc; in other profiles it wraps the same code in an
//! ordinary `main` so the workspace builds and tests in the default dev profile.

#![cfg_attr(panic = "abort", no_std)]
#![cfg_attr(panic = "abort", no_main)]

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
        unsafe { libc::abort() }
    }

    #[unsafe(no_mangle)]
    extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
        // SAFETY: the C runtime passes `argc` valid strings, and `main` runs once.
        unsafe { size_test::run(argc, argv) }
    }
}

#[cfg(not(panic = "abort"))]
fn main() {
    let args: Vec<std::ffi::CString> = std::env::args()
        .map(|a| std::ffi::CString::new(a).expect("arguments have no NUL"))
        .collect();
    let argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: `argv` holds `args.len()` NUL-terminated strings that outlive the call,
    // and `run` is called once.
    let code = unsafe { size_test::run(argv.len() as i32, argv.as_ptr()) };
    std::process::exit(code);
}
