//! Panics of the `tokenizers` crate turned into errors. Its deserializers unwrap some
//! inner results, so a malformed `tokenizer.json` (a stray comma inside `decoder`) can
//! panic instead of returning an error; a bad input file must never take the host
//! process down or print a backtrace, so every call into the crate runs here.
//!
//! The message of a contained panic is kept for the error, and not printed: a panic hook,
//! installed once, stays silent for panics raised inside [`contained`] on the calling
//! thread and hands every other panic to the hook that was installed before it. Builds
//! with `panic = "abort"` cannot contain a panic; the CLI's profiles unwind.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::string::{String, ToString};
use std::sync::Once;

std::thread_local! {
    /// Whether this thread is inside [`contained`].
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic contained on this thread.
    static MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// `f()`, or the message of the panic it raised.
pub(super) fn contained<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let outer = INSIDE.with(|inside| inside.replace(true));
    // `AssertUnwindSafe`: after a panic the caller drops whatever `f` was building and
    // returns an error; nothing half-updated is used again.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|inside| inside.set(outer));
    result.map_err(|payload| {
        MESSAGE
            .with(|m| m.borrow_mut().take())
            .or_else(|| payload.downcast_ref::<&str>().map(ToString::to_string))
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("a panic without a message"))
    })
}

fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(std::boxed::Box::new(move |info| {
            if INSIDE.with(Cell::get) {
                let message = match info.payload().downcast_ref::<&str>() {
                    Some(s) => (*s).to_string(),
                    None => info
                        .payload()
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_default(),
                };
                MESSAGE.with(|m| *m.borrow_mut() = Some(message));
            } else {
                previous(info);
            }
        }));
    });
}
