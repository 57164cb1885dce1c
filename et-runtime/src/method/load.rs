//! `Program::load_method` and the build driver: the order in which a method's parts are
//! built in caller memory. The checks live with what they check (see the `method` docs);
//! the one made here is that the method exists.

use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr::NonNull;

use super::build::{Builder, Plan};
use super::tensors::planned_buffers;
use super::{Method, DEFAULT_INSTRUCTION_LIMIT};
use crate::error::Error;
use crate::memory::{Arena, MemoryManager};
use crate::method_error::{note, LoadDetail, LoadError};
use crate::program::Program;

impl<'d> Program<'d> {
    /// Loads method `name` into `memory`: builds its values, resolves every KernelCall
    /// against the kernel registry (reporting all missing kernels), checks each call's
    /// arguments against its kernel's declared kinds, and initializes delegates.
    ///
    /// Allocates nothing on the heap: all state goes into `memory`.
    pub fn load_method<'a>(
        &'a self,
        name: &str,
        memory: &'a mut MemoryManager<'_>,
    ) -> Result<Method<'a>, LoadError<'a>>
    where
        'd: 'a,
    {
        let detail = Cell::new(LoadDetail::None);
        // The manager is borrowed exclusively, so no method built in it earlier is alive:
        // its method memory can be reused from the start.
        memory.method.reset();
        match build_method(self, name, shorten(memory), &detail) {
            Ok(method) => {
                crate::et_log!(
                    info,
                    "loaded method {name}: {} values, {} chains",
                    method.num_values,
                    method.num_chains
                );
                Ok(method)
            }
            Err(error) => {
                let detail = detail.get();
                crate::et_log!(error, "load_method({name}): {error:?}, {detail:?}");
                Err(LoadError { error, detail })
            }
        }
    }
}

/// Narrows the memory manager's lifetime to the method's borrow.
fn shorten<'a, 'b: 'a>(m: &'a mut MemoryManager<'b>) -> &'a mut MemoryManager<'a> {
    // SAFETY: `MemoryManager<'b>` only holds borrows valid for 'b, which outlives 'a; a
    // manager usable for 'b is usable for the shorter 'a. The cast is needed because
    // `&mut [&'b mut [u8]]` is invariant in 'b. Nothing shorter-lived can be written into
    // the manager through the result: the method never stores into `planned`.
    unsafe { &mut *(m as *mut MemoryManager<'b>).cast::<MemoryManager<'a>>() }
}

/// The body of [`Program::load_method`]: errors are plain codes here, and the failure
/// points that know more record it in `detail`.
fn build_method<'a>(
    program: &'a Program<'a>,
    name: &str,
    mm: &'a mut MemoryManager<'a>,
    detail: &Cell<LoadDetail<'a>>,
) -> Result<Method<'a>, Error> {
    let meta = match program.method_meta(name) {
        Ok(m) => m,
        Err(Error::InvalidArgument) => {
            return Err(note(
                detail,
                Error::InvalidArgument,
                LoadDetail::NoSuchMethod,
            ))
        }
        Err(e) => return Err(e),
    };
    let MemoryManager {
        method: arena,
        planned,
        temp,
    } = mm;
    let arena: &'a Arena<'a> = arena;
    let b = Builder {
        program,
        meta,
        named: program.named_data(),
        arena,
        planned: planned_buffers(&meta, arena, planned, detail)?,
        values: NonNull::dangling(),
        num_values: 0,
        detail,
    };
    b.build(temp)
}

impl<'a> Builder<'a, '_> {
    /// Builds the parts in dependency order: values (and their tensors), the input and
    /// output lists, delegates (instructions name them), then the instructions, whose
    /// checks read all of the above.
    fn build(mut self, temp: &'a Arena<'a>) -> Result<Method<'a>, Error> {
        let arena = self.arena;
        let meta = self.meta;
        self.build_values()?;
        let (inputs, num_inputs) = self.io_list(Plan::VT_INPUTS)?;
        let (outputs, num_outputs) = self.io_list(Plan::VT_OUTPUTS)?;
        let (delegates, num_delegates) = self.init_delegates()?;
        let mut method = Method {
            meta,
            values: self.values,
            num_values: self.num_values,
            instrs: NonNull::dangling(),
            chains: NonNull::dangling(),
            num_chains: 0,
            inputs,
            num_inputs,
            outputs,
            num_outputs,
            input_set: NonNull::dangling(),
            delegates,
            num_delegates,
            temp,
            instruction_limit: DEFAULT_INSTRUCTION_LIMIT,
            _memory: PhantomData,
        };
        // From here on, dropping `method` on error releases the delegates.
        method.input_set = arena.alloc_zeroed(num_inputs)?;
        (method.instrs, method.chains, method.num_chains) =
            self.build_instructions(num_delegates)?;
        #[cfg(feature = "rewrite")]
        if !super::rewrite::rules().is_empty() {
            // SAFETY: the instruction table and its chains were just built over the value
            // table, nothing else refers to them, and the kernels' scratch holds nothing
            // between calls.
            unsafe {
                let chains = core::slice::from_raw_parts(method.chains.as_ptr(), method.num_chains);
                super::rewrite::run_rules(super::rewrite::Built {
                    meta,
                    values: self.values,
                    num_values: self.num_values,
                    arena,
                    scratch: temp,
                    instrs: method.instrs,
                    total: meta.num_instructions(),
                    chains,
                });
            }
        }
        Ok(method)
    }
}
