//! The `Backend` implementation and its registration.

use core::fmt;
use core::mem::{align_of, size_of};
use core::ptr::NonNull;

use et_runtime::backend::{
    Backend, BackendInitContext, CompileSpec, DelegateError, DelegateHandle, KernelArgs,
    KernelContext,
};
use et_runtime::{Error, KernelError, KernelResult};
use et_xnnpack_schema::Graph;

use crate::exec;
use crate::plan::{self, Plan};

/// The XNNPACK backend. Registered as `XnnpackBackend` when this crate is linked.
#[derive(Debug)]
pub struct XnnpackBackend;

static XNNPACK: XnnpackBackend = XnnpackBackend;
et_runtime::register_backend!("XnnpackBackend", XNNPACK);

fn parse(processed: &[u8]) -> Result<Graph<'_>, DelegateError> {
    Graph::parse(processed).map_err(|e| DelegateError::new(e.error, e.reason()))
}

impl Backend for XnnpackBackend {
    fn init(
        &self,
        ctx: &BackendInitContext<'_>,
        processed: &[u8],
        _compile_specs: &[CompileSpec<'_>],
    ) -> Result<DelegateHandle, DelegateError> {
        let graph = parse(processed)?;
        // A missing key is recorded by the context, so the load error names it and the
        // data files searched.
        let named = |key: &str| ctx.require_named_data(key).ok().map(|d| d.bytes);
        let built = plan::build(ctx, &graph, &named)?;
        let p = ctx
            .allocate(size_of::<Plan>(), align_of::<Plan>())
            .map_err(|e| DelegateError::new(e, "method memory is too small for the XNNPACK plan"))?
            .cast::<Plan>();
        // SAFETY: `allocate` returned fresh memory of `Plan`'s size and alignment, valid
        // for the method's lifetime; nothing else refers to it.
        unsafe { p.write(built) };
        Ok(DelegateHandle(p.cast()))
    }

    fn method_memory(&self, processed: &[u8]) -> usize {
        // Saturating: the bound comes from the payload's unchecked sizes, and a sum past
        // `usize::MAX` is over any memory limit anyway.
        parse(processed).map_or(0, |g| {
            plan::memory_bound(&g).saturating_add(size_of::<Plan>() + align_of::<Plan>())
        })
    }

    fn execute(
        &self,
        ctx: &KernelContext<'_>,
        handle: DelegateHandle,
        args: &KernelArgs<'_>,
    ) -> KernelResult {
        exec::execute(plan(handle)?, ctx, args)
    }

    /// `Conv2d #3`: the node's kind and its number among the payload's nodes of that
    /// kind (as XNNPACK numbers its operators in ExecuTorch's profiles).
    fn step_name(
        &self,
        handle: DelegateHandle,
        index: u32,
        out: &mut dyn fmt::Write,
    ) -> Result<bool, fmt::Error> {
        let Ok(plan) = plan(handle) else {
            return Ok(false);
        };
        // SAFETY: as in `execute`: the handle points to the plan `init` built, alive
        // with the method; profiles are written while no execute runs.
        let kinds = unsafe { plan.as_ref() }.kinds();
        let Some(kind) = kinds.get(index as usize) else {
            return Ok(false);
        };
        let number = kinds[..=index as usize]
            .iter()
            .filter(|&&k| k == *kind)
            .count();
        write!(out, "{} #{number}", kind.name())?;
        Ok(true)
    }
}

fn plan(handle: DelegateHandle) -> KernelResult<NonNull<Plan>> {
    NonNull::new(handle.0.cast::<Plan>()).ok_or(KernelError::new(
        Error::InvalidState,
        "the XNNPACK delegate was not initialized",
    ))
}
