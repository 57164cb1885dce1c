//! `etch run --profile` and `--etdump`: the tracer's buffer, the per-operator table and
//! the ETDump file.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use et_runtime::etdump::{EventKind, EventTracer, ProfileRecord};
use et_runtime::{Method, MethodMeta, Program};

use crate::{format, Failure};

/// Records enough for `iterations` executes of `method` and its load: each execute
/// records at most one span per instruction, one per delegate node and its own. (A
/// program whose jumps run instructions more than once may fill it; the table then says
/// how many spans were dropped.)
pub fn record_buffer(
    program: &Program<'_>,
    meta: &MethodMeta<'_>,
    method: &str,
    iterations: u32,
) -> Vec<ProfileRecord> {
    let nodes: usize = crate::delegates::summarize(program, method)
        .map(|delegates| delegates.iter().flat_map(|d| d.node_kinds.values()).sum())
        .unwrap_or(0);
    let per_run = meta.num_instructions() + nodes + 1;
    vec![ProfileRecord::EMPTY; 2 + per_run.saturating_mul(iterations as usize)]
}

/// Writes the ETDump of what `tracer` recorded to `path`.
pub fn write_etdump(
    method: &Method<'_>,
    tracer: &EventTracer<'_>,
    path: &Path,
) -> Result<(), Failure> {
    let mut out = vec![0u8; tracer.etdump_size_bound()];
    let len = method
        .write_etdump(tracer, &mut out)
        .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
    std::fs::write(path, &out[..len])
        .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))
}

/// One row of the table: every span of one operator (or delegate, or delegate node
/// kind), in microseconds.
#[derive(Default)]
struct Row {
    calls: usize,
    total: f64,
    min: f64,
    max: f64,
}

impl Row {
    fn add(&mut self, us: f64) {
        if self.calls == 0 || us < self.min {
            self.min = us;
        }
        self.max = self.max.max(us);
        self.total += us;
        self.calls += 1;
    }
}

/// One timed call, for the slowest-calls list.
struct Call {
    run: usize,
    chain: u32,
    instruction: u32,
    name: String,
    us: f64,
}

/// What the tracer recorded, summarized.
pub struct Profile {
    /// Per operator or delegate call, sorted by total time (largest first).
    calls: Vec<(String, Row)>,
    /// Per delegate node kind (`XnnpackBackend: Conv2d`), sorted the same way.
    steps: Vec<(String, Row)>,
    slowest: Vec<Call>,
    /// The executes' total time, what `share` divides by.
    executes: Row,
    load: Option<f64>,
    dropped: usize,
}

/// How many of the slowest calls are listed.
const SLOWEST: usize = 10;

impl Profile {
    /// The tables of `tracer`'s records; delegate nodes by kind, or with `per_node` one
    /// row each.
    pub fn new(method: &Method<'_>, tracer: &EventTracer<'_>, per_node: bool) -> Profile {
        let clock = tracer.clock();
        let us = |r: &ProfileRecord| clock.to_ns(r.ticks()) as f64 / 1e3;
        let mut calls: BTreeMap<String, Row> = BTreeMap::new();
        let mut steps: BTreeMap<String, Row> = BTreeMap::new();
        let mut slowest = Vec::new();
        let mut names: BTreeMap<(u32, u32), String> = BTreeMap::new();
        let mut executes = Row::default();
        let mut load = None;
        let mut run = 1;
        for r in tracer.records() {
            match r.kind {
                EventKind::LoadMethod => load = Some(us(&r)),
                EventKind::MethodInit => {}
                EventKind::Execute => {
                    executes.add(us(&r));
                    run += 1;
                }
                EventKind::Operator | EventKind::Delegate => {
                    // Named once per instruction: a name looks up the kernel it runs.
                    let name = names
                        .entry((r.chain, r.instruction))
                        .or_insert_with(|| instruction_name(method, &r))
                        .clone();
                    calls.entry(name.clone()).or_default().add(us(&r));
                    slowest.push(Call {
                        run,
                        chain: r.chain,
                        instruction: r.instruction,
                        name,
                        us: us(&r),
                    });
                }
                EventKind::DelegateNode => {
                    let backend = method
                        .instruction_backend(r.chain, r.instruction)
                        .unwrap_or("delegate");
                    let mut step = String::new();
                    let named = method
                        .delegate_step_name(r.chain, r.instruction, r.node, &mut step)
                        .unwrap_or(false);
                    // `Conv2d #3` counts as `Conv2d`, unless each node has its row.
                    let kind = match step.rsplit_once(" #") {
                        Some((kind, _)) if named && !per_node => kind.to_string(),
                        _ if named => step,
                        _ => format!("step {}", r.node),
                    };
                    steps
                        .entry(format!("{backend}: {kind}"))
                        .or_default()
                        .add(us(&r));
                }
            }
        }
        slowest.sort_by(|a, b| b.us.total_cmp(&a.us));
        slowest.truncate(SLOWEST);
        let by_total = |map: BTreeMap<String, Row>| {
            let mut rows: Vec<_> = map.into_iter().collect();
            rows.sort_by(|a, b| b.1.total.total_cmp(&a.1.total));
            rows
        };
        Profile {
            calls: by_total(calls),
            steps: by_total(steps),
            slowest,
            executes,
            load,
            dropped: tracer.dropped(),
        }
    }

    fn share(&self, row: &Row) -> f64 {
        if self.executes.total > 0.0 {
            100.0 * row.total / self.executes.total
        } else {
            0.0
        }
    }

    /// The tables, as text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let runs = self.executes.calls;
        let _ = writeln!(
            out,
            "profile: {runs} execute{} ({:.1} us in total, mean {:.1} us){}",
            if runs == 1 { "" } else { "s" },
            self.executes.total,
            self.executes.total / runs.max(1) as f64,
            self.load
                .map(|us| format!("; load_method {us:.1} us"))
                .unwrap_or_default()
        );
        #[cfg(feature = "xnnpack")]
        {
            // Which int8 kernels this CPU takes: under emulation or on a device, the
            // table's times belong to these paths.
            let k = et_xnnpack::int8_kernels();
            let _ = writeln!(out, "int8 gemm: {}; qd8 gemm: {}", k.gemm, k.qd8_gemm);
        }
        self.table(&mut out, "operator", &self.calls);
        if !self.steps.is_empty() {
            out.push('\n');
            self.table(&mut out, "inside delegates", &self.steps);
        }
        if !self.slowest.is_empty() {
            let _ = writeln!(out, "\nslowest calls:");
            for c in &self.slowest {
                let _ = writeln!(
                    out,
                    "  {:>10.1} us  run {} chain {} instruction {}  {}",
                    c.us, c.run, c.chain, c.instruction, c.name
                );
            }
        }
        if self.dropped > 0 {
            let _ = writeln!(
                out,
                "\n{} spans did not fit in the profile buffer and are missing",
                self.dropped
            );
        }
        out
    }

    fn table(&self, out: &mut String, title: &str, rows: &[(String, Row)]) {
        let width = rows
            .iter()
            .map(|(name, _)| name.len())
            .chain([title.len()])
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "{title:<width$}  {:>6}  {:>10}  {:>9}  {:>9}  {:>9}  {:>6}",
            "calls", "total us", "mean us", "min us", "max us", "share"
        );
        for (name, row) in rows {
            let _ = writeln!(
                out,
                "{name:<width$}  {:>6}  {:>10.1}  {:>9.2}  {:>9.2}  {:>9.2}  {:>5.1}%",
                row.calls,
                row.total,
                row.total / row.calls.max(1) as f64,
                row.min,
                row.max,
                self.share(row)
            );
        }
    }

    /// The tables, as a JSON object.
    pub fn json(&self) -> String {
        let rows = |rows: &[(String, Row)]| {
            rows.iter()
                .map(|(name, r)| {
                    format!(
                        "{{\"name\":{},\"calls\":{},\"total_us\":{:.3},\"mean_us\":{:.3},\"min_us\":{:.3},\"max_us\":{:.3},\"share\":{:.4}}}",
                        format::json_str(name),
                        r.calls,
                        r.total,
                        r.total / r.calls.max(1) as f64,
                        r.min,
                        r.max,
                        self.share(r) / 100.0
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let slowest = self
            .slowest
            .iter()
            .map(|c| {
                format!(
                    "{{\"run\":{},\"chain\":{},\"instruction\":{},\"name\":{},\"us\":{:.3}}}",
                    c.run,
                    c.chain,
                    c.instruction,
                    format::json_str(&c.name),
                    c.us
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        format!(
            "{{\"executes\":{},\"execute_total_us\":{:.3},\"load_method_us\":{},\"operators\":[{}],\"delegate_steps\":[{}],\"slowest\":[{slowest}],\"dropped\":{}}}",
            self.executes.calls,
            self.executes.total,
            self.load.map_or("null".to_string(), |us| format!("{us:.3}")),
            rows(&self.calls),
            rows(&self.steps),
            self.dropped
        )
    }
}

/// `aten::convolution.out` for a KernelCall, `DelegateCall XnnpackBackend` for a
/// DelegateCall. A call that load-time rewrites changed says so, without spaces (tools
/// split the table's rows on whitespace): `aten::convolution.out[etch::...]` when it runs
/// a fused kernel, `aten::hardtanh.out[no-op]` when it runs nothing since load (absorbed
/// into a fused call, or a permute become a view of its constant).
fn instruction_name(method: &Method<'_>, r: &ProfileRecord) -> String {
    if let Some(op) = method.instruction_operator(r.chain, r.instruction) {
        let op = op.to_string();
        return match method.instruction_kernel(r.chain, r.instruction) {
            None => format!("{op}[no-op]"),
            Some(k) if k.name().to_string() != op => format!("{op}[{}]", k.name()),
            Some(_) => op,
        };
    }
    match method.instruction_backend(r.chain, r.instruction) {
        Some(backend) => format!("DelegateCall {backend}"),
        None => format!("instruction {}", r.instruction),
    }
}
