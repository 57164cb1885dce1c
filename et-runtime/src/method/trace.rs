//! How the instruction loop is timed: not at all ([`NoTrace`], what `execute` uses), or
//! into an [`EventTracer`] (`execute_traced`, with the `etdump` feature). The loop is
//! generic over [`Trace`], so the untraced loop is the same code as before tracing
//! existed: every hook of `NoTrace` is empty and inlined away.

#[cfg(feature = "backends")]
use crate::kernel::{KernelContext, Parallel};
#[cfg(feature = "backends")]
use crate::memory::Arena;

/// The loop's timing hooks.
pub(super) trait Trace: Copy {
    /// A timestamp, for the end hooks.
    fn now(self) -> u64;
    /// KernelCall `pc` of `chain`, begun at `start`, has returned.
    fn operator(self, chain: u32, pc: u32, start: u64);
    /// DelegateCall `pc` of `chain`, begun at `start`, has returned.
    #[cfg(feature = "backends")]
    fn delegate(self, chain: u32, pc: u32, start: u64);
    /// Runs `call` with the context a delegate gets (one that records its steps when
    /// traced, and splits work over `pool`).
    #[cfg(feature = "backends")]
    fn delegate_context<'a, R>(
        self,
        temp: &'a Arena<'a>,
        pool: Option<&'a dyn Parallel>,
        chain: u32,
        pc: u32,
        call: impl FnOnce(&KernelContext<'_>) -> R,
    ) -> R;
}

/// No timing.
#[derive(Clone, Copy)]
pub(super) struct NoTrace;

impl Trace for NoTrace {
    #[inline(always)]
    fn now(self) -> u64 {
        0
    }

    #[inline(always)]
    fn operator(self, _: u32, _: u32, _: u64) {}

    #[cfg(feature = "backends")]
    #[inline(always)]
    fn delegate(self, _: u32, _: u32, _: u64) {}

    #[cfg(feature = "backends")]
    #[inline(always)]
    fn delegate_context<'a, R>(
        self,
        temp: &'a Arena<'a>,
        pool: Option<&'a dyn Parallel>,
        _: u32,
        _: u32,
        call: impl FnOnce(&KernelContext<'_>) -> R,
    ) -> R {
        call(&KernelContext::new(temp).with_parallel(pool))
    }
}

#[cfg(feature = "etdump")]
mod traced {
    use super::super::instructions::Instr;
    use super::super::Method;
    use super::Trace;
    use crate::backend::Backend;
    use crate::backend::DelegateHandle;
    use crate::etdump::{EventKind, EventTracer};
    #[cfg(feature = "backends")]
    use crate::kernel::KernelContext;
    use crate::kernel::Parallel;
    #[cfg(feature = "backends")]
    use crate::memory::Arena;
    use crate::memory::MemoryManager;
    use crate::method_error::{ExecuteError, LoadError};
    use crate::program::Program;
    use et_schema::OperatorName;

    /// Timing into a tracer.
    #[derive(Clone, Copy)]
    pub(in super::super) struct Traced<'t, 'b>(pub(in super::super) &'t EventTracer<'b>);

    impl Trace for Traced<'_, '_> {
        #[inline(always)]
        fn now(self) -> u64 {
            self.0.now()
        }

        #[inline(always)]
        fn operator(self, chain: u32, pc: u32, start: u64) {
            self.0
                .record_instruction(EventKind::Operator, chain, pc, start);
        }

        #[cfg(feature = "backends")]
        #[inline(always)]
        fn delegate(self, chain: u32, pc: u32, start: u64) {
            self.0
                .record_instruction(EventKind::Delegate, chain, pc, start);
        }

        #[cfg(feature = "backends")]
        #[inline(always)]
        fn delegate_context<'a, R>(
            self,
            temp: &'a Arena<'a>,
            pool: Option<&'a dyn Parallel>,
            chain: u32,
            pc: u32,
            call: impl FnOnce(&KernelContext<'_>) -> R,
        ) -> R {
            self.0.enter_delegate(chain, pc);
            call(&KernelContext::traced(temp, self.0).with_parallel(pool))
        }
    }

    impl<'d> Program<'d> {
        /// [`load_method`](Self::load_method), recording the load (`Program::load_method`)
        /// and the method's construction (`Method::init`) in `tracer`.
        pub fn load_method_traced<'a>(
            &'a self,
            name: &str,
            memory: &'a mut MemoryManager<'_>,
            tracer: &EventTracer<'_>,
        ) -> Result<Method<'a>, LoadError<'a>>
        where
            'd: 'a,
        {
            let start = tracer.now();
            let method = self.load_method(name, memory);
            // The build is the whole of a load but for resetting the method memory, so
            // both spans cover it; ExecuTorch's Inspector expects both.
            tracer.record_span(EventKind::MethodInit, start);
            tracer.record_span(EventKind::LoadMethod, start);
            method
        }
    }

    impl<'a> Method<'a> {
        /// [`execute`](Self::execute), recording in `tracer` a span for each KernelCall
        /// and DelegateCall (with the instruction's chain and index, as ExecuTorch
        /// numbers them), each step a delegate reports, and the execute as a whole, which
        /// ends the run. Each record costs two clock reads and one store into the
        /// tracer's buffer.
        pub fn execute_traced(&mut self, tracer: &EventTracer<'_>) -> Result<(), ExecuteError<'a>> {
            self.execute_traced_inner(tracer, None)
        }

        /// [`execute_traced`](Self::execute_traced) with kernels splitting their work
        /// over `pool`, as in [`execute_with`](Self::execute_with). A split kernel's
        /// span covers the whole call, its tasks on every thread.
        #[cfg(feature = "parallel")]
        pub fn execute_traced_with(
            &mut self,
            tracer: &EventTracer<'_>,
            pool: &dyn Parallel,
        ) -> Result<(), ExecuteError<'a>> {
            self.execute_traced_inner(tracer, Some(pool))
        }

        fn execute_traced_inner(
            &mut self,
            tracer: &EventTracer<'_>,
            pool: Option<&dyn Parallel>,
        ) -> Result<(), ExecuteError<'a>> {
            let start = tracer.now();
            let result = self.run(Traced(tracer), pool);
            tracer.record_span(EventKind::Execute, start);
            result
        }

        /// The operator KernelCall `pc` of `chain` calls (`aten::add.out`), if it is one.
        pub fn instruction_operator(&self, chain: u32, pc: u32) -> Option<OperatorName<'a>> {
            match self.instruction(chain, pc)? {
                Instr::Kernel { op, .. } => self.meta.operator(op as usize).ok(),
                _ => None,
            }
        }

        /// The backend id (`XnnpackBackend`) DelegateCall `pc` of `chain` runs, if it is one.
        pub fn instruction_backend(&self, chain: u32, pc: u32) -> Option<&'static str> {
            self.delegate_at(chain, pc).map(|(name, _, _)| name)
        }

        /// Writes the name the delegate of DelegateCall `pc` of `chain` gives its step
        /// `index` ([`Backend::step_name`]); `Ok(false)` if it has none.
        pub fn delegate_step_name(
            &self,
            chain: u32,
            pc: u32,
            index: u32,
            out: &mut dyn core::fmt::Write,
        ) -> Result<bool, core::fmt::Error> {
            match self.delegate_at(chain, pc) {
                Some((_, backend, handle)) => backend.step_name(handle, index, out),
                None => Ok(false),
            }
        }

        fn delegate_at(
            &self,
            chain: u32,
            pc: u32,
        ) -> Option<(&'static str, &'static dyn Backend, DelegateHandle)> {
            match self.instruction(chain, pc)? {
                #[cfg(feature = "backends")]
                Instr::Delegate { index, .. } if (index as usize) < self.num_delegates => {
                    // SAFETY: `index < num_delegates`.
                    let d = unsafe { *self.delegates.as_ptr().add(index as usize) };
                    Some((d.backend.name, d.backend.backend, d.handle))
                }
                _ => None,
            }
        }
    }
}
