//! `Method`: a method's values and instructions built in caller memory, and execution.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::backend::{find_backend, BackendEntry, BackendInitContext, CompileSpec, DelegateHandle};
use crate::error::Error;
use crate::kernel::{ArgKind, KernelArgs, KernelContext, KernelEntry, KernelFn, Mismatch};
use crate::memory::{Arena, MemoryManager};
use crate::program::{
    tag, value_at, MethodMeta, OperatorName, Program, Table, TensorInfo, TensorShape, Vector,
};
use crate::registry::{resolve, CallDtypes};
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
        /// The call's outs were proved exclusive at load (see `Builder::decode`).
        prechecked: bool,
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
                "instruction {instruction}: argument {position} of {operator} should be {} but the program passes a value of kind `{found}`: {}",
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

type Plan<'x> = fb::ExecutionPlan<'x>;

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

    // Planned buffers: check sizes up front for a clear message.
    for index in 0..meta.num_planned_buffers() {
        let required = meta.planned_buffer_size(index)?;
        let provided = planned.get(index).map_or(0, |b| b.len());
        if provided < required {
            let d = LoadDetail::PlannedBuffer {
                index,
                required,
                provided,
            };
            return Err(note(detail, Error::MemoryAllocationFailed, d));
        }
    }
    // Raw views of the planned buffers; the `&mut` borrows are not used again.
    let raw = arena.alloc_array::<(*mut u8, usize)>(planned.len())?;
    for (i, buf) in planned.iter_mut().enumerate() {
        // SAFETY: `i < planned.len()`, the array's length.
        unsafe { raw.as_ptr().add(i).write((buf.as_mut_ptr(), buf.len())) };
    }
    let b = Builder {
        program,
        meta,
        arena,
        // SAFETY: all `planned.len()` entries were written above; the arena allocation
        // lives for 'a and is only read from now on.
        planned: unsafe { core::slice::from_raw_parts(raw.as_ptr(), planned.len()) },
        values: NonNull::dangling(),
        num_values: 0,
        detail,
    };
    b.build(temp)
}

/// Records `d` as the detail of a failure with code `error` (unless a more specific
/// detail was already recorded) and returns the code.
#[cold]
#[inline(never)]
fn note<'a>(detail: &Cell<LoadDetail<'a>>, error: Error, d: LoadDetail<'a>) -> Error {
    if matches!(detail.get(), LoadDetail::None) {
        detail.set(d);
    }
    error
}

struct Builder<'a, 'c> {
    program: &'a Program<'a>,
    meta: MethodMeta<'a>,
    arena: &'a Arena<'a>,
    /// (data, length) of each planned buffer.
    planned: &'a [(*mut u8, usize)],
    /// The value table, once built: `num_values` initialized entries.
    values: NonNull<Value>,
    num_values: usize,
    detail: &'c Cell<LoadDetail<'a>>,
}

fn in_range(index: i64, n: usize) -> Option<u32> {
    if index >= 0 && (index as u64) < n as u64 {
        Some(index as u32)
    } else {
        None
    }
}

/// A kernel resolution remembered per operator: the call dtypes it was made for, and the
/// entry found (`None` until the operator's first call).
type CacheSlot = Option<(CallDtypes, Option<&'static KernelEntry>)>;

/// KernelCalls no kernel serves: how many, and the first one's instruction and operator.
/// What decoding the instructions learns along the way.
struct Decoding {
    /// KernelCalls no registered kernel serves, and the first of them.
    missing: usize,
    first_instruction: usize,
    first_op: usize,
    /// Some instruction (a MoveCall or a view op) can rebind which memory a value uses.
    rebinds: bool,
}

// `decode` reads every call's first int field, and MoveCall's second, through MoveCall's
// offsets.
const _: () = {
    let first = fb::MoveCall::VT_MOVE_FROM;
    assert!(fb::KernelCall::VT_OP_INDEX == first && fb::DelegateCall::VT_DELEGATE_INDEX == first);
    assert!(fb::KernelCall::VT_ARGS == fb::DelegateCall::VT_ARGS);
    assert!(fb::JumpFalseCall::VT_COND_VALUE_INDEX == first);
    assert!(fb::FreeCall::VT_VALUE_INDEX == first);
    assert!(fb::JumpFalseCall::VT_DESTINATION_INSTRUCTION == fb::MoveCall::VT_MOVE_TO);
};

impl<'a> Builder<'a, '_> {
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
        Ok(method)
    }

    fn build_values(&mut self) -> Result<(), Error> {
        let list = self
            .meta
            .list(Plan::VT_VALUES)
            .ok_or(Error::InvalidProgram)?;
        let n = list.len();
        if n >= u32::MAX as usize {
            return Err(Error::InvalidProgram);
        }
        let values = self.arena.alloc_array::<Value>(n)?;
        for index in 0..n {
            let v = match self.build_value(list.table(index), n) {
                Ok(v) => v,
                Err(e) => return Err(note(self.detail, e, LoadDetail::Value { index })),
            };
            // SAFETY: `index < n`, the array's length.
            unsafe { values.as_ptr().add(index).write(v) };
        }
        self.values = values;
        self.num_values = n;
        Ok(())
    }

    fn build_value(&self, ev: Option<Table<'a>>, n: usize) -> Result<Value, Error> {
        let (kind, t) = ev
            .ok_or(Error::InvalidProgram)?
            .union(fb::EValue::VT_VAL_TYPE, fb::EValue::VT_VAL);
        if kind == tag::NULL {
            return Ok(Value::None);
        }
        let t = t.ok_or(Error::InvalidProgram)?;
        // Every list table keeps its items in its first field.
        let items = || t.vector(fb::IntList::VT_ITEMS).unwrap_or(Vector::EMPTY);
        Ok(match kind {
            tag::INT => Value::Int(t.int(fb::Int::VT_INT_VAL, 8)),
            tag::BOOL => Value::Bool(t.uint(fb::Bool::VT_BOOL_VAL, 1) != 0),
            tag::DOUBLE => Value::Double(f64::from_bits(t.uint(fb::Double::VT_DOUBLE_VAL, 8))),
            tag::STRING => {
                let s = match t.bytes(fb::String::VT_STRING_VAL) {
                    Some(b) => crate::program::to_str(b).ok_or(Error::InvalidProgram)?,
                    None => "",
                };
                Value::String(NonNull::from(s.as_bytes()).cast(), s.len())
            }
            tag::TENSOR => Value::Tensor(self.build_tensor(t)?),
            tag::INT_LIST => {
                let (indices, len) = self.indices(items(), 8, false, n)?;
                Value::IntList(self.arena.alloc(BoxedList {
                    indices,
                    items: self.arena.alloc_zeroed(len)?,
                    len,
                })?)
            }
            tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST => {
                let optional = kind == tag::OPTIONAL_TENSOR_LIST;
                let (indices, len) = self.indices(items(), 4, optional, n)?;
                let list = self.arena.alloc(BoxedList {
                    indices,
                    // All-zero bytes are null pointers.
                    items: self.arena.alloc_zeroed(len)?,
                    len,
                })?;
                if optional {
                    Value::OptionalTensorList(list)
                } else {
                    Value::TensorList(list)
                }
            }
            tag::DOUBLE_LIST | tag::BOOL_LIST => {
                // Copied into method memory: doubles as their bits, bools as 0 or 1.
                let items = items();
                let len = items.len();
                let double = kind == tag::DOUBLE_LIST;
                let elem = if double { 8 } else { 1 };
                let copy = self.arena.allocate_n(len, elem as usize, elem as usize)?;
                for k in 0..len {
                    let v = items.uint(k, elem);
                    // SAFETY: `k < len`; the allocation holds `len` elements of `elem`
                    // bytes, aligned to `elem`.
                    unsafe {
                        if double {
                            copy.cast::<u64>().as_ptr().add(k).write(v);
                        } else {
                            copy.as_ptr().add(k).write((v != 0) as u8);
                        }
                    }
                }
                if double {
                    Value::DoubleList(copy.cast(), len)
                } else {
                    Value::BoolList(copy.cast(), len)
                }
            }
            _ => return Err(Error::InvalidProgram),
        })
    }

    /// Copies a vector of value indices (`elem`-byte signed integers) into method memory,
    /// each checked to be below `n` (or -1 when `optional`, stored as [`NONE_INDEX`]).
    fn indices(
        &self,
        v: Vector<'a>,
        elem: u32,
        optional: bool,
        n: usize,
    ) -> Result<(NonNull<u32>, usize), Error> {
        let len = v.len();
        let out = self.arena.alloc_array::<u32>(len)?;
        for k in 0..len {
            let raw = v.uint(k, elem);
            let raw = if elem == 4 {
                raw as u32 as i32 as i64
            } else {
                raw as i64
            };
            let index = if optional && raw == -1 {
                NONE_INDEX
            } else {
                in_range(raw, n).ok_or(Error::InvalidProgram)?
            };
            // SAFETY: `k < len`, the array's length.
            unsafe { out.as_ptr().add(k).write(index) };
        }
        Ok((out, len))
    }

    /// The value indices of a call's `args` (required), checked against the value table.
    fn args(&self, call: Table<'a>, vt: flatbuffers::VOffsetT) -> Result<&'a [u32], Error> {
        let v = call.vector(vt).ok_or(Error::InvalidProgram)?;
        let (p, len) = self.indices(v, 4, false, self.num_values)?;
        // SAFETY: `indices` initialized `len` entries in the method arena, which lives for
        // 'a and is only read from now on.
        Ok(unsafe { core::slice::from_raw_parts(p.as_ptr(), len) })
    }

    fn build_tensor(&self, t: Table<'a>) -> Result<NonNull<Tensor>, Error> {
        type T<'x> = fb::Tensor<'x>;
        let shape = TensorShape::read(t)?;
        if t.uint(T::VT_STORAGE_OFFSET, 4) != 0 || shape.dynamism == ShapeDynamism::Unbound {
            return Err(Error::NotSupported);
        }
        let external = t
            .table(T::VT_EXTRA_TENSOR_INFO)
            .is_some_and(|e| e.uint(fb::ExtraTensorInfo::VT_LOCATION, 1) != 0);
        if external {
            // Constants in a separate .ptd file need a named-data map, which this runtime
            // does not take yet.
            return Err(Error::NotSupported);
        }
        let dim = shape.rank();
        let arena = self.arena;
        // Sizes, then strides (recomputed by the constructor), then the dim order.
        let sizes = arena.alloc_zeroed::<usize>(2 * dim)?;
        let order = arena.alloc_zeroed::<u8>(dim)?;
        // SAFETY: `sizes` holds `2 * dim` and `order` `dim` zeroed elements, fresh from
        // the arena and used by nothing else.
        let nbytes = unsafe {
            shape.fill(
                core::slice::from_raw_parts_mut(sizes.as_ptr(), dim),
                core::slice::from_raw_parts_mut(order.as_ptr(), dim),
            )?
        };
        let storage = ShapeStorage {
            sizes,
            // SAFETY: `dim <= 2 * dim` elements into the allocation.
            strides: unsafe { sizes.add(dim) },
            dim_order: order,
        };
        let idx = t.uint(T::VT_DATA_BUFFER_IDX, 4) as u32;
        let (data, read_only, planned): (*mut u8, bool, bool) = match t.table(T::VT_ALLOCATION_INFO)
        {
            None if idx > 0 => {
                let bytes = self.program.constant_data(idx, nbytes)?;
                (bytes.as_ptr() as *mut u8, true, false)
            }
            None => (core::ptr::null_mut(), false, false),
            Some(ai) => {
                type A<'x> = fb::AllocationDetails<'x>;
                let id = ai.uint(A::VT_MEMORY_ID, 4) as usize;
                let offset = ai.uint(A::VT_MEMORY_OFFSET_LOW, 4)
                    | ai.uint(A::VT_MEMORY_OFFSET_HIGH, 4) << 32;
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
                // SAFETY: `offset + nbytes <= len`: inside the planned buffer.
                let ptr = unsafe { base.add(offset) };
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
        // arena, used by this tensor only, and the dim order is a permutation (checked by
        // `TensorShape::fill`); `data` is null or valid for `nbytes` (the bound: sizes are
        // the upper bound for dynamic tensors) for the method's lifetime: constants borrow
        // the program, planned data the caller's buffers (range-checked).
        let tensor = unsafe {
            Tensor::from_raw_parts(
                shape.dtype,
                dim,
                storage,
                data,
                shape.dynamism,
                read_only,
                planned,
            )
        };
        arena.alloc(tensor)
    }

    /// An input or output list: value indices, each range-checked; tensors that are
    /// neither planned nor constant get method-allocator backing, so `set_input` can copy
    /// into them and kernels can write outputs.
    fn io_list(&self, vt: flatbuffers::VOffsetT) -> Result<(NonNull<u32>, usize), Error> {
        let list = self.meta.list(vt).ok_or(Error::InvalidProgram)?;
        let (indices, len) = self.indices(list, 4, false, self.num_values)?;
        for k in 0..len {
            // SAFETY: `indices` holds `len` indices, each below `num_values`, the length
            // of the value table built by `build_values`.
            let v = unsafe { *self.values.as_ptr().add(*indices.as_ptr().add(k) as usize) };
            if let Value::Tensor(t) = v {
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
        Ok((indices, len))
    }

    fn init_delegates(&self) -> Result<(NonNull<Delegate>, usize), Error> {
        let list = self.meta.list(Plan::VT_DELEGATES).unwrap_or(Vector::EMPTY);
        let n = list.len();
        let storage = self.arena.alloc_array::<Delegate>(n)?;
        for count in 0..n {
            match self.init_delegate(list.table(count)) {
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

    #[inline(never)]
    fn init_delegate(&self, d: Option<Table<'a>>) -> Result<Delegate, Error> {
        type D<'x> = fb::BackendDelegate<'x>;
        let d = d.ok_or(Error::InvalidProgram)?;
        let id = d.string(D::VT_ID).unwrap_or("");
        let Some(backend) = find_backend(id).filter(|b| b.backend.is_available()) else {
            let detail = LoadDetail::MissingBackend { id };
            return Err(note(self.detail, Error::NotFound, detail));
        };
        let init = || {
            let processed = d.table(D::VT_PROCESSED).ok_or(Error::InvalidProgram)?;
            let payload = self.program.delegate_payload(processed)?;
            let specs_fb = d.vector(D::VT_COMPILE_SPECS).unwrap_or(Vector::EMPTY);
            let n = specs_fb.len();
            let specs = self.arena.alloc_array::<CompileSpec<'a>>(n)?;
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
            let ctx = BackendInitContext {
                allocator: self.arena,
                method_name: self.meta.name(),
            };
            // SAFETY: all `n` entries were written above, in method memory valid for 'a.
            let specs = unsafe { core::slice::from_raw_parts(specs.as_ptr(), n) };
            backend.backend.init(&ctx, payload, specs)
        };
        match init() {
            Ok(handle) => Ok(Delegate { backend, handle }),
            Err(e) => Err(note(self.detail, e, LoadDetail::BackendInit { id })),
        }
    }

    #[allow(
        clippy::type_complexity,
        reason = "three parts of the instruction table"
    )]
    fn build_instructions(
        &self,
        num_delegates: usize,
    ) -> Result<(NonNull<Instr>, NonNull<Chain>, usize), Error> {
        let chains = self
            .meta
            .list(Plan::VT_CHAINS)
            .ok_or(Error::InvalidProgram)?;
        let total = self.meta.num_instructions();
        if total >= u32::MAX as usize {
            return Err(Error::InvalidProgram);
        }
        let out_chains = self.arena.alloc_array::<Chain>(chains.len())?;
        let instrs = self.arena.alloc_array::<Instr>(total)?;
        // One resolution per (operator, dtype key): most programs call few operators many
        // times.
        let num_ops = self.meta.num_operators();
        let cache = self.arena.alloc_slice::<CacheSlot>(num_ops, None)?;
        let mut state = Decoding {
            missing: 0,
            first_instruction: 0,
            first_op: 0,
            rebinds: false,
        };
        let mut pc = 0usize;
        for c in 0..chains.len() {
            let list = chains
                .table(c)
                .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                .unwrap_or(Vector::EMPTY);
            let start = pc;
            for k in 0..list.len() {
                let decoded = self
                    .decode(
                        list.table(k),
                        list.len(),
                        pc,
                        num_delegates,
                        cache,
                        &mut state,
                    )
                    .map_err(|e| note(self.detail, e, LoadDetail::Instruction { index: pc }))?;
                if pc >= total {
                    return Err(Error::InvalidProgram);
                }
                // SAFETY: `pc < total`, the array's length.
                unsafe { instrs.as_ptr().add(pc).write(decoded) };
                pc += 1;
            }
            // SAFETY: `c < chains.len()`, the array's length.
            unsafe {
                out_chains.as_ptr().add(c).write(Chain {
                    start: start as u32,
                    len: (pc - start) as u32,
                })
            };
        }
        if pc != total {
            return Err(Error::InvalidProgram);
        }
        if state.missing > 0 {
            let d = LoadDetail::MissingKernels {
                count: state.missing,
                first_instruction: state.first_instruction,
                first_operator: self.operator(state.first_op),
            };
            return Err(note(self.detail, Error::OperatorMissing, d));
        }
        if state.rebinds {
            // Some instruction can change which memory a value refers to, so aliasing
            // proved at load may not hold later: check at every call instead.
            for k in 0..total {
                // SAFETY: `k < total`; every entry was written above.
                if let Instr::Kernel { prechecked, .. } = unsafe { &mut *instrs.as_ptr().add(k) } {
                    *prechecked = false;
                }
            }
        }
        Ok((instrs, out_chains, chains.len()))
    }

    /// Operator `op` for messages.
    #[cold]
    fn operator(&self, op: usize) -> OperatorName<'a> {
        self.meta.operator(op).unwrap_or(OperatorName {
            name: "?",
            overload: "",
        })
    }

    /// Decodes instruction `pc` (of a chain of `chain_len`). A KernelCall that no
    /// registered kernel serves is counted in `missing` and becomes a placeholder.
    fn decode(
        &self,
        instr: Option<Table<'a>>,
        chain_len: usize,
        pc: usize,
        num_delegates: usize,
        cache: &mut [CacheSlot],
        state: &mut Decoding,
    ) -> Result<Instr, Error> {
        let (kind, call) = instr.ok_or(Error::InvalidProgram)?.union(
            fb::Instruction::VT_INSTR_ARGS_TYPE,
            fb::Instruction::VT_INSTR_ARGS,
        );
        let call = call.ok_or(Error::InvalidProgram)?;
        let n = self.num_values;
        // Every call table has an int in its first field, and MoveCall and JumpFalseCall
        // another in their second (see the assertions below).
        let first = call.int(fb::MoveCall::VT_MOVE_FROM, 4);
        let second = call.int(fb::MoveCall::VT_MOVE_TO, 4);
        let bad = Error::InvalidProgram;
        Ok(match kind {
            tag::KERNEL_CALL => {
                let op = in_range(first, cache.len()).ok_or(bad)? as usize;
                let args = self.args(call, fb::KernelCall::VT_ARGS)?;
                let dtypes = tensor_dtypes(self.values, args);
                let slot = cache.get_mut(op).ok_or(bad)?;
                let found = match *slot {
                    Some((cached, found)) if cached == dtypes => found,
                    _ => {
                        let found = resolve(&self.meta.operator(op)?, dtypes);
                        *slot = Some((dtypes, found));
                        found
                    }
                };
                let Some(entry) = found else {
                    if state.missing == 0 {
                        state.first_instruction = pc;
                        state.first_op = op;
                    }
                    state.missing += 1;
                    return Ok(Instr::Free { value: 0 });
                };
                self.check_signature(entry, pc, op, args)?;
                let params = entry.signature.args.len();
                // Prove once that the outs never alias another argument. Data pointers
                // are fixed at load unless a view op or a MoveCall rebinds them; the
                // caller clears the proof for such methods.
                // SAFETY: `args` are range-checked value indices of this method.
                let kargs = unsafe { KernelArgs::new(self.values, args, params.min(args.len())) };
                let prechecked = kargs.outs_are_exclusive(entry.signature.args);
                state.rebinds |= core::ptr::eq(entry, &crate::prim_ops::ET_VIEW);
                Instr::Kernel {
                    function: entry.function,
                    args: NonNull::from(args).cast(),
                    len: args.len() as u32,
                    params: params as u32,
                    op: op as u32,
                    prechecked,
                }
            }
            tag::DELEGATE_CALL => {
                let index = in_range(first, num_delegates).ok_or(bad)?;
                let args = self.args(call, fb::DelegateCall::VT_ARGS)?;
                Instr::Delegate {
                    index,
                    args: NonNull::from(args).cast(),
                    len: args.len() as u32,
                }
            }
            tag::MOVE_CALL => {
                state.rebinds = true;
                Instr::Move {
                    from: in_range(first, n).ok_or(bad)?,
                    to: in_range(second, n).ok_or(bad)?,
                }
            }
            tag::JUMP_FALSE_CALL => {
                // A destination equal to the chain's length ends the chain.
                if second < 0 || second as u64 > chain_len as u64 {
                    return Err(bad);
                }
                Instr::JumpFalse {
                    cond: in_range(first, n).ok_or(bad)?,
                    dest: second as u32,
                }
            }
            tag::FREE_CALL => Instr::Free {
                value: in_range(first, n).ok_or(bad)?,
            },
            _ => return Err(bad),
        })
    }

    fn check_signature(
        &self,
        entry: &KernelEntry,
        instruction: usize,
        op: usize,
        args: &[u32],
    ) -> Result<(), Error> {
        // SAFETY: every index in `args` was range-checked by `indices` against the value
        // table, whose entries stay initialized for 'a.
        let values = args
            .iter()
            .map(|&i| unsafe { &*self.values.as_ptr().add(i as usize) });
        let detail = match entry.signature.check_call(values) {
            Ok(()) => return Ok(()),
            Err(Mismatch::Count { expected, found }) => LoadDetail::ArgumentCount {
                instruction,
                operator: self.operator(op),
                expected,
                found,
            },
            Err(Mismatch::Kind {
                position,
                expected,
                found,
            }) => LoadDetail::ArgumentKind {
                instruction,
                operator: self.operator(op),
                position,
                expected,
                found,
            },
        };
        Err(note(self.detail, Error::InvalidProgram, detail))
    }
}

/// The dtypes of a call's tensor arguments, read from the values already built (their
/// tensors were validated), not from another walk of the flatbuffer.
fn tensor_dtypes(values: NonNull<Value>, args: &[u32]) -> CallDtypes {
    let mut all = crate::DtypeSet::EMPTY;
    let mut first = None;
    let mut same = true;
    for &a in args {
        // SAFETY: `a` was range-checked against the value table; tensors live in the
        // method arena.
        if let Value::Tensor(t) = unsafe { *values.as_ptr().add(a as usize) } {
            // SAFETY: as above; nothing else borrows the tensor during load.
            let d = unsafe { t.as_ref() }.dtype();
            all = all.with(d);
            same &= *first.get_or_insert(d) == d;
        }
    }
    CallDtypes {
        common: first.filter(|_| same),
        all,
    }
}

/// Bytes of method memory a method needs, estimated from its tables (an upper bound for
/// the value table, tensor metadata, lists and instructions, plus slack for alignment).
pub(crate) fn estimate_method_memory(meta: &MethodMeta<'_>) -> usize {
    type P<'x> = fb::ExecutionPlan<'x>;
    let plan = meta.table();
    let len = |v: Option<Vector<'_>>| v.map_or(0, |v| v.len());
    let mut bytes = 256usize;
    let values = plan.vector(P::VT_VALUES).unwrap_or(Vector::EMPTY);
    for i in 0..values.len() {
        bytes += core::mem::size_of::<Value>();
        let Some((kind, Some(t))) = value_at(values, i as i64) else {
            continue;
        };
        let items = len(t.vector(fb::IntList::VT_ITEMS));
        bytes = bytes.saturating_add(match kind {
            tag::TENSOR => {
                type T<'x> = fb::Tensor<'x>;
                let rank = len(t.vector(T::VT_SIZES));
                let unplanned = t.table(T::VT_ALLOCATION_INFO).is_none()
                    && t.uint(T::VT_DATA_BUFFER_IDX, 4) == 0;
                let data = if unplanned {
                    TensorInfo::read(t).map_or(0, |i| i.nbytes().saturating_add(16))
                } else {
                    0
                };
                (core::mem::size_of::<Tensor>() + rank * 17 + 24).saturating_add(data)
            }
            tag::INT_LIST | tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST => items * 12 + 40,
            tag::DOUBLE_LIST => items * 8 + 8,
            tag::BOOL_LIST => items + 8,
            _ => 0,
        });
    }
    let chains = plan.vector(P::VT_CHAINS).unwrap_or(Vector::EMPTY);
    for c in 0..chains.len() {
        bytes += 16;
        let instrs = chains
            .table(c)
            .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
            .unwrap_or(Vector::EMPTY);
        for i in 0..instrs.len() {
            bytes += core::mem::size_of::<Instr>();
            type I<'x> = fb::Instruction<'x>;
            let nargs = match instrs
                .table(i)
                .map(|i| i.union(I::VT_INSTR_ARGS_TYPE, I::VT_INSTR_ARGS))
            {
                // Both calls keep their arguments at the same field.
                Some((tag::KERNEL_CALL | tag::DELEGATE_CALL, Some(call))) => {
                    len(call.vector(fb::KernelCall::VT_ARGS))
                }
                _ => 0,
            };
            bytes += nargs * 4 + 8;
        }
    }
    bytes += meta.num_operators() * 16;
    bytes += (meta.num_inputs() + meta.num_outputs()) * 5 + 64;
    bytes += meta.num_planned_buffers() * 16 + 16;
    bytes += len(plan.vector(P::VT_DELEGATES)) * (core::mem::size_of::<Delegate>() + 256);
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
                pc = self.step(instr, pc).map_err(|(error, message)| {
                    crate::et_log!(error, "execute: instruction {index}: {message} {error:?}");
                    ExecuteError {
                        error,
                        instruction: Some(index as usize),
                        operator: match instr {
                            Instr::Kernel { op, .. } => self.meta.operator(op as usize).ok(),
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
    fn step(&mut self, instr: Instr, pc: u32) -> Result<u32, (Error, &'static str)> {
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
                    let kargs = if prechecked {
                        KernelArgs::new_prechecked(self.values, idx, params)
                    } else {
                        KernelArgs::new(self.values, idx, params)
                    };
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
        // SAFETY: all `num_delegates` delegates were initialized at load.
        unsafe { destroy_delegates(self.delegates, self.num_delegates) };
    }
}

/// Releases delegates `0..count` of `delegates`.
///
/// # Safety
/// The first `count` entries must be initialized delegates, each released only once.
unsafe fn destroy_delegates(delegates: NonNull<Delegate>, count: usize) {
    for k in 0..count {
        // SAFETY: `k < count`, an initialized entry (caller).
        let d = unsafe { *delegates.as_ptr().add(k) };
        d.backend.backend.destroy(d.handle);
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

#[cfg(test)]
mod tests {
    use crate::error::{Error, KernelResult};
    use crate::kernel::{
        op_hash, ArgKind, DtypeKey, KernelArgs, KernelContext, KernelEntry, KernelSignature,
        ReturnKind,
    };
    use crate::registry::{find_kernel, has_operator, resolve_kernel};
    use crate::scalar_type::{DtypeSet, ScalarType};
    use crate::{FileLoader, LoadDetail, MemoryManager, MethodBuffers, Program};

    /// A fallback `aten::add.out` compiled only for int64 and double: what a selective
    /// build leaves when its selection names add for those dtypes and not for float32.
    #[linkme::distributed_slice(crate::__private::KERNELS)]
    #[linkme(crate = linkme)]
    static ADD_WITHOUT_FLOAT: KernelEntry = KernelEntry {
        name: "aten::add.out",
        hash: op_hash("aten::add.out"),
        dtype: DtypeKey::FALLBACK,
        function: add_without_float,
        signature: &KernelSignature {
            args: &[
                ArgKind::Tensor,
                ArgKind::Tensor,
                ArgKind::Scalar,
                ArgKind::TensorMut,
            ],
            returns: ReturnKind::Outs,
            crate_name: "et-runtime",
            dtypes: DtypeSet::EMPTY
                .with(ScalarType::Long)
                .with(ScalarType::Double),
        },
    };

    fn add_without_float(_: &KernelContext<'_>, _: &KernelArgs<'_>) -> KernelResult {
        unreachable!("no test calls add with int64 or double")
    }

    /// `add.pte` adds float32 tensors; the only `aten::add.out` here is a fallback whose
    /// `signature.dtypes` leaves float32 out. Introspection and `load_method` must give
    /// the same answer: no kernel serves the call.
    #[test]
    fn introspection_and_load_method_agree_on_a_fallback_without_the_call_dtype() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/add.pte");
        let loader = FileLoader::open(path).expect("fixture");
        let program = Program::load(&loader).expect("valid program");
        let meta = program.method_meta("forward").expect("forward");

        let mut calls = meta.kernel_calls();
        let call = calls.next().expect("a kernel call").expect("well formed");
        assert!(calls.next().is_none(), "add.pte has one kernel call");
        assert_eq!(call.key.common_dtype(), Some(ScalarType::Float));
        assert!(resolve_kernel(&call.operator, &call.key).is_none());
        assert!(find_kernel("aten::add", "out", Some(ScalarType::Float)).is_none());
        assert_eq!(meta.missing_kernels().count(), 1);
        // The name is registered, and the entry serves the dtypes it was compiled for.
        assert!(has_operator("aten::add", "out"));
        let long = find_kernel("aten::add", "out", Some(ScalarType::Long));
        assert!(long.is_some_and(|e| core::ptr::eq(e, &ADD_WITHOUT_FLOAT)));

        let mut buffers = MethodBuffers::for_method(&meta, 0).expect("buffers");
        let (method_memory, mut planned, _) = buffers.split();
        let mut memory = MemoryManager::without_temp(method_memory, &mut planned);
        let err = program.load_method("forward", &mut memory).unwrap_err();
        assert_eq!(err.error, Error::OperatorMissing);
        let LoadDetail::MissingKernels {
            count,
            first_instruction,
            first_operator,
        } = err.detail
        else {
            panic!("{err}")
        };
        assert_eq!(count, 1);
        assert_eq!(first_instruction, call.instruction);
        assert_eq!(
            (first_operator.name, first_operator.overload),
            ("aten::add", "out")
        );
    }
}
