//! A method's delegates: initialized through the backend registry at load, released when
//! the method drops. Checked here: every delegate names a registered, available backend,
//! and that backend accepts its payload and compile specs.

use core::cell::Cell;
use core::fmt;
use core::ptr::NonNull;

use super::build::{Builder, Plan};
use crate::backend::{
    find_backend, BackendEntry, BackendInitContext, CompileSpec, DelegateError, DelegateHandle,
};
use crate::error::Error;
use crate::method_error::{note, LoadDetail};
use crate::program::{Table, Vector};
use et_schema::fields as fb;

/// An initialized delegate: its backend and the handle the backend gave it.
#[derive(Clone, Copy)]
pub(super) struct Delegate {
    pub(super) backend: &'static BackendEntry,
    pub(super) handle: DelegateHandle,
}

impl<'a> Builder<'a, '_> {
    /// Initializes every delegate in order. If one fails, those already initialized are
    /// released: the method that would own them is never built.
    pub(super) fn init_delegates(&self) -> Result<(NonNull<Delegate>, usize), Error> {
        let list = self.meta.list(Plan::VT_DELEGATES).unwrap_or(Vector::EMPTY);
        let n = list.len();
        if !cfg!(feature = "backends") && n > 0 {
            // No backend can be registered: the first delegate's backend is missing.
            return Err(self
                .init_delegate(0, list.table(0))
                .err()
                .unwrap_or(Error::NotFound));
        }
        let storage = self.arena.alloc_array::<Delegate>(n)?;
        for count in 0..n {
            match self.init_delegate(count, list.table(count)) {
                // SAFETY: `count < n`, inside the allocation made above.
                Ok(delegate) => unsafe { storage.as_ptr().add(count).write(delegate) },
                Err(e) => {
                    // SAFETY: entries 0..count were written above.
                    unsafe { destroy_delegates(storage, count) };
                    return Err(e);
                }
            }
        }
        Ok((storage, n))
    }

    #[cfg_attr(not(etch_size_first), inline(never))]
    fn init_delegate(&self, index: usize, d: Option<Table<'a>>) -> Result<Delegate, Error> {
        let d = d.ok_or(Error::InvalidProgram)?;
        let id = d.string(fb::BackendDelegate::VT_ID).unwrap_or("");
        let Some(backend) = find_backend(id).filter(|b| b.backend.is_available()) else {
            let detail = LoadDetail::MissingBackend { id };
            return Err(note(self.detail, Error::NotFound, detail));
        };
        let request = DelegateInit {
            builder: self,
            index,
            delegate: d,
            backend,
            id,
        };
        let handle = (backend.init)(&request)?;
        Ok(Delegate { backend, handle })
    }
}

/// One delegate to initialize, with the backend registered for it: what
/// [`init_delegate`] needs, opaque outside this module.
#[doc(hidden)]
pub struct DelegateInit<'s, 'a, 'c> {
    builder: &'s Builder<'a, 'c>,
    index: usize,
    delegate: Table<'a>,
    backend: &'static BackendEntry,
    id: &'a str,
}

impl fmt::Debug for DelegateInit<'_, '_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegateInit")
            .field("index", &self.index)
            .field("backend", &self.id)
            .finish_non_exhaustive()
    }
}

/// How a registered backend's delegates are initialized: `register_backend!` stores
/// [`init_delegate`] in each [`BackendEntry`]. Called through this pointer, the code that
/// reads payloads and compile specs and reports a backend's failure is linked only into
/// binaries that register a backend (called directly, every binary that loads methods
/// would carry it, even those that link none, like `size_test`).
pub type InitDelegateFn =
    for<'s, 'a, 'c> fn(&DelegateInit<'s, 'a, 'c>) -> Result<DelegateHandle, Error>;

/// Initializes `r.delegate` with `r.backend`: reads its payload and compile specs into
/// method memory and calls the backend's `init`; a refusal becomes the load error's
/// detail (the backend's message and node, or the named data it found missing).
pub fn init_delegate(r: &DelegateInit<'_, '_, '_>) -> Result<DelegateHandle, Error> {
    type D<'x> = fb::BackendDelegate<'x>;
    let (b, d) = (r.builder, r.delegate);
    let ctx = BackendInitContext {
        allocator: b.arena,
        method_name: b.meta.name(),
        named_data: b.named,
        backend_id: r.id,
        failure: Cell::new(LoadDetail::None),
    };
    let init = || -> Result<DelegateHandle, DelegateError> {
        let processed = d.table(D::VT_PROCESSED).ok_or(Error::InvalidProgram)?;
        let payload = b.program.delegate_payload(processed)?;
        let specs_fb = d.vector(D::VT_COMPILE_SPECS).unwrap_or(Vector::EMPTY);
        let n = specs_fb.len();
        let specs = b.arena.alloc_array::<CompileSpec<'_>>(n)?;
        for k in 0..n {
            let s = specs_fb.table(k);
            let spec = CompileSpec {
                key: s
                    .and_then(|s| s.string(fb::CompileSpec::VT_KEY))
                    .unwrap_or(""),
                value: s
                    .and_then(|s| s.bytes(fb::CompileSpec::VT_VALUE))
                    .unwrap_or(&[]),
            };
            // SAFETY: `k < n`, the array's length.
            unsafe { specs.as_ptr().add(k).write(spec) };
        }
        // SAFETY: all `n` entries were written above, in method memory valid for 'a.
        let specs = unsafe { core::slice::from_raw_parts(specs.as_ptr(), n) };
        r.backend.backend.init(&ctx, payload, specs)
    };
    init().map_err(|e| {
        let detail = match ctx.failure.get() {
            LoadDetail::None => LoadDetail::BackendInit {
                id: r.id,
                delegate: r.index,
                message: e.message,
                node: e.node,
            },
            missing => missing,
        };
        note(b.detail, e.error, detail)
    })
}

/// Releases delegates `0..count` of `delegates`.
///
/// # Safety
/// The first `count` entries must be initialized delegates, each released only once.
pub(super) unsafe fn destroy_delegates(delegates: NonNull<Delegate>, count: usize) {
    // Without backends no delegate was ever initialized.
    if !cfg!(feature = "backends") {
        return;
    }
    for k in 0..count {
        // SAFETY: `k < count`, an initialized entry (caller).
        let d = unsafe { *delegates.as_ptr().add(k) };
        d.backend.backend.destroy(d.handle);
    }
}
