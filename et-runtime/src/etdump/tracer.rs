//! The event recorder: a caller's fixed buffer of spans, filled while a method loads and
//! executes.

use core::cell::Cell;
use core::fmt;

/// What a recorded span covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// [`Program::load_method_traced`](crate::Program::load_method_traced), whole.
    LoadMethod,
    /// The part of a load that builds the method (values, kernels, delegates).
    MethodInit,
    /// One [`Method::execute_traced`](crate::Method::execute_traced): ends a run.
    Execute,
    /// A KernelCall instruction.
    Operator,
    /// A DelegateCall instruction.
    Delegate,
    /// A step inside a delegate call (for etch's XNNPACK backend, one payload node);
    /// [`ProfileRecord::node`] says which.
    DelegateNode,
}

/// One recorded span. Times are the clock's raw ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfileRecord {
    /// When the span began.
    pub start: u64,
    /// When it ended.
    pub end: u64,
    /// The instruction's index in its chain (0 for load and execute spans).
    pub instruction: u32,
    /// For [`EventKind::DelegateNode`], the delegate's own index of the step.
    pub node: u32,
    /// The instruction's chain.
    pub chain: u32,
    /// What the span covers.
    pub kind: EventKind,
}

impl ProfileRecord {
    /// An empty record, to fill a buffer with before tracing.
    pub const EMPTY: ProfileRecord = ProfileRecord {
        start: 0,
        end: 0,
        instruction: 0,
        node: 0,
        chain: 0,
        kind: EventKind::Execute,
    };

    /// Whether the span belongs to a program instruction (an operator or delegate call,
    /// or a step inside one).
    pub fn is_instruction(&self) -> bool {
        matches!(
            self.kind,
            EventKind::Operator | EventKind::Delegate | EventKind::DelegateNode
        )
    }

    /// The span's length in ticks (0 if the clock went backwards).
    pub fn ticks(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// Where time comes from: a function returning a monotonic tick count, and how long a
/// tick is. On a host, [`Clock::monotonic`] (nanoseconds); on a device, a cycle counter
/// or timer with its period.
#[derive(Clone, Copy)]
pub struct Clock {
    /// The current tick count.
    pub now: fn() -> u64,
    /// A tick lasts `ns_per_tick.0 / ns_per_tick.1` nanoseconds.
    pub ns_per_tick: (u32, u32),
}

impl Clock {
    /// A clock that counts nanoseconds.
    pub const fn nanoseconds(now: fn() -> u64) -> Clock {
        Clock {
            now,
            ns_per_tick: (1, 1),
        }
    }

    /// The host's cheapest monotonic clock: on x86-64 with an invariant time-stamp counter,
    /// the counter (one `rdtsc`, about a tenth of a system-clock read), its period measured
    /// once against the operating system's monotonic clock; elsewhere that clock itself,
    /// in nanoseconds since the first call.
    #[cfg(feature = "std")]
    pub fn monotonic() -> Clock {
        #[cfg(target_arch = "x86_64")]
        if let Some(clock) = tsc::clock() {
            return clock;
        }
        Clock::system()
    }

    /// Nanoseconds since the first call, from the operating system's monotonic clock
    /// (`Instant`).
    #[cfg(feature = "std")]
    pub fn system() -> Clock {
        fn now() -> u64 {
            static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            let elapsed = EPOCH.get_or_init(std::time::Instant::now).elapsed();
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
        }
        Clock::nanoseconds(now)
    }

    /// `ticks` in nanoseconds (saturating).
    pub fn to_ns(&self, ticks: u64) -> u64 {
        let (num, den) = self.ns_per_tick;
        let ns = u128::from(ticks) * u128::from(num) / u128::from(den.max(1));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

/// The x86-64 time-stamp counter as a clock.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod tsc {
    use super::Clock;
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    fn now() -> u64 {
        // SAFETY: `rdtsc` exists on every x86-64 CPU and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// Whether the counter ticks at a constant rate in every power state (CPUID leaf
    /// 0x8000_0007, EDX bit 8), so that ticks measure time.
    fn invariant() -> bool {
        // Leaf 0x8000_0000 reports the highest extended leaf; 0x8000_0007 is only
        // queried when it is implemented.
        use core::arch::x86_64::__cpuid;
        __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
    }

    /// The counter's period, measured once over 5 ms of the system clock; `None` when the
    /// counter is not invariant or did not advance.
    pub(super) fn clock() -> Option<Clock> {
        static PERIOD: OnceLock<Option<(u32, u32)>> = OnceLock::new();
        let period = *PERIOD.get_or_init(|| {
            if !invariant() {
                return None;
            }
            let (t0, c0) = (Instant::now(), now());
            while t0.elapsed() < Duration::from_millis(5) {}
            let (ns, ticks) = (t0.elapsed().as_nanos(), now().wrapping_sub(c0));
            // ns per tick as a fraction with a 32-bit numerator and denominator: scale
            // both down together until they fit.
            let (mut num, mut den) = (ns, u128::from(ticks));
            while num > u128::from(u32::MAX) || den > u128::from(u32::MAX) {
                num >>= 1;
                den >>= 1;
            }
            (num > 0 && den > 0).then_some((num as u32, den as u32))
        });
        period.map(|ns_per_tick| Clock { now, ns_per_tick })
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clock")
            .field("ns_per_tick", &self.ns_per_tick)
            .finish()
    }
}

/// Records spans into a buffer the caller owns: no allocation, and per event only two
/// clock reads and one store. Pass it to
/// [`Program::load_method_traced`](crate::Program::load_method_traced) and
/// [`Method::execute_traced`](crate::Method::execute_traced); afterwards read
/// [`records`](Self::records) or write an ETDump with
/// [`Method::write_etdump`](crate::Method::write_etdump).
///
/// A full buffer keeps its first events and counts the rest in
/// [`dropped`](Self::dropped).
pub struct EventTracer<'b> {
    records: &'b [Cell<ProfileRecord>],
    len: Cell<usize>,
    dropped: Cell<usize>,
    clock: Clock,
    /// The DelegateCall running now, as (chain, instruction), for its steps' records.
    delegate: Cell<(u32, u32)>,
}

impl<'b> EventTracer<'b> {
    /// A tracer that records into `buffer` (its contents are overwritten) with `clock`.
    pub fn new(buffer: &'b mut [ProfileRecord], clock: Clock) -> EventTracer<'b> {
        EventTracer {
            records: Cell::from_mut(buffer).as_slice_of_cells(),
            len: Cell::new(0),
            dropped: Cell::new(0),
            clock,
            delegate: Cell::new((0, 0)),
        }
    }

    /// The spans recorded so far, in the order they ended.
    pub fn records(&self) -> impl ExactSizeIterator<Item = ProfileRecord> + '_ {
        self.recorded().iter().map(Cell::get)
    }

    /// The filled part of the buffer.
    pub(crate) fn recorded(&self) -> &[Cell<ProfileRecord>] {
        &self.records[..self.len.get()]
    }

    /// How many spans did not fit in the buffer.
    pub fn dropped(&self) -> usize {
        self.dropped.get()
    }

    /// The clock the spans were timed with.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Forgets every record (the buffer is reused from its start).
    pub fn clear(&mut self) {
        self.len.set(0);
        self.dropped.set(0);
    }

    #[inline(always)]
    pub(crate) fn now(&self) -> u64 {
        (self.clock.now)()
    }

    #[inline]
    pub(crate) fn record(&self, record: ProfileRecord) {
        let n = self.len.get();
        match self.records.get(n) {
            Some(slot) => {
                slot.set(record);
                self.len.set(n + 1);
            }
            None => self.dropped.set(self.dropped.get() + 1),
        }
    }

    /// Records instruction `instruction` of chain `chain`.
    #[inline]
    pub(crate) fn record_instruction(
        &self,
        kind: EventKind,
        chain: u32,
        instruction: u32,
        start: u64,
    ) {
        self.record(ProfileRecord {
            start,
            end: self.now(),
            instruction,
            node: 0,
            chain,
            kind,
        });
    }

    /// Records a span that belongs to no instruction.
    pub(crate) fn record_span(&self, kind: EventKind, start: u64) {
        self.record_instruction(kind, 0, 0, start);
    }

    /// Marks the DelegateCall about to run, for the records of its steps.
    #[cfg(feature = "backends")]
    pub(crate) fn enter_delegate(&self, chain: u32, instruction: u32) {
        self.delegate.set((chain, instruction));
    }

    /// Records step `node` of the running DelegateCall.
    pub(crate) fn record_delegate_node(&self, start: u64, node: u32) {
        let (chain, instruction) = self.delegate.get();
        self.record(ProfileRecord {
            start,
            end: self.now(),
            instruction,
            node,
            chain,
            kind: EventKind::DelegateNode,
        });
    }
}

impl fmt::Debug for EventTracer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventTracer")
            .field("len", &self.len.get())
            .field("capacity", &self.records.len())
            .field("dropped", &self.dropped.get())
            .field("clock", &self.clock)
            .finish()
    }
}
