//! Running a loaded method: the instruction loop and one step of it.

use super::instructions::Instr;
use super::trace::{NoTrace, Trace};
use super::Method;
use crate::error::Error;
use crate::kernel::{KernelArgs, KernelContext, Parallel};
use crate::method_error::ExecuteError;
use crate::value::Value;
use et_schema::scalar_type::ScalarType;

impl<'a> Method<'a> {
    /// Runs the method once. All inputs must have been set.
    ///
    /// What an execute may overwrite: every byte of the planned buffers (ExecuTorch's
    /// memory plan gives each intermediate, output and input tensor a place in them, and
    /// reuses a place once its last reader has run, inputs' places included), the
    /// scratch memory, and the method's own tensors that are not constants. Constants and
    /// the program's bytes are never written.
    ///
    /// So set the inputs again before the next execute, as ExecuTorch's
    /// `Module::forward` does, unless [`MethodMeta::input_is_preserved`] says the plan
    /// keeps that input: for most real models it does not (mv2's and tiny_transformer's
    /// inputs are overwritten by the first execute). Given the same inputs, every execute
    /// produces the same outputs bit for bit; outputs stay readable until the next
    /// mutable use of the method.
    ///
    /// [`MethodMeta::input_is_preserved`]: crate::MethodMeta::input_is_preserved
    pub fn execute(&mut self) -> Result<(), ExecuteError<'a>> {
        self.execute_inner(None)
    }

    /// [`execute`](Self::execute), with kernels splitting their work over `pool` (a
    /// `threads::ThreadPool` under the `threads` feature, or any
    /// [`Parallel`]): convolutions and matrix products above a size threshold run on
    /// all its workers; everything else runs on the calling thread as in `execute`.
    /// Outputs are the same as `execute`'s for the kernels that keep their summation
    /// order when split (etch's own do).
    #[cfg(feature = "parallel")]
    pub fn execute_with(&mut self, pool: &dyn Parallel) -> Result<(), ExecuteError<'a>> {
        self.execute_inner(Some(pool))
    }

    /// One instance of the untraced loop for both `execute` and `execute_with`: with a
    /// copy each, `step` had twice the call sites and stopped being inlined (3 ns more
    /// per instruction on `many_adds`).
    fn execute_inner(&mut self, pool: Option<&dyn Parallel>) -> Result<(), ExecuteError<'a>> {
        self.run(NoTrace, pool)
    }

    /// The instruction loop, with each instruction timed by `trace` (compiled away for
    /// [`NoTrace`]) and kernels given `pool` to split their work over.
    #[inline(always)]
    pub(super) fn run<T: Trace>(
        &mut self,
        trace: T,
        pool: Option<&dyn Parallel>,
    ) -> Result<(), ExecuteError<'a>> {
        for i in 0..self.num_inputs {
            // SAFETY: `i < num_inputs`, the flag array's length.
            if !unsafe { *self.input_set.as_ptr().add(i) } {
                let idx = self.io_index(self.inputs, self.num_inputs, i)?;
                // Non-tensor inputs keep their exported value and need not be set.
                // SAFETY: in range.
                if matches!(unsafe { *self.value_ptr(idx) }, Value::Tensor(_)) {
                    return Err(ExecuteError {
                        error: Error::InvalidState,
                        instruction: None,
                        operator: None,
                        message: et_schema::error::message("an input was never set"),
                    });
                }
            }
        }
        let mut budget = self.instruction_limit;
        for c in 0..self.num_chains {
            // SAFETY: `c < num_chains`.
            let chain = unsafe { *self.chains.as_ptr().add(c) };
            let mut pc = 0u32;
            while pc < chain.len {
                if budget == 0 {
                    return Err(ExecuteError {
                        error: Error::OutOfResources,
                        instruction: Some((chain.start + pc) as usize),
                        operator: None,
                        message: et_schema::error::message("instruction limit reached"),
                    });
                }
                budget -= 1;
                let index = chain.start + pc;
                // SAFETY: `index < start + len <= total instructions`.
                let instr = unsafe { *self.instrs.as_ptr().add(index as usize) };
                pc = self
                    .step(instr, c as u32, pc, trace, pool)
                    .map_err(|(error, message)| {
                        crate::et_log!(error, "execute: instruction {index}: {message} {error:?}");
                        ExecuteError {
                            error,
                            instruction: Some(index as usize),
                            operator: match instr {
                                Instr::Kernel { op, .. } if cfg!(feature = "messages") => {
                                    self.meta.operator(op as usize).ok()
                                }
                                _ => None,
                            },
                            message,
                        }
                    })?;
            }
        }
        Ok(())
    }

    /// Runs one instruction; returns the next pc within the chain.
    #[inline]
    fn step<T: Trace>(
        &mut self,
        instr: Instr,
        chain: u32,
        pc: u32,
        trace: T,
        pool: Option<&dyn Parallel>,
    ) -> Result<u32, (Error, &'static str)> {
        match instr {
            Instr::Kernel {
                function,
                args,
                len,
                params,
                prechecked,
                ..
            } => {
                // SAFETY: `args` holds `len` indices in method memory, range-checked at
                // load; the value table and every tensor/list it refers to live for 'a,
                // and `&mut self` guarantees no other access during the call. A
                // prechecked call's aliasing was proved at load and nothing in this
                // method can change it (no MoveCall, no view op).
                let result = unsafe {
                    let idx = core::slice::from_raw_parts(args.as_ptr(), len as usize);
                    let params = (params as usize).min(len as usize);
                    let kargs = KernelArgs::with_proof(self.values, idx, params, prechecked);
                    let ctx = KernelContext::new(self.temp).with_parallel(pool);
                    let start = trace.now();
                    let result = function(&ctx, &kargs);
                    trace.operator(chain, pc, start);
                    result
                };
                // SAFETY: the context and every scratch borrow ended with the call.
                unsafe { self.temp.reset_shared() };
                result.map_err(|e| (e.error, e.message()))?;
                Ok(pc + 1)
            }
            #[cfg(feature = "backends")]
            Instr::Delegate { index, args, len } => {
                // SAFETY: `index < num_delegates` (checked at load).
                let d = unsafe { *self.delegates.as_ptr().add(index as usize) };
                // SAFETY: as for kernel calls; delegate calls have no return slot.
                let result = unsafe {
                    let idx = core::slice::from_raw_parts(args.as_ptr(), len as usize);
                    let kargs = KernelArgs::new(self.values, idx, len as usize);
                    let start = trace.now();
                    let result = trace.delegate_context(self.temp, pool, chain, pc, |ctx| {
                        d.backend.backend.execute(ctx, d.handle, &kargs)
                    });
                    trace.delegate(chain, pc, start);
                    result
                };
                // SAFETY: as above.
                unsafe { self.temp.reset_shared() };
                result.map_err(|e| (e.error, e.message()))?;
                Ok(pc + 1)
            }
            Instr::Move { from, to } => {
                // SAFETY: both indices are in range; values are plain copies.
                unsafe { *self.value_ptr(to) = *self.value_ptr(from) };
                Ok(pc + 1)
            }
            Instr::JumpFalse { cond, dest } => {
                // SAFETY: in range.
                let v = unsafe { *self.value_ptr(cond) };
                let truth = match v {
                    Value::Bool(b) => b,
                    Value::Tensor(t) => {
                        // SAFETY: tensors live in method memory; no kernel is running.
                        let t = unsafe { t.as_ref() };
                        if t.dtype() != ScalarType::Bool {
                            return Err((
                                Error::InvalidProgram,
                                "jump condition is not a bool tensor",
                            ));
                        }
                        // A bool is one byte, true when non-zero (as `Bool::get`); the
                        // bytes need no element view (Tensor::bytes is shared code).
                        let data = t.bytes().map_err(|e| (e.error, e.message()))?;
                        data.iter().all(|&b| b != 0)
                    }
                    _ => return Err((Error::InvalidProgram, "jump condition is not a bool")),
                };
                Ok(if truth { pc + 1 } else { dest })
            }
            Instr::Free { value } => {
                // Planned memory is reused by the plan itself; freeing only validates.
                // SAFETY: in range.
                match unsafe { *self.value_ptr(value) } {
                    Value::Tensor(_) => Ok(pc + 1),
                    _ => Err((Error::InvalidProgram, "free of a non-tensor value")),
                }
            }
        }
    }
}
