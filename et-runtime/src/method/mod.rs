//! `Method`: a method's values and instructions built in caller memory, and execution.
//!
//! [`Program::load_method`](crate::Program::load_method) builds a method in the order of
//! the list below. Each module holds the load-time checks on what it builds, so a check
//! is found under the name of the thing it checks:
//!
//! - `load`: the driver; the method exists. (`build` holds the state the steps share.)
//! - `tensors`: the planned buffers are as large as the plan says (checked first, for a
//!   clear message); each tensor's shape is well formed, its storage offset is zero and
//!   its data lies inside its constant segment or planned buffer.
//! - `values`: every value is of a known kind, and every value index (in lists, inputs,
//!   outputs and call arguments) names a value.
//! - `external`: every external tensor's key is in the named data map, with the tensor's
//!   byte size (and dtype, sizes and dim order when the data file records them).
//! - `delegates`: every delegate's backend is registered, available, and initializes.
//! - `instructions`: every instruction's kind, operator, delegate and jump destination
//!   are in range; every KernelCall has a kernel (all missing ones are reported at once;
//!   resolution is `registry::resolve`, the rule introspection uses) and passes values
//!   that fit its signature (`KernelSignature::check_call`); out arguments are proved
//!   not to alias once here when no instruction can rebind memory.
//! - `rewrite` (feature `rewrite`): the rules kernel crates register ([`rewrite`](crate::rewrite)) are applied
//!   to the built method; what each may change, and what keeps the method sound, is in
//!   its docs.
//!
//! After loading, `execute` runs the instructions; `estimate` sizes method memory from
//! the program alone (`method_allocator_estimate`); `error` holds the failure
//! types.
//!
//! Imports run one way: the build steps use `build` and `error`; `load` uses the steps
//! and this module (to assemble the [`Method`]); this module uses only the types a loaded
//! method holds (`instructions::Instr`, `delegates::Delegate`).

mod build;
mod delegates;
mod estimate;
mod execute;
mod external;
mod inputs;
mod instructions;
mod load;
#[cfg(feature = "rewrite")]
pub mod rewrite;
mod tensors;
mod trace;
mod values;

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::error::Error;
use crate::kernel::KernelEntry;
use crate::memory::Arena;
pub use crate::method_error::{ExecuteError, ExternalDataProblem, LoadDetail, LoadError};
use crate::program::MethodMeta;
use crate::tensor::Tensor;
use crate::value::{EValue, Value};
use delegates::{destroy_delegates, Delegate};
#[doc(hidden)]
pub use delegates::{init_delegate, DelegateInit, InitDelegateFn};
pub use estimate::method_allocator_estimate;
use et_schema::scalar_type::ScalarType;
pub use inputs::{InputError, InputProblem};
use instructions::{Chain, Instr};

/// ExecuTorch's default limit on instructions executed by one `execute` call.
pub const DEFAULT_INSTRUCTION_LIMIT: u64 = 10_000_000;

/// A loaded method, ready to take inputs and execute. Lives in the memory given to
/// [`Program::load_method`](crate::Program::load_method); dropping it releases its
/// delegates.
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

    /// The registered kernel that KernelCall `pc` of `chain` runs: the one its operator
    /// resolved to at load, or the one a load-time rewrite rule put in its place (a fused
    /// kernel, see the `rewrite` module, feature `rewrite`). `None` for other instructions and for
    /// calls that run nothing since load (absorbed into a fused call, or a copy become a
    /// view). Found by the function's address, so of entries sharing a function the first
    /// registered is named.
    pub fn instruction_kernel(&self, chain: u32, pc: u32) -> Option<&'static KernelEntry> {
        let Instr::Kernel { function, .. } = self.instruction(chain, pc)? else {
            return None;
        };
        crate::registry::kernels()
            .iter()
            .find(|e| core::ptr::fn_addr_eq(e.function, function))
    }

    /// Instruction `pc` of `chain`, if both exist.
    fn instruction(&self, chain: u32, pc: u32) -> Option<Instr> {
        if chain as usize >= self.num_chains {
            return None;
        }
        // SAFETY: `chain < num_chains`.
        let chain = unsafe { *self.chains.as_ptr().add(chain as usize) };
        if pc >= chain.len {
            return None;
        }
        // SAFETY: `start + pc < start + len <= total instructions`.
        Some(unsafe { *self.instrs.as_ptr().add((chain.start + pc) as usize) })
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
        let t: *mut Tensor = self.input_tensor_unmarked(i)?;
        self.mark_input(i);
        // SAFETY: the tensor lives in method memory, apart from the input flags
        // `mark_input` wrote; the reference borrows `self` mutably, as the one it came
        // from did (found once rather than looked up again).
        Ok(unsafe { &mut *t })
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
}

impl Drop for Method<'_> {
    fn drop(&mut self) {
        // SAFETY: all `num_delegates` delegates were initialized at load.
        unsafe { destroy_delegates(self.delegates, self.num_delegates) };
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
