//! Profiling (feature `etdump`): an [`EventTracer`] records spans while a method loads
//! and executes; [`Method::write_etdump`] then writes them as an ETDump, the flatbuffer
//! ExecuTorch's Inspector (`executorch.devtools.Inspector`) reads (`.etdp`, schema
//! `et-schema/schema/etdump.fbs`).
//!
//! Recording and serializing are separate on purpose: while the method runs, an event is
//! two clock reads and one store into the caller's buffer, and the flatbuffer is built
//! afterwards (ExecuTorch builds it during inference, so its per-operator figures include
//! the serializer's work). Neither allocates.
//!
//! What the ETDump holds, as ExecuTorch's runtime writes it: a `Default` run with the
//! load's `Method::init` and `Program::load_method` spans, then one `Execute` run per
//! execute, each with an `OPERATOR_CALL` event per KernelCall and a `DELEGATE_CALL` per
//! DelegateCall (chain and instruction index as the Inspector maps them to the program),
//! an event per delegate step named by the backend (its delegate debug identifier), and
//! `Method::execute` last. Times are nanoseconds (the Inspector's default time scale).

mod flat;
mod tracer;

use core::cell::Cell;
use core::fmt;
use core::ops::Range;

use et_schema::etdump_fields as ed;

use crate::method::Method;
use flat::{Field, Full, Writer};
pub use tracer::{Clock, EventKind, EventTracer, ProfileRecord};

/// ETDump's file identifier.
pub const ETDUMP_IDENTIFIER: &[u8; 4] = b"ED00";

/// The longest delegate step name written; longer names are cut (at a char boundary).
const MAX_STEP_NAME: usize = 64;

/// The output buffer given to [`Method::write_etdump`] is too small; `needed` bytes
/// always suffice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferTooSmall {
    /// A size that is enough ([`EventTracer::etdump_size_bound`]).
    pub needed: usize,
}

impl fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the ETDump buffer is too small ({} bytes suffice)",
            self.needed
        )
    }
}

impl EventTracer<'_> {
    /// An upper bound of the bytes [`Method::write_etdump`] writes for these records.
    pub fn etdump_size_bound(&self) -> usize {
        // Per record: its Event and ProfileEvent tables with vtables and padding, a name
        // or step identifier of at most MAX_STEP_NAME bytes, an empty metadata vector and
        // its slot in the run's vector. Per run: a RunData table, its
        // name and vector. The records bound the runs.
        let records = self.records().len() + 1;
        256 + records * (160 + MAX_STEP_NAME + 192)
    }
}

impl Method<'_> {
    /// Writes what `tracer` recorded for this method (its load, if traced, and its
    /// executes) as a size-prefixed ETDump into `out`; returns the bytes written.
    pub fn write_etdump(
        &self,
        tracer: &EventTracer<'_>,
        out: &mut [u8],
    ) -> Result<usize, BufferTooSmall> {
        let too_small = BufferTooSmall {
            needed: tracer.etdump_size_bound(),
        };
        write(self, tracer, out).map_err(|Full| too_small)
    }
}

/// The runs the records divide into, as index ranges: the load's records (if any), then
/// each execute's, ended by its `Execute` record (the last run lacks it when the buffer
/// filled up first).
fn runs<'t>(
    tracer: &'t EventTracer<'_>,
) -> impl Iterator<Item = (&'static str, Range<usize>)> + 't {
    let mut records = tracer.records().enumerate().peekable();
    let mut load = 0..0;
    while let Some((i, _)) =
        records.next_if(|(_, r)| matches!(r.kind, EventKind::LoadMethod | EventKind::MethodInit))
    {
        load = 0..i + 1;
    }
    let default = (!load.is_empty()).then_some(("Default", load));
    let executes = core::iter::from_fn(move || {
        let (first, record) = records.next()?;
        let mut end = first + 1;
        let mut last = record;
        while last.kind != EventKind::Execute {
            match records.next() {
                Some((i, r)) => (end, last) = (i + 1, r),
                None => break,
            }
        }
        Some(("Execute", first..end))
    });
    default.into_iter().chain(executes)
}

fn write(method: &Method<'_>, tracer: &EventTracer<'_>, out: &mut [u8]) -> Result<usize, Full> {
    let clock = tracer.clock();
    let mut w = Writer::new(out);
    // The size prefix, the root offset and the identifier.
    w.bytes(&[0; 8])?;
    w.bytes(ETDUMP_IDENTIFIER)?;
    let root = w.table(&[
        Field::U32(ed::ETDump::VT_VERSION, 0),
        Field::Offset(ed::ETDump::VT_RUN_DATA),
    ])?;
    let root_at = root.start();
    w.point(4, root_at)?;
    let num_runs = runs(tracer).count();
    let run_list = w.offsets(num_runs)?;
    w.point(root.slot(1), run_list)?;
    for (i, (name, run)) in runs(tracer).enumerate() {
        let table = w.table(&[
            Field::Offset(ed::RunData::VT_NAME),
            Field::Offset(ed::RunData::VT_EVENTS),
        ])?;
        w.point(run_list + 4 + 4 * i, table.start())?;
        let name = w.string(name.as_bytes())?;
        w.point(table.slot(0), name)?;
        let events = w.offsets(run.len())?;
        w.point(table.slot(1), events)?;
        for (k, record) in tracer.recorded()[run].iter().map(Cell::get).enumerate() {
            let event = w.table(&[Field::Offset(ed::Event::VT_PROFILE_EVENT)])?;
            w.point(events + 4 + 4 * k, event.start())?;
            let profile = profile_event(&mut w, method, &record, &clock)?;
            w.point(event.slot(0), profile)?;
        }
    }
    w.align(8)?;
    let len = w.len();
    w.put_u32(0, u32::try_from(len - 4).map_err(|_| Full)?);
    Ok(len)
}

/// Writes one record's ProfileEvent (and what it points to); returns its position.
fn profile_event(
    w: &mut Writer<'_>,
    method: &Method<'_>,
    record: &ProfileRecord,
    clock: &Clock,
) -> Result<usize, Full> {
    use ed::ProfileEvent as pe;
    let times = [
        Field::U64(pe::VT_START_TIME, clock.to_ns(record.start)),
        Field::U64(pe::VT_END_TIME, clock.to_ns(record.end)),
    ];
    let chain = i32::try_from(record.chain).unwrap_or(i32::MAX);
    let instruction = i32::try_from(record.instruction).unwrap_or(i32::MAX);
    let name = match record.kind {
        EventKind::LoadMethod => "Program::load_method",
        EventKind::MethodInit => "Method::init",
        EventKind::Execute => "Method::execute",
        EventKind::Operator => "OPERATOR_CALL",
        EventKind::Delegate => "DELEGATE_CALL",
        EventKind::DelegateNode => {
            let mut step = StepName::default();
            let named = method
                .delegate_step_name(record.chain, record.instruction, record.node, &mut step)
                .unwrap_or(false);
            let site = [
                Field::I32(pe::VT_CHAIN_INDEX, chain),
                Field::I32(pe::VT_INSTRUCTION_ID, instruction),
            ];
            if !named || step.len == 0 {
                let id = i32::try_from(record.node).unwrap_or(i32::MAX);
                let t = w.table(&[
                    site[0],
                    site[1],
                    Field::I32(pe::VT_DELEGATE_DEBUG_ID_INT, id),
                    times[0],
                    times[1],
                ])?;
                return Ok(t.start());
            }
            let t = w.table(&[
                site[0],
                site[1],
                Field::Offset(pe::VT_DELEGATE_DEBUG_ID_STR),
                Field::Offset(pe::VT_DELEGATE_DEBUG_METADATA),
                times[0],
                times[1],
            ])?;
            let s = w.string(&step.bytes[..step.len])?;
            w.point(t.slot(2), s)?;
            let metadata = w.offsets(0)?;
            w.point(t.slot(3), metadata)?;
            return Ok(t.start());
        }
    };
    // Load and execute spans belong to no instruction: chain -1, instruction 0, as
    // ExecuTorch writes them.
    let (chain, instruction) = if record.is_instruction() {
        (chain, instruction)
    } else {
        (-1, 0)
    };
    let t = w.table(&[
        Field::Offset(pe::VT_NAME),
        Field::I32(pe::VT_CHAIN_INDEX, chain),
        Field::I32(pe::VT_INSTRUCTION_ID, instruction),
        times[0],
        times[1],
    ])?;
    let s = w.string(name.as_bytes())?;
    w.point(t.slot(0), s)?;
    Ok(t.start())
}

/// A delegate step's name, cut to [`MAX_STEP_NAME`] bytes at a char boundary.
struct StepName {
    bytes: [u8; MAX_STEP_NAME],
    len: usize,
}

impl Default for StepName {
    fn default() -> StepName {
        StepName {
            bytes: [0; MAX_STEP_NAME],
            len: 0,
        }
    }
}

impl fmt::Write for StepName {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            let mut utf8 = [0; 4];
            let c = c.encode_utf8(&mut utf8).as_bytes();
            let end = self.len + c.len();
            if end > MAX_STEP_NAME {
                break;
            }
            self.bytes[self.len..end].copy_from_slice(c);
            self.len = end;
        }
        Ok(())
    }
}
