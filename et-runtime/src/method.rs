//! `Method`: a method's values and instructions built in caller memory, and execution.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::backend::{find_backend, BackendEntry, BackendInitContext, CompileSpec, DelegateHandle};
use crate::error::Error;
use crate::kernel::{ArgKind, KernelArgs, KernelContext, KernelFn, ReturnKind};
use crate::memory::{Arena, MemoryManager};
use crate::program::{MethodMeta, OperatorName, Program, TensorInfo};
use crate::scalar_type::{Bool, ScalarType};
use crate::schema::fb;
use crate::tensor::{ShapeDynamism, ShapeStorage, Tensor};
use crate::value::{BoxedList, EValue, Tag, Value, NONE_INDEX};

/// ExecuTorch's default limit on instructions executed by one `execute` call.
pub const DEFAULT_INSTRUCTION_LIMIT: u64 = 10_000_000;

#[derive(Clone, Copy)]
enum Instr {
    Kernel {
        function: KernelFn,
        args: NonNull<u32>,
        len: u32,
        params: u32,
        op: u32,
    },
    Delegate {
        index: u32,
        args: NonNull<u32>,
        len: u32,
    },
    Move {
        from: u32,
        to: u32,
    },
    JumpFalse {
        cond: u32,
        dest: u32,
    },
    Free {
        value: u32,
    },
}

#[derive(Clone, Copy)]
struct Chain {
    start: u32,
    len: u32,
}

#[derive(Clone, Copy)]
struct Delegate {
    backend: &'static BackendEntry,
    handle: DelegateHandle,
}

/// Why `load_method` failed: the code plus what, and where.
#[derive(Clone, Copy, Debug)]
pub struct LoadError<'d> {
    /// ExecuTorch's error code.
    pub error: Error,
    /// What was wrong, and where.
    pub detail: LoadDetail<'d>,
}

/// The specifics of a [`LoadError`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum LoadDetail<'d> {
    /// Nothing more specific is known.
    None,
    /// No method has this name.
    NoSuchMethod,
    /// Value `index` of the value table is malformed or does not fit in memory.
    Value {
        /// Index in the value table.
        index: usize,
    },
    /// Instruction `index` is malformed.
    Instruction {
        /// Instruction index (chains concatenated).
        index: usize,
    },
    /// Some kernel calls have no registered kernel. Use [`MethodMeta::missing_kernels`]
    /// to list all of them with their kernel keys.
    MissingKernels {
        /// How many calls are unserved.
        count: usize,
        /// The instruction of the first unserved call.
        first_instruction: usize,
        /// Its operator.
        first_operator: OperatorName<'d>,
    },
    /// A kernel's declared parameter count does not match the call.
    ArgumentCount {
        /// Instruction index.
        instruction: usize,
        /// The operator.
        operator: OperatorName<'d>,
        /// Values the kernel takes (parameters plus return slot).
        expected: usize,
        /// Values the program passes.
        found: usize,
    },
    /// A value passed to a kernel has the wrong kind.
    ArgumentKind {
        /// Instruction index.
        instruction: usize,
        /// The operator.
        operator: OperatorName<'d>,
        /// Parameter position (0-based, after the context).
        position: usize,
        /// What the kernel declares.
        expected: ArgKind,
        /// What the program passes.
        found: Tag,
    },
    /// A delegate names a backend that is not registered (or not available).
    MissingBackend {
        /// The backend id.
        id: &'d str,
    },
    /// A backend failed to initialize its delegate.
    BackendInit {
        /// The backend id.
        id: &'d str,
    },
    /// Fewer planned buffers than the method needs, or one too small.
    PlannedBuffer {
        /// Buffer index.
        index: usize,
        /// Bytes the method needs.
        required: usize,
        /// Bytes provided (0 when missing).
        provided: usize,
    },
}

impl<'d> LoadError<'d> {
    fn new(error: Error, detail: LoadDetail<'d>) -> Self {
        LoadError { error, detail }
    }
}

impl From<Error> for LoadError<'_> {
    fn from(error: Error) -> Self {
        LoadError {
            error,
            detail: LoadDetail::None,
        }
    }
}

impl fmt::Display for LoadError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail {
            LoadDetail::None => write!(f, "{}", self.error),
            LoadDetail::NoSuchMethod => write!(f, "no method with that name: {}", self.error),
            LoadDetail::Value { index } => write!(f, "value {index} is malformed or does not fit: {}", self.error),
            LoadDetail::Instruction { index } => write!(f, "instruction {index} is malformed: {}", self.error),
            LoadDetail::MissingKernels { count, first_instruction, first_operator } => write!(
                f,
                "{count} kernel call(s) have no registered kernel (for their operator and dtypes), first {first_operator} at instruction {first_instruction}: {}",
                self.error
            ),
            LoadDetail::ArgumentCount { instruction, operator, expected, found } => write!(
                f,
                "instruction {instruction}: {operator} is called with {found} values but its kernel takes {expected}: {}",
                self.error
            ),
            LoadDetail::ArgumentKind { instruction, operator, position, expected, found } => write!(
                f,
                "instruction {instruction}: argument {position} of {operator} should be {} but the program passes a {found}: {}",
                expected.describe(),
                self.error
            ),
            LoadDetail::MissingBackend { id } => {
                write!(f, "backend {id} is not registered in this binary: {}", self.error)
            }
            LoadDetail::BackendInit { id } => write!(f, "backend {id} failed to initialize: {}", self.error),
            LoadDetail::PlannedBuffer { index, required, provided } => write!(
                f,
                "planned buffer {index} needs {required} bytes but {provided} were provided: {}",
                self.error
            ),
        }
    }
}

impl core::error::Error for LoadError<'_> {}

/// Why `execute` failed: the code, the instruction, and the operator when it was a kernel.
#[derive(Clone, Copy, Debug)]
pub struct ExecuteError<'d> {
    /// ExecuTorch's error code.
    pub error: Error,
    /// The failing instruction (chains concatenated), if any.
    pub instruction: Option<usize>,
    /// The operator of a failing KernelCall.
    pub operator: Option<OperatorName<'d>>,
    /// The kernel's explanation (may be empty).
    pub message: &'static str,
}

impl fmt::Display for ExecuteError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.instruction {
            write!(f, "instruction {i}")?;
            if let Some(op) = self.operator {
                write!(f, " ({op})")?;
            }
            f.write_str(": ")?;
        }
        if !self.message.is_empty() {
            write!(f, "{}: ", self.message)?;
        }
        write!(f, "{}", self.error)
    }
}

impl core::error::Error for ExecuteError<'_> {}

impl<'d> From<Error> for ExecuteError<'d> {
    fn from(error: Error) -> Self {
        ExecuteError {
            error,
            instruction: None,
            operator: None,
            message: "",
        }
    }
}

/// A loaded method, ready to take inputs and execute. Lives in the memory given to
/// [`Program::load_method`]; dropping it releases its delegates.
pub struct Method<'a> {
    meta: MethodMeta<'a>,
    values: NonNull<Value>,
    num_values: usize,
    instrs: NonNull<Instr>,
    chains: NonNull<Chain>,
    num_chains: usize,
    inputs: NonNull<u32>,
    num_inputs: usize,
    outputs: NonNull<u32>,
    num_outputs: usize,
    input_set: NonNull<bool>,
    delegates: NonNull<Delegate>,
    num_delegates: usize,
    temp: &'a Arena<'a>,
    instruction_limit: u64,
    _memory: PhantomData<&'a mut [u8]>,
}

// SAFETY: every pointer in a `Method` refers to memory exclusively borrowed for 'a from
// the caller's `MemoryManager` (value table, tensors, planned buffers, scratch) or to the
// program's immutable data, which is `Sync`. Nothing is tied to the loading thread;
// backends promise thread-agnostic handles (`Backend` docs).
unsafe impl Send for Method<'_> {}

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
        let plan = self
            .plan(name)
            .map_err(|e| LoadError::new(e, LoadDetail::NoSuchMethod))?;
        let meta = self.method_meta(name)?;
        let mm: &'a mut MemoryManager<'a> = shorten(memory);
        let MemoryManager {
            method,
            planned,
            temp,
        } = mm;
        let method: &'a Arena<'a> = method;
        let planned: &'a mut [&'a mut [u8]] = planned;

        // Planned buffers: check sizes up front for a clear message.
        let needed = meta.num_planned_buffers();
        for i in 0..needed {
            let required = meta.planned_buffer_size(i)?;
            let provided = planned.get(i).map_or(0, |b| b.len());
            if provided < required {
                return Err(LoadError::new(
                    Error::MemoryAllocationFailed,
                    LoadDetail::PlannedBuffer {
                        index: i,
                        required,
                        provided,
                    },
                ));
            }
        }
        // Raw views of the planned buffers; the `&mut` borrows are not used again.
        let planned_raw = method.alloc_slice::<(usize, usize)>(planned.len(), (0, 0))?;
        for (slot, buf) in planned_raw.iter_mut().zip(planned.iter_mut()) {
            *slot = (buf.as_mut_ptr() as usize, buf.len());
        }
        let planned_raw: &[(usize, usize)] = planned_raw;

        let builder = Builder {
            program: self,
            plan,
            meta,
            arena: method,
            planned: planned_raw,
        };
        let values = builder.build_values()?;
        let (inputs, num_inputs) = builder.io_list(plan.inputs(), values.1)?;
        let (outputs, num_outputs) = builder.io_list(plan.outputs(), values.1)?;
        builder.back_unplanned_io(values.0, inputs, num_inputs)?;
        builder.back_unplanned_io(values.0, outputs, num_outputs)?;
        let (delegates, num_delegates) = builder.init_delegates(meta.name())?;
        let mut method_obj = Method {
            meta,
            values: values.0,
            num_values: values.1,
            instrs: NonNull::dangling(),
            chains: NonNull::dangling(),
            num_chains: 0,
            inputs,
            num_inputs,
            outputs,
            num_outputs,
            input_set: method
                .alloc_slice(num_inputs, false)
                .map(|s| NonNull::from(s).cast())?,
            delegates,
            num_delegates,
            temp,
            instruction_limit: DEFAULT_INSTRUCTION_LIMIT,
            _memory: PhantomData,
        };
        // From here on, dropping `method_obj` on error releases the delegates.
        let (instrs, chains, num_chains) =
            builder.build_instructions(values.0, values.1, num_delegates)?;
        method_obj.instrs = instrs;
        method_obj.chains = chains;
        method_obj.num_chains = num_chains;
        Ok(method_obj)
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

struct Builder<'a> {
    program: &'a Program<'a>,
    plan: fb::ExecutionPlan<'a>,
    meta: MethodMeta<'a>,
    arena: &'a Arena<'a>,
    planned: &'a [(usize, usize)],
}

fn in_range(index: i64, n: usize) -> Option<u32> {
    if index >= 0 && (index as u64) < n as u64 {
        Some(index as u32)
    } else {
        None
    }
}

impl<'a> Builder<'a> {
    fn build_values(&self) -> Result<(NonNull<Value>, usize), LoadError<'a>> {
        let fb_values = self.plan.values().ok_or(Error::InvalidProgram)?;
        let n = fb_values.len();
        if n >= u32::MAX as usize {
            return Err(Error::InvalidProgram.into());
        }
        let values = self.arena.alloc_slice(n, Value::None)?;
        for (i, ev) in fb_values.iter().enumerate() {
            let bad = |e: Error| LoadError::new(e, LoadDetail::Value { index: i });
            values[i] = self.build_value(ev, n).map_err(bad)?;
        }
        Ok((NonNull::from(values).cast(), n))
    }

    fn build_value(&self, ev: fb::EValue<'a>, n: usize) -> Result<Value, Error> {
        let arena = self.arena;
        Ok(match ev.val_type() {
            fb::KernelTypes::Null => Value::None,
            fb::KernelTypes::Int => {
                Value::Int(ev.val_as_int().ok_or(Error::InvalidProgram)?.int_val())
            }
            fb::KernelTypes::Bool => {
                Value::Bool(ev.val_as_bool().ok_or(Error::InvalidProgram)?.bool_val())
            }
            fb::KernelTypes::Double => Value::Double(
                ev.val_as_double()
                    .ok_or(Error::InvalidProgram)?
                    .double_val(),
            ),
            fb::KernelTypes::String => {
                let s = ev
                    .val_as_string()
                    .ok_or(Error::InvalidProgram)?
                    .string_val()
                    .unwrap_or("");
                Value::String(NonNull::from(s.as_bytes()).cast(), s.len())
            }
            fb::KernelTypes::Tensor => {
                let t = ev.val_as_tensor().ok_or(Error::InvalidProgram)?;
                Value::Tensor(self.build_tensor(t)?)
            }
            fb::KernelTypes::IntList => {
                let items = ev.val_as_int_list().ok_or(Error::InvalidProgram)?.items();
                let len = items.map_or(0, |v| v.len());
                let indices = arena.alloc_slice(len, 0u32)?;
                for (slot, idx) in indices
                    .iter_mut()
                    .zip(items.into_iter().flat_map(|v| v.iter()))
                {
                    *slot = in_range(idx, n).ok_or(Error::InvalidProgram)?;
                }
                let gathered = arena.alloc_slice(len, 0i64)?;
                let list = BoxedList {
                    indices: NonNull::from(indices).cast(),
                    items: NonNull::from(gathered).cast(),
                    len,
                };
                Value::IntList(arena.alloc(list)?)
            }
            fb::KernelTypes::DoubleList => {
                let items = ev
                    .val_as_double_list()
                    .ok_or(Error::InvalidProgram)?
                    .items();
                let len = items.map_or(0, |v| v.len());
                let copy = arena.alloc_slice(len, 0f64)?;
                for (slot, v) in copy
                    .iter_mut()
                    .zip(items.into_iter().flat_map(|v| v.iter()))
                {
                    *slot = v;
                }
                Value::DoubleList(NonNull::from(copy).cast(), len)
            }
            fb::KernelTypes::BoolList => {
                let items = ev.val_as_bool_list().ok_or(Error::InvalidProgram)?.items();
                let len = items.map_or(0, |v| v.len());
                let copy = arena.alloc_slice(len, false)?;
                for (slot, v) in copy
                    .iter_mut()
                    .zip(items.into_iter().flat_map(|v| v.iter()))
                {
                    *slot = v;
                }
                Value::BoolList(NonNull::from(copy).cast(), len)
            }
            fb::KernelTypes::TensorList | fb::KernelTypes::OptionalTensorList => {
                let optional = ev.val_type() == fb::KernelTypes::OptionalTensorList;
                let items = if optional {
                    ev.val_as_optional_tensor_list()
                        .ok_or(Error::InvalidProgram)?
                        .items()
                } else {
                    ev.val_as_tensor_list()
                        .ok_or(Error::InvalidProgram)?
                        .items()
                };
                let len = items.map_or(0, |v| v.len());
                let indices = arena.alloc_slice(len, 0u32)?;
                for (slot, idx) in indices
                    .iter_mut()
                    .zip(items.into_iter().flat_map(|v| v.iter()))
                {
                    *slot = if optional && idx == -1 {
                        NONE_INDEX
                    } else {
                        in_range(idx as i64, n).ok_or(Error::InvalidProgram)?
                    };
                }
                let gathered = arena.alloc_slice(len, core::ptr::null::<Tensor>())?;
                let list = BoxedList {
                    indices: NonNull::from(indices).cast(),
                    items: NonNull::from(gathered).cast(),
                    len,
                };
                let list = arena.alloc(list)?;
                if optional {
                    Value::OptionalTensorList(list)
                } else {
                    Value::TensorList(list)
                }
            }
            _ => return Err(Error::InvalidProgram),
        })
    }

    fn build_tensor(&self, t: fb::Tensor<'a>) -> Result<NonNull<Tensor>, Error> {
        let info = TensorInfo::from_fb(&t)?;
        if t.storage_offset() != 0 {
            return Err(Error::NotSupported);
        }
        if info.dynamism == ShapeDynamism::Unbound {
            return Err(Error::NotSupported);
        }
        let dim = info.sizes().len();
        let nbytes = info.nbytes();
        let arena = self.arena;
        let sizes = arena.alloc_slice(dim, 0usize)?;
        sizes.copy_from_slice(info.sizes());
        let strides = arena.alloc_slice(dim, 0usize)?;
        let order = arena.alloc_slice(dim, 0u8)?;
        order.copy_from_slice(info.dim_order());
        let storage = ShapeStorage {
            sizes: NonNull::from(sizes).cast(),
            strides: NonNull::from(strides).cast(),
            dim_order: NonNull::from(order).cast(),
        };

        let external = t
            .extra_tensor_info()
            .is_some_and(|e| e.location() == fb::TensorDataLocation::EXTERNAL);
        if external {
            // Constants in a separate .ptd file need a named-data map, which this runtime
            // does not take yet.
            return Err(Error::NotSupported);
        }
        let idx = t.data_buffer_idx();
        let (data, read_only, planned): (*mut u8, bool, bool) = match t.allocation_info() {
            None if idx > 0 => {
                let bytes = self.program.constant_data(idx, nbytes)?;
                (bytes.as_ptr() as *mut u8, true, false)
            }
            None => (core::ptr::null_mut(), false, false),
            Some(ai) => {
                let id = ai.memory_id() as usize;
                let offset =
                    (ai.memory_offset_low() as u64) | ((ai.memory_offset_high() as u64) << 32);
                let offset = usize::try_from(offset).map_err(|_| Error::NotSupported)?;
                let &(base, len) = id
                    .checked_sub(1)
                    .and_then(|i| self.planned.get(i))
                    .ok_or(Error::InvalidArgument)?;
                let end = offset
                    .checked_add(nbytes)
                    .ok_or(Error::MemoryAllocationFailed)?;
                if end > len {
                    return Err(Error::MemoryAllocationFailed);
                }
                let ptr = (base + offset) as *mut u8;
                if idx > 0 {
                    let init = self.program.mutable_data(idx, nbytes)?;
                    // SAFETY: `ptr..ptr+nbytes` lies inside a planned buffer the method
                    // borrows mutably (checked above); `init` is program data, which
                    // cannot overlap caller-provided planned memory.
                    unsafe { core::ptr::copy_nonoverlapping(init.as_ptr(), ptr, nbytes) };
                }
                (ptr, false, true)
            }
        };
        // SAFETY: the three shape arrays hold `dim` initialized elements in the method
        // arena, used by this tensor only; `data` is null or valid for `nbytes` (the bound:
        // sizes are the upper bound for dynamic tensors) for the method's lifetime:
        // constants borrow the program, planned data the caller's buffers (range-checked).
        let tensor = unsafe {
            Tensor::from_raw_parts(
                info.dtype,
                dim,
                storage,
                data,
                info.dynamism,
                read_only,
                planned,
            )
        };
        arena.alloc(tensor)
    }

    fn io_list(
        &self,
        list: Option<flatbuffers::Vector<'a, i32>>,
        n: usize,
    ) -> Result<(NonNull<u32>, usize), LoadError<'a>> {
        let list = list.ok_or(Error::InvalidProgram)?;
        let out = self.arena.alloc_slice(list.len(), 0u32)?;
        for (slot, idx) in out.iter_mut().zip(list.iter()) {
            *slot = in_range(idx as i64, n).ok_or(Error::InvalidProgram)?;
        }
        Ok((NonNull::from(out).cast(), list.len()))
    }

    /// Inputs and outputs that are neither planned nor constant get method-allocator
    /// backing, so `set_input` can copy into them and kernels can write outputs.
    fn back_unplanned_io(
        &self,
        values: NonNull<Value>,
        list: NonNull<u32>,
        len: usize,
    ) -> Result<(), LoadError<'a>> {
        for k in 0..len {
            // SAFETY: `list` holds `len` indices, each range-checked by `io_list`.
            let idx = unsafe { *list.as_ptr().add(k) } as usize;
            // SAFETY: `idx` is in range of the value table built by `build_values`.
            if let Value::Tensor(t) = unsafe { *values.as_ptr().add(idx) } {
                // SAFETY: tensors live in the method arena; nothing else borrows them yet.
                let t = unsafe { &mut *t.as_ptr() };
                if t.data_ptr().is_null() && t.nbytes() > 0 {
                    let bytes = t.numel_bound() * t.dtype().element_size();
                    let data = self.arena.allocate(bytes, 16)?;
                    // SAFETY: `bytes` fresh bytes from the method arena, valid for 'a.
                    unsafe { t.set_data(data.as_ptr(), false) };
                    t.mark_planned();
                }
            }
        }
        Ok(())
    }

    fn init_delegates(
        &self,
        method_name: &'a str,
    ) -> Result<(NonNull<Delegate>, usize), LoadError<'a>> {
        let Some(list) = self.plan.delegates() else {
            return Ok((NonNull::dangling(), 0));
        };
        let n = list.len();
        let mut storage: NonNull<Delegate> = NonNull::dangling();
        let mut count = 0usize;
        if n > 0 {
            let p = self.arena.allocate(
                n * core::mem::size_of::<Delegate>(),
                core::mem::align_of::<Delegate>(),
            )?;
            storage = p.cast();
        }
        let release = |storage: NonNull<Delegate>, count: usize| {
            for k in 0..count {
                // SAFETY: entries 0..count were written below.
                let d = unsafe { *storage.as_ptr().add(k) };
                d.backend.backend.destroy(d.handle);
            }
        };
        for d in list.iter() {
            let id = d.id().unwrap_or("");
            let Some(entry) = find_backend(id).filter(|b| b.backend.is_available()) else {
                release(storage, count);
                return Err(LoadError::new(
                    Error::NotFound,
                    LoadDetail::MissingBackend { id },
                ));
            };
            let result = (|| {
                let processed = d.processed().ok_or(Error::InvalidProgram)?;
                let payload = self.program.delegate_payload(processed)?;
                let specs_fb = d.compile_specs();
                let nspecs = specs_fb.map_or(0, |s| s.len());
                let specs = self.arena.alloc_slice(
                    nspecs,
                    CompileSpec {
                        key: "",
                        value: &[],
                    },
                )?;
                for (slot, s) in specs
                    .iter_mut()
                    .zip(specs_fb.into_iter().flat_map(|v| v.iter()))
                {
                    *slot = CompileSpec {
                        key: s.key().unwrap_or(""),
                        value: s.value().map_or(&[][..], |v| v.bytes()),
                    };
                }
                let ctx = BackendInitContext {
                    allocator: self.arena,
                    method_name,
                };
                entry.backend.init(&ctx, payload, specs)
            })();
            match result {
                Ok(handle) => {
                    // SAFETY: `count < n`, inside the allocation made above.
                    unsafe {
                        storage.as_ptr().add(count).write(Delegate {
                            backend: entry,
                            handle,
                        })
                    };
                    count += 1;
                }
                Err(e) => {
                    release(storage, count);
                    return Err(LoadError::new(e, LoadDetail::BackendInit { id }));
                }
            }
        }
        Ok((storage, count))
    }

    fn build_instructions(
        &self,
        values: NonNull<Value>,
        num_values: usize,
        num_delegates: usize,
    ) -> Result<(NonNull<Instr>, NonNull<Chain>, usize), LoadError<'a>> {
        let chains_fb = self.plan.chains().ok_or(Error::InvalidProgram)?;
        let total = self.meta.num_instructions();
        if total >= u32::MAX as usize {
            return Err(Error::InvalidProgram.into());
        }
        let chains = self
            .arena
            .alloc_slice(chains_fb.len(), Chain { start: 0, len: 0 })?;
        let instrs = self.arena.alloc_slice(total, Instr::Free { value: 0 })?;
        // One resolution per (operator, dtype key): most programs call few operators many times.
        let num_ops = self.meta.num_operators();
        let cache = self.arena.alloc_slice(
            num_ops,
            (u32::MAX, u8::MAX, None::<&'static crate::KernelEntry>),
        )?;
        let mut missing = 0usize;
        let mut first_missing = None;
        let mut pc = 0usize;
        for (c, chain) in chains_fb.iter().enumerate() {
            let start = pc;
            for instr in chain.instructions().into_iter().flat_map(|v| v.iter()) {
                let bad =
                    LoadError::new(Error::InvalidProgram, LoadDetail::Instruction { index: pc });
                let value = |i: i32| in_range(i as i64, num_values).ok_or(bad);
                let decoded = match instr.instr_args_type() {
                    fb::InstructionArguments::KernelCall => {
                        let call = instr.instr_args_as_kernel_call().ok_or(bad)?;
                        let op_index = in_range(call.op_index() as i64, num_ops).ok_or(bad)? as usize;
                        let args = self
                            .copy_args(call.args(), num_values)
                            .map_err(|e| LoadError { error: e, ..bad })?;
                        // The key comes from the values already built (their tensors were
                        // validated), not from another walk of the flatbuffer.
                        let (common, mask) = tensor_dtypes(values, args);
                        let common_byte = common.map_or(u8::MAX, |d| d as u8);
                        let slot = &mut cache[op_index];
                        let entry = if slot.0 == mask.0 && slot.1 == common_byte {
                            slot.2
                        } else {
                            let operator = self.meta.operator(op_index).map_err(|_| bad)?;
                            let found = crate::registry::resolve_kernel_masked(&operator, common, mask);
                            *slot = (mask.0, common_byte, found);
                            found
                        };
                        match entry {
                            None => {
                                missing += 1;
                                if first_missing.is_none() {
                                    let operator = self.meta.operator(op_index).map_err(|_| bad)?;
                                    first_missing = Some((pc, operator));
                                }
                                Instr::Free { value: 0 }
                            }
                            Some(entry) => {
                                self.check_signature(entry, pc, op_index, values, args)?;
                                Instr::Kernel {
                                    function: entry.function,
                                    args: NonNull::from(args).cast(),
                                    len: args.len() as u32,
                                    params: entry.signature.args.len() as u32,
                                    op: op_index as u32,
                                }
                            }
                        }
                    }
                    fb::InstructionArguments::DelegateCall => {
                        let call = instr.instr_args_as_delegate_call().ok_or(bad)?;
                        let index =
                            in_range(call.delegate_index() as i64, num_delegates).ok_or(bad)?;
                        let args = self
                            .copy_args(call.args(), num_values)
                            .map_err(|e| LoadError { error: e, ..bad })?;
                        Instr::Delegate {
                            index,
                            args: NonNull::from(args).cast(),
                            len: args.len() as u32,
                        }
                    }
                    fb::InstructionArguments::MoveCall => {
                        let call = instr.instr_args_as_move_call().ok_or(bad)?;
                        Instr::Move {
                            from: value(call.move_from())?,
                            to: value(call.move_to())?,
                        }
                    }
                    fb::InstructionArguments::JumpFalseCall => {
                        let call = instr.instr_args_as_jump_false_call().ok_or(bad)?;
                        let len = chain.instructions().map_or(0, |v| v.len());
                        let dest = call.destination_instruction();
                        if dest < 0 || dest as usize > len {
                            return Err(bad);
                        }
                        Instr::JumpFalse {
                            cond: value(call.cond_value_index())?,
                            dest: dest as u32,
                        }
                    }
                    fb::InstructionArguments::FreeCall => {
                        let call = instr.instr_args_as_free_call().ok_or(bad)?;
                        Instr::Free {
                            value: value(call.value_index())?,
                        }
                    }
                    _ => return Err(bad),
                };
                instrs[pc] = decoded;
                pc += 1;
            }
            chains[c] = Chain {
                start: start as u32,
                len: (pc - start) as u32,
            };
        }
        if let Some((first_instruction, first_operator)) = first_missing {
            let detail = LoadDetail::MissingKernels {
                count: missing,
                first_instruction,
                first_operator,
            };
            return Err(LoadError::new(Error::OperatorMissing, detail));
        }
        Ok((
            NonNull::from(instrs).cast(),
            NonNull::from(&mut *chains).cast(),
            chains.len(),
        ))
    }

    fn copy_args(
        &self,
        args: Option<flatbuffers::Vector<'a, i32>>,
        n: usize,
    ) -> Result<&'a [u32], Error> {
        let args = args.ok_or(Error::InvalidProgram)?;
        let out = self.arena.alloc_slice(args.len(), 0u32)?;
        for (slot, a) in out.iter_mut().zip(args.iter()) {
            *slot = in_range(a as i64, n).ok_or(Error::InvalidProgram)?;
        }
        // SAFETY: the arena allocation is valid for 'a (the arena borrows its buffer for 'a
        // and is never reset while the method lives); it is only read from now on.
        Ok(unsafe { &*(out as *const [u32]) })
    }

    fn check_signature(
        &self,
        entry: &crate::KernelEntry,
        instruction: usize,
        op_index: usize,
        values: NonNull<Value>,
        args: &[u32],
    ) -> Result<(), LoadError<'a>> {
        let operator = || self.meta.operator(op_index).unwrap_or(OperatorName { name: "?", overload: "" });
        let kinds = entry.signature.args;
        let expected = kinds.len() + 1;
        // Out variants may omit the return slot (it would alias the out anyway).
        let omitted_return =
            entry.signature.returns == ReturnKind::Outs && args.len() == kinds.len();
        if args.len() != expected && !omitted_return {
            return Err(LoadError::new(
                Error::InvalidProgram,
                LoadDetail::ArgumentCount {
                    instruction,
                    operator: operator(),
                    expected,
                    found: args.len(),
                },
            ));
        }
        for (position, (&kind, &idx)) in kinds.iter().zip(args.iter()).enumerate() {
            // SAFETY: `idx` was range-checked by `copy_args`.
            let v = unsafe { &*values.as_ptr().add(idx as usize) };
            if !kind.accepts(v) {
                return Err(LoadError::new(
                    Error::InvalidProgram,
                    LoadDetail::ArgumentKind {
                        instruction,
                        operator: operator(),
                        position,
                        expected: kind,
                        found: v.tag(),
                    },
                ));
            }
        }
        Ok(())
    }
}

/// The dtype all tensor arguments share (if any) and the set of their dtypes.
fn tensor_dtypes(values: NonNull<Value>, args: &[u32]) -> (Option<ScalarType>, crate::DtypeSet) {
    let mut mask = crate::DtypeSet::EMPTY;
    let mut first = None;
    let mut same = true;
    for &a in args {
        // SAFETY: `a` was range-checked by `copy_args`; tensors live in the method arena.
        if let Value::Tensor(t) = unsafe { *values.as_ptr().add(a as usize) } {
            // SAFETY: as above; nothing else borrows the tensor during load.
            let d = unsafe { t.as_ref() }.dtype();
            mask = mask.with(d);
            same &= *first.get_or_insert(d) == d;
        }
    }
    (first.filter(|_| same), mask)
}

/// Bytes of method memory a method needs, estimated from its tables (an upper bound for
/// the value table, tensor metadata, lists and instructions, plus slack for alignment).
pub(crate) fn estimate_method_memory(meta: &MethodMeta<'_>) -> usize {
    let plan = meta.plan();
    let mut bytes = 256usize;
    let vsize = core::mem::size_of::<Value>();
    for ev in plan.values().into_iter().flat_map(|v| v.iter()) {
        bytes += vsize;
        bytes += match ev.val_type() {
            fb::KernelTypes::Tensor => {
                let rank = ev
                    .val_as_tensor()
                    .and_then(|t| t.sizes())
                    .map_or(0, |s| s.len());
                let unplanned = ev
                    .val_as_tensor()
                    .is_some_and(|t| t.allocation_info().is_none() && t.data_buffer_idx() == 0);
                let data = if unplanned {
                    ev.val_as_tensor()
                        .and_then(|t| TensorInfo::from_fb(&t).ok())
                        .map_or(0, |i| i.nbytes() + 16)
                } else {
                    0
                };
                core::mem::size_of::<Tensor>() + rank * 17 + 24 + data
            }
            fb::KernelTypes::IntList => {
                ev.val_as_int_list()
                    .and_then(|l| l.items())
                    .map_or(0, |i| i.len())
                    * 12
                    + 40
            }
            fb::KernelTypes::DoubleList => {
                ev.val_as_double_list()
                    .and_then(|l| l.items())
                    .map_or(0, |i| i.len())
                    * 8
                    + 8
            }
            fb::KernelTypes::BoolList => {
                ev.val_as_bool_list()
                    .and_then(|l| l.items())
                    .map_or(0, |i| i.len())
                    + 8
            }
            fb::KernelTypes::TensorList => {
                ev.val_as_tensor_list()
                    .and_then(|l| l.items())
                    .map_or(0, |i| i.len())
                    * 12
                    + 40
            }
            fb::KernelTypes::OptionalTensorList => {
                ev.val_as_optional_tensor_list()
                    .and_then(|l| l.items())
                    .map_or(0, |i| i.len())
                    * 12
                    + 40
            }
            _ => 0,
        };
    }
    for chain in plan.chains().into_iter().flat_map(|c| c.iter()) {
        bytes += 16;
        for instr in chain.instructions().into_iter().flat_map(|i| i.iter()) {
            bytes += core::mem::size_of::<Instr>();
            let nargs = instr
                .instr_args_as_kernel_call()
                .and_then(|k| k.args())
                .or_else(|| instr.instr_args_as_delegate_call().and_then(|d| d.args()))
                .map_or(0, |a| a.len());
            bytes += nargs * 4 + 8;
        }
    }
    bytes += meta.num_operators() * 16;
    bytes += (meta.num_inputs() + meta.num_outputs()) * 5 + 64;
    bytes += meta.num_planned_buffers() * 16 + 16;
    bytes += plan.delegates().map_or(0, |d| d.len()) * (core::mem::size_of::<Delegate>() + 256);
    bytes
}

impl<'a> Method<'a> {
    /// The method's metadata.
    pub fn meta(&self) -> &MethodMeta<'a> {
        &self.meta
    }

    /// The method's name.
    pub fn name(&self) -> &'a str {
        self.meta.name()
    }

    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Sets the limit on instructions one `execute` may run (a looping program then fails
    /// with `OutOfResources` instead of hanging).
    pub fn set_instruction_limit(&mut self, limit: u64) {
        self.instruction_limit = limit;
    }

    fn value_ptr(&self, idx: u32) -> *mut Value {
        debug_assert!((idx as usize) < self.num_values);
        // SAFETY: callers pass indices range-checked at load.
        unsafe { self.values.as_ptr().add(idx as usize) }
    }

    fn io_index(&self, list: NonNull<u32>, len: usize, i: usize) -> Result<u32, Error> {
        if i >= len {
            return Err(Error::InvalidArgument);
        }
        // SAFETY: `i < len`, the length of the list.
        Ok(unsafe { *list.as_ptr().add(i) })
    }

    /// Input `i`'s tensor, for writing input data in place (zero-copy). Marks the input
    /// as set.
    pub fn input_tensor_mut(&mut self, i: usize) -> Result<&mut Tensor, Error> {
        self.input_tensor_unmarked(i)?;
        self.mark_input(i);
        self.input_tensor_unmarked(i)
    }

    fn input_tensor_unmarked(&mut self, i: usize) -> Result<&mut Tensor, Error> {
        let idx = self.io_index(self.inputs, self.num_inputs, i)?;
        // SAFETY: `idx` is in range; `&mut self` means no kernel runs and no other
        // reference into the method exists.
        match unsafe { *self.value_ptr(idx) } {
            Value::Tensor(t) => {
                // SAFETY: as above; the tensor lives in method memory.
                let t = unsafe { &mut *t.as_ptr() };
                if t.is_read_only() {
                    return Err(Error::InvalidArgument);
                }
                Ok(t)
            }
            _ => Err(Error::InvalidType),
        }
    }

    fn mark_input(&mut self, i: usize) {
        // SAFETY: `i < num_inputs` (checked by `io_index`), the flag array's length.
        unsafe { *self.input_set.as_ptr().add(i) = true };
    }

    /// Sets tensor input `i` from raw little-endian bytes with the given sizes: checks the
    /// dtype, resizes (bounded dynamic inputs accept any shape within the bound) and copies.
    pub fn set_input_bytes(
        &mut self,
        i: usize,
        dtype: ScalarType,
        sizes: &[usize],
        bytes: &[u8],
    ) -> Result<(), Error> {
        let t = self.input_tensor_unmarked(i)?;
        if t.dtype() != dtype {
            return Err(Error::InvalidArgument);
        }
        t.resize(sizes).map_err(|_| Error::InvalidArgument)?;
        if bytes.len() != t.nbytes() {
            return Err(Error::InvalidArgument);
        }
        t.bytes_mut().map_err(|e| e.error)?.copy_from_slice(bytes);
        self.mark_input(i);
        Ok(())
    }

    /// Sets tensor input `i` from a tensor (copied).
    pub fn set_input(&mut self, i: usize, value: &Tensor) -> Result<(), Error> {
        let bytes = value.bytes().map_err(|e| e.error)?;
        if !value.is_contiguous() {
            return Err(Error::NotSupported);
        }
        self.set_input_bytes(i, value.dtype(), value.sizes(), bytes)
    }

    /// Sets a non-tensor input. Like ExecuTorch, the value must equal the exported one
    /// (ints, bools, strings exactly; doubles within 1e-4 + 1e-5 relative).
    pub fn set_input_scalar(&mut self, i: usize, value: EValue<'_>) -> Result<(), Error> {
        let idx = self.io_index(self.inputs, self.num_inputs, i)?;
        // SAFETY: in range; `&mut self` excludes other access.
        let current = unsafe { *self.value_ptr(idx) };
        let ok = match (current, value) {
            (Value::None, EValue::None) => true,
            (Value::Int(a), EValue::Int(b)) => a == b,
            (Value::Bool(a), EValue::Bool(b)) => a == b,
            (Value::Double(a), EValue::Double(b)) => {
                let diff = if a > b { a - b } else { b - a };
                let mag = if b < 0.0 { -b } else { b };
                diff <= 1e-4 + 1e-5 * mag
            }
            (Value::String(p, n), EValue::String(s)) => {
                // SAFETY: strings point into program data valid for 'a.
                (unsafe { core::slice::from_raw_parts(p.as_ptr(), n) }) == s.as_bytes()
            }
            _ => return Err(Error::InvalidType),
        };
        if !ok {
            return Err(Error::InvalidArgument);
        }
        self.mark_input(i);
        Ok(())
    }

    /// Output `i`, valid until the next mutable use of the method.
    pub fn output(&self, i: usize) -> Result<EValue<'_>, Error> {
        let idx = self.io_index(self.outputs, self.num_outputs, i)?;
        self.evalue(idx)
    }

    /// Input `i` as it currently is.
    pub fn input(&self, i: usize) -> Result<EValue<'_>, Error> {
        let idx = self.io_index(self.inputs, self.num_inputs, i)?;
        self.evalue(idx)
    }

    fn evalue(&self, idx: u32) -> Result<EValue<'_>, Error> {
        // SAFETY: `idx` is in range; `&self` means no kernel is running.
        let v = unsafe { *self.value_ptr(idx) };
        Ok(match v {
            Value::None => EValue::None,
            Value::Int(i) => EValue::Int(i),
            Value::Double(d) => EValue::Double(d),
            Value::Bool(b) => EValue::Bool(b),
            // SAFETY: strings point into program data validated as UTF-8.
            Value::String(p, n) => EValue::String(unsafe {
                core::str::from_utf8_unchecked(core::slice::from_raw_parts(p.as_ptr(), n))
            }),
            // SAFETY: tensors live in method memory; shared access while `&self` is held.
            Value::Tensor(t) => EValue::Tensor(unsafe { t.as_ref() }),
            other => EValue::List(other.tag()),
        })
    }

    /// Runs the method once. All inputs must have been set.
    pub fn execute(&mut self) -> Result<(), ExecuteError<'a>> {
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
                        message: "an input was never set",
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
                        message: "instruction limit reached",
                    });
                }
                budget -= 1;
                let index = chain.start + pc;
                // SAFETY: `index < start + len <= total instructions`.
                let instr = unsafe { *self.instrs.as_ptr().add(index as usize) };
                pc = self
                    .step(instr, pc)
                    .map_err(|(error, message)| ExecuteError {
                        error,
                        instruction: Some(index as usize),
                        operator: match instr {
                            Instr::Kernel { op, .. } => self.meta.operator(op as usize).ok(),
                            _ => None,
                        },
                        message,
                    })?;
            }
        }
        Ok(())
    }

    /// Runs one instruction; returns the next pc within the chain.
    #[inline]
    fn step(&mut self, instr: Instr, pc: u32) -> Result<u32, (Error, &'static str)> {
        match instr {
            Instr::Kernel {
                function,
                args,
                len,
                params,
                ..
            } => {
                // SAFETY: `args` holds `len` indices in method memory, range-checked at
                // load; the value table and every tensor/list it refers to live for 'a,
                // and `&mut self` guarantees no other access during the call.
                let result = unsafe {
                    let idx = core::slice::from_raw_parts(args.as_ptr(), len as usize);
                    let kargs =
                        KernelArgs::new(self.values, idx, (params as usize).min(len as usize));
                    let ctx = KernelContext::new(self.temp);
                    function(&ctx, &kargs)
                };
                // SAFETY: the context and every scratch borrow ended with the call.
                unsafe { self.temp.reset_shared() };
                result.map_err(|e| (e.error, e.message))?;
                Ok(pc + 1)
            }
            Instr::Delegate { index, args, len } => {
                // SAFETY: `index < num_delegates` (checked at load).
                let d = unsafe { *self.delegates.as_ptr().add(index as usize) };
                // SAFETY: as for kernel calls; delegate calls have no return slot.
                let result = unsafe {
                    let idx = core::slice::from_raw_parts(args.as_ptr(), len as usize);
                    let kargs = KernelArgs::new(self.values, idx, len as usize);
                    let ctx = KernelContext::new(self.temp);
                    d.backend.backend.execute(&ctx, d.handle, &kargs)
                };
                // SAFETY: as above.
                unsafe { self.temp.reset_shared() };
                result.map_err(|e| (e, "delegate failed"))?;
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
                        let data = t.data::<Bool>().map_err(|e| (e.error, e.message))?;
                        data.iter().all(|b| b.get())
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

impl Drop for Method<'_> {
    fn drop(&mut self) {
        for k in 0..self.num_delegates {
            // SAFETY: `k < num_delegates`, all initialized at load.
            let d = unsafe { *self.delegates.as_ptr().add(k) };
            d.backend.backend.destroy(d.handle);
        }
    }
}

impl fmt::Debug for Method<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Method")
            .field("name", &self.meta.name())
            .field("values", &self.num_values)
            .field("inputs", &self.num_inputs)
            .field("outputs", &self.num_outputs)
            .finish()
    }
}
