//! The built-in XNNPACK backend on the XNNPACK-lowered fixtures (made by ExecuTorch 1.5.1's
//! `XnnpackPartitioner`, outputs from ExecuTorch's own runtime with XNNPACK): each runs
//! and matches within its io.yaml tolerance; every payload's node kinds are what the
//! fixture table says; corrupted payloads fail cleanly.

use std::collections::BTreeMap;

use et_runtime::{FileLoader, Program};
use et_xnnpack_schema::Graph;
use etch_tests::{compare, fixture, fixtures_dir, load_and_run_bytes, run_case, IoSpec};

// Link the kernel library and the backend: nothing else in this test names them.
use et_ops as _;
use et_xnnpack as _;

fn run_fixture(name: &str) {
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, name);
    let got = run_case(&dir, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn mlp_xnnpack_matches_executorch() {
    run_fixture("mlp_xnnpack");
}

#[test]
fn small_cnn_xnnpack_matches_executorch() {
    run_fixture("small_cnn_xnnpack");
}

#[test]
fn mv2_xnnpack_matches_executorch() {
    run_fixture("mv2_xnnpack");
}

#[test]
fn mv2_xnnpack_q8_matches_executorch() {
    run_fixture("mv2_xnnpack_q8");
    // XNNPACK's integer arithmetic followed exactly gives ExecuTorch's output bit for bit
    // (the io.yaml tolerance of two steps leaves room for none of it to be off).
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, "mv2_xnnpack_q8");
    let got = run_case(&dir, &spec).unwrap();
    let want = std::fs::read(dir.join(&spec.outputs[0].file)).unwrap();
    assert!(got[0].bytes == want, "mv2_xnnpack_q8 is not bit-exact");
}

/// Runs `q8/NAME` (an int8 program from the XNNPACK quantizer, io in `fixtures/q8`),
/// compares it within its io.yaml tolerance and returns its largest error in output
/// quantization steps (the tolerance is two steps).
fn run_q8_fixture(name: &str) -> f64 {
    let dir = fixtures_dir().join("q8");
    let spec = IoSpec::read(&dir, name);
    let got = run_case(&dir, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = std::fs::read(dir.join(&spec.outputs[0].file)).unwrap();
    let floats = |b: &[u8]| -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let (g, w) = (floats(&got[0].bytes), floats(&want));
    assert_eq!(g.len(), w.len(), "{name}");
    let worst = g
        .iter()
        .zip(&w)
        .map(|(a, b)| f64::from((a - b).abs()))
        .fold(0.0, f64::max);
    worst / (spec.atol / 2.0)
}

#[test]
fn q8_fire_matches_executorch() {
    // MaxPooling2d (3x3 stride 2 in ceil mode, as padding; 2x2) and Concatenate2, qint8.
    let steps = run_q8_fixture("q8_fire");
    // XNNPACK's integer arithmetic followed exactly gives ExecuTorch's output bit for bit.
    assert_eq!(steps, 0.0, "q8_fire is {steps} output steps off");
}

#[test]
fn q8_se_matches_executorch() {
    // Squeeze-excitation: qint8 Multiply with a broadcast [1, 1, 1, c] operand.
    let steps = run_q8_fixture("q8_se");
    assert_eq!(steps, 0.0, "q8_se is {steps} output steps off");
}

#[test]
fn q8_pool_matches_executorch() {
    // fp32 AvgPooling2d between Converts (ExecuTorch lowers average pooling as fp32 only).
    let steps = run_q8_fixture("q8_pool");
    assert_eq!(steps, 0.0, "q8_pool is {steps} output steps off");
}

/// `q8/q8_se.pte` with fields of its first payload's nodes rewritten: each `(node,
/// kind, input, output)` gives the node that kind (a tag of `_XNNNode1x1`'s kinds) and
/// those value ids.
fn patched_se(patches: &[(usize, u8, u32, u32)]) -> Vec<u8> {
    use et_schema::reader::Table;
    use et_xnnpack_schema::fields as xf;
    type N<'a> = xf::_XNNNode1x1<'a>;
    let mut bytes = std::fs::read(fixtures_dir().join("q8/q8_se.pte")).unwrap();
    let payload = payload_range(&bytes);
    let layout = et_xnnpack_schema::header::locate(&bytes[payload.clone()]).unwrap();
    let base = payload.start + layout.graph.start;
    let graph = bytes[base..payload.start + layout.graph.end].to_vec();
    let root = Table::root(&graph).unwrap();
    let nodes = root.vector(xf::XNNGraph::VT_XNODES).unwrap();
    // A field's file position: the table's, plus the offset its vtable gives.
    let field = |t: Table<'_>, vt: u16| {
        let at = t.pos();
        let soffset = i32::from_le_bytes(graph[at..at + 4].try_into().unwrap());
        let vtable = (at as i64 - i64::from(soffset)) as usize + usize::from(vt);
        let offset = u16::from_le_bytes(graph[vtable..vtable + 2].try_into().unwrap());
        assert_ne!(offset, 0, "field {vt} absent");
        base + at + usize::from(offset)
    };
    for &(i, kind, input, output) in patches {
        let node = nodes.table(i).unwrap();
        bytes[field(node, xf::XNode::VT_XNODE_UNION_TYPE)] = kind;
        let inner = node.table(xf::XNode::VT_XNODE_UNION).unwrap();
        for (vt, id) in [(N::VT_INPUT_ID, input), (N::VT_OUTPUT_ID, output)] {
            let at = field(inner, vt);
            bytes[at..at + 4].copy_from_slice(&id.to_le_bytes());
        }
    }
    bytes
}

/// Runs patched `q8_se` bytes on the fixture's input; its output and largest error
/// against ExecuTorch's, in output quantization steps.
fn run_patched_se(bytes: &[u8], tag: &str) -> (Vec<f32>, f64) {
    let dir = fixtures_dir().join("q8");
    let mut spec = IoSpec::read(&dir, "q8_se");
    let path = std::env::temp_dir().join(format!("etch_q8_se_{tag}_{}.pte", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    spec.program = path.to_str().unwrap().to_owned();
    let got = run_case(&dir, &spec).unwrap_or_else(|e| panic!("{tag}: {e}"));
    std::fs::remove_file(&path).unwrap();
    let floats = |b: &[u8]| -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let want = floats(&std::fs::read(dir.join(&spec.outputs[0].file)).unwrap());
    let got = floats(&got[0].bytes);
    let worst = got
        .iter()
        .zip(&want)
        .map(|(a, b)| f64::from((a - b).abs()))
        .fold(0.0, f64::max);
    (got, worst / (spec.atol / 2.0))
}

#[test]
fn qint8_lookup_table_activations_run_in_a_graph() {
    use et_xnnpack_schema::fields::XNodeUnion as U;
    // q8_se runs its first Hardswish (node 4, values 6 -> 7) between Converts (node 3:
    // 4 -> 6, node 5: 7 -> 8), and its Sigmoid (node 26, 40 -> 41) between nodes 25
    // (38 -> 40) and 27 (41 -> 42). Rewired, each activation runs on qint8 (4 -> 8,
    // 38 -> 42) and the Convert after it becomes the fp32 activation, on values nothing
    // reads. The table quantizes the function once where the graph rounded twice, so
    // the output stays within the fixture's two steps of ExecuTorch's.
    let hswish = U::XNNHardswish.0;
    let q8 = patched_se(&[(4, hswish, 4, 8), (5, hswish, 6, 7)]);
    let (_, steps) = run_patched_se(&q8, "hardswish");
    assert!(steps <= 2.0, "qint8 Hardswish: {steps} steps off");
    let sigmoid = U::XNNSigmoid.0;
    let q8 = patched_se(&[(26, sigmoid, 38, 42), (27, sigmoid, 40, 41)]);
    let (_, steps) = run_patched_se(&q8, "sigmoid");
    assert!(steps <= 2.0, "qint8 Sigmoid: {steps} steps off");
    // Tanh in Sigmoid's place: the qint8 table against the fp32 function between the
    // Converts (etch's fp32 Tanh), within the same two steps.
    let tanh = U::XNNTanh.0;
    let fp32 = patched_se(&[(26, tanh, 40, 41)]);
    let q8 = patched_se(&[(26, tanh, 38, 42), (27, tanh, 40, 41)]);
    let ((a, _), (b, _)) = (
        run_patched_se(&fp32, "tanh32"),
        run_patched_se(&q8, "tanh8"),
    );
    let atol = IoSpec::read(&fixtures_dir().join("q8"), "q8_se").atol as f32;
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= atol, "qint8 Tanh {y} vs fp32 {x}");
    }
}

#[test]
fn mlp_xnnpack_qd8_matches_executorch() {
    // Two linears on int8 weights with activations quantized per row at run time.
    run_fixture("mlp_xnnpack_qd8");
}

#[test]
fn linear_xnnpack_qb4_matches_executorch() {
    // 4-bit weights in blocks of 32 with bfloat16 scales, activations per row.
    run_fixture("linear_xnnpack_qb4");
}

#[test]
fn tiny_transformer_xnnpack_matches_executorch() {
    run_fixture("tiny_transformer_xnnpack");
}

#[derive(serde::Deserialize)]
struct PayloadFacts {
    delegate_index: usize,
    method: String,
    node_kinds: BTreeMap<String, usize>,
    num_nodes: usize,
}

/// Checks each of `names`' payloads (in `dir`) against `dir`'s `xnnpack_nodes.yaml`;
/// the number of payloads checked.
fn check_node_kinds(dir: &std::path::Path, names: &[&str]) -> usize {
    let table: BTreeMap<String, Vec<PayloadFacts>> =
        serde_yaml::from_str(&std::fs::read_to_string(dir.join("xnnpack_nodes.yaml")).unwrap())
            .unwrap();
    let mut checked = 0;
    for name in names {
        let loader = FileLoader::open(dir.join(format!("{name}.pte"))).unwrap();
        let program = Program::load(&loader).unwrap();
        for facts in &table[*name] {
            let delegate = program
                .delegates(&facts.method)
                .unwrap()
                .nth(facts.delegate_index)
                .unwrap()
                .unwrap();
            assert_eq!(delegate.backend_id, "XnnpackBackend");
            let graph = Graph::parse(delegate.payload).unwrap();
            assert_eq!(graph.num_nodes(), facts.num_nodes, "{name}");
            let mut kinds = BTreeMap::new();
            for i in 0..graph.num_nodes() {
                let kind = graph.node(i).unwrap().kind.name();
                *kinds.entry(format!("XNN{kind}")).or_insert(0) += 1;
            }
            assert_eq!(
                kinds, facts.node_kinds,
                "{name} delegate {}",
                facts.delegate_index
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn payload_node_kinds_match_the_fixture_table() {
    let names = [
        "mlp_xnnpack",
        "mv2_xnnpack",
        "small_cnn_xnnpack",
        "tiny_transformer_xnnpack",
    ];
    assert_eq!(check_node_kinds(&fixtures_dir(), &names), 1 + 1 + 1 + 5);
    let q8 = ["q8_fire", "q8_se", "q8_pool"];
    assert_eq!(check_node_kinds(&fixtures_dir().join("q8"), &q8), 3);
}

/// The byte range of `name`'s first delegate payload inside the file.
fn payload_range(bytes: &[u8]) -> std::ops::Range<usize> {
    let loader = FileLoader::from_bytes(bytes);
    let program = Program::load(&loader).unwrap();
    let payload = program
        .delegates("forward")
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .payload;
    let start = payload.as_ptr() as usize - loader.bytes().as_ptr() as usize;
    start..start + payload.len()
}

#[test]
fn corrupted_payloads_fail_cleanly() {
    let original = std::fs::read(fixture("mlp_xnnpack.pte")).unwrap();
    let range = payload_range(&original);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2000 {
        let mut bytes = original.clone();
        for _ in 0..(1 + next() % 4) {
            let at = range.start + (next() as usize) % range.len();
            bytes[at] = next() as u8;
        }
        load_and_run_bytes(&bytes);
    }
}

#[test]
fn corrupted_quantized_graphs_fail_cleanly() {
    corrupt_graph_bytes(&fixture("mv2_xnnpack_q8.pte"), 300, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn corrupted_q8_graphs_fail_cleanly() {
    // The int8 kinds beyond MobileNetV2's: MaxPooling2d, Concatenate2, Multiply,
    // AvgPooling2d (fp32), Subtract, LeakyReLU, Sigmoid and Hardswish between Converts.
    for (k, name) in ["q8_fire", "q8_se", "q8_pool"].into_iter().enumerate() {
        let path = fixtures_dir().join("q8").join(format!("{name}.pte"));
        corrupt_graph_bytes(&path, 600, 0x2545_f491_4f6c_dd1d ^ k as u64);
    }
}

/// Loads and runs the program at `path` `cases` times with 1 to 4 random bytes of its
/// first payload's flatbuffer graph changed (not its constant data, where a change is
/// just another weight): quantization parameters, datatypes, shapes and node fields.
fn corrupt_graph_bytes(path: &std::path::Path, cases: usize, seed: u64) {
    let original = std::fs::read(path).unwrap();
    let payload = payload_range(&original);
    let le32 = |at: usize| {
        let b = &original[payload.start + at..payload.start + at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
    };
    // The XNNPACK header: flatbuffer offset at 10 and size at 14.
    let graph = payload.start + le32(10)..payload.start + le32(10) + le32(14);
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..cases {
        let mut bytes = original.clone();
        for _ in 0..(1 + next() % 4) {
            let at = graph.start + (next() as usize) % graph.len();
            bytes[at] = next() as u8;
        }
        // Its estimate is about 290 MB (every value's worst case); the pages it touches
        // are a fraction.
        etch_tests::load_and_run_bytes_within(&bytes, 1 << 29);
    }
}

#[test]
fn truncated_payloads_fail_cleanly() {
    let original = std::fs::read(fixture("mlp_xnnpack.pte")).unwrap();
    let range = payload_range(&original);
    // Cut the payload short by overwriting its tail with what follows (a shifted file):
    // the segment table still points at the old range, so the graph reads garbage there.
    for cut in (1..range.len()).step_by(7) {
        let mut bytes = original.clone();
        bytes.drain(range.start + cut..range.end);
        bytes.resize(original.len(), 0);
        load_and_run_bytes(&bytes);
    }
}

#[test]
fn mv2_xnnpack_ptd_matches_executorch_with_its_data_file() {
    run_fixture("mv2_xnnpack_ptd");
}

#[test]
fn mv2_xnnpack_ptd_without_its_data_file_names_the_missing_key() {
    // ExecuTorch 1.5.1 crashes (SIGSEGV) here; etch refuses the delegate at load.
    let loader = FileLoader::open(fixture("mv2_xnnpack_ptd.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut buffers =
        etch_tests::MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = et_runtime::MemoryManager::new(method_mem, &mut planned, scratch);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(err.error, et_runtime::Error::NotFound);
    let text = err.to_string();
    assert!(
        text.contains("backend XnnpackBackend needs named data"),
        "{text}"
    );
    assert!(text.contains("no .ptd data file was given"), "{text}");
    // The key is a SHA-256 hex string.
    let key = text.split('`').nth(1).unwrap();
    assert_eq!(key.len(), 64, "{text}");
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{text}");
}

/// `mlp_xnnpack.pte` with one byte of its payload changed so that `pick(graph)` holds;
/// the load error's text.
fn load_error_after_patching(pick: impl Fn(&Graph<'_>) -> bool, value: u8) -> String {
    let original = std::fs::read(fixture("mlp_xnnpack.pte")).unwrap();
    let range = payload_range(&original);
    for at in range.clone() {
        let mut bytes = original.clone();
        bytes[at] = value;
        if !Graph::parse(&bytes[range.clone()]).is_ok_and(|g| pick(&g)) {
            continue;
        }
        let loader = FileLoader::from_bytes(&bytes);
        let program = Program::load(&loader).unwrap();
        let mut buffers =
            etch_tests::MethodBuffers::for_program_method(&program, "forward", 1 << 20).unwrap();
        let (method_mem, mut planned, scratch) = buffers.split();
        let mut memory = et_runtime::MemoryManager::new(method_mem, &mut planned, scratch);
        return program
            .load_method("forward", &mut memory)
            .unwrap_err()
            .to_string();
    }
    panic!("no single byte gives the wanted payload");
}

#[test]
fn an_unsupported_node_kind_is_named_with_its_index() {
    // Tag 36: ScaledDotProductAttention, which this backend does not run.
    let text = load_error_after_patching(|g| g.node(0).is_ok_and(|n| n.kind.0 == 36), 36);
    assert!(
        text.contains("node 0 (ScaledDotProductAttention)"),
        "{text}"
    );
    assert!(text.contains("not in this build"), "{text}");
}

#[test]
fn a_kind_without_the_node_datatype_is_named_with_it() {
    // Tag 18: Convert, on the fp32 values of the mlp's first FullyConnected. This backend
    // runs Convert in the qint8 and qdint8 families only (a conversion has a quantized
    // side), so the (kind, datatype) lookup fails the way a selection without
    // `Convert:fp32` would, naming the node, its kind and the datatype.
    let text = load_error_after_patching(|g| g.node(0).is_ok_and(|n| n.kind.0 == 18), 18);
    assert!(text.contains("delegate 0 (XnnpackBackend)"), "{text}");
    assert!(text.contains("node 0 (Convert)"), "{text}");
    assert!(
        text.contains("datatype fp32 is not in this build for this kind"),
        "{text}"
    );
}

#[test]
fn an_unsupported_datatype_is_refused() {
    // Datatype 14: bf16 on an fp32 graph's first value.
    let text = load_error_after_patching(|g| g.value(0).is_ok_and(|v| v.datatype.0 == 14), 14);
    assert!(text.contains("delegate 0 (XnnpackBackend)"), "{text}");
    assert!(
        text.contains("a datatype this backend does not implement"),
        "{text}"
    );
    // Datatype 3: qint8, but the value has no quantization parameters.
    let text = load_error_after_patching(|g| g.value(0).is_ok_and(|v| v.datatype.0 == 3), 3);
    assert!(
        text.contains("lacks per-tensor quantization parameters"),
        "{text}"
    );
}

/// The node-kind fixtures of `fixtures/xnnpack_ops` (written by
/// `scripts/gen-xnnpack-op-fixtures.py`): each matches ExecuTorch's output within its
/// io.yaml tolerance, and its delegate holds the (kind, datatype family) pairs the case
/// is there for.
fn run_op_fixture(name: &str, variants: &[&str]) {
    let dir = fixtures_dir().join("xnnpack_ops");
    let spec = IoSpec::read(&dir, name);
    let bytes = std::fs::read(dir.join(&spec.program)).unwrap();
    let loader = FileLoader::from_bytes(&bytes);
    let program = Program::load(&loader).unwrap();
    let mut found = std::collections::BTreeSet::new();
    for delegate in program.delegates(&spec.method).unwrap() {
        let graph = Graph::parse(delegate.unwrap().payload).unwrap();
        for v in graph.node_variants() {
            found.insert(v.unwrap().to_string());
        }
    }
    for want in variants {
        assert!(found.contains(*want), "{name}: no {want} in {found:?}");
    }
    let got = run_case(&dir, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&dir, &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

macro_rules! op_fixtures {
    ($($test:ident: $name:literal => [$($variant:literal),*];)*) => {$(
        #[test]
        fn $test() {
            run_op_fixture($name, &[$($variant),*]);
        }
    )*};
}

op_fixtures! {
    constant_pad_matches_executorch: "pad" => ["StaticConstantPad:fp32"];
    constant_pad_before_conv_matches_executorch: "pad_conv" => ["StaticConstantPad:fp32", "Conv2d:fp32"];
    resize_half_pixel_matches_executorch: "resize_half_pixel" => ["StaticResizeBilinear2D:fp32"];
    resize_align_corners_matches_executorch: "resize_align_corners" => ["StaticResizeBilinear2D:fp32"];
    unary_math_matches_executorch: "unary_math" => [
        "Negate:fp32", "Square:fp32", "SquareRoot:fp32", "ReciprocalSquareRoot:fp32", "Abs:fp32",
        "Floor:fp32", "Ceiling:fp32", "Log:fp32", "Exp:fp32", "Sin:fp32", "Cos:fp32"
    ];
    binary_math_matches_executorch: "binary_math" => ["Minimum:fp32", "Maximum:fp32", "PReLU:fp32"];
    slice_matches_executorch: "slice" => ["StaticSlice:fp32"];
    quantized_slice_matches_executorch: "slice_qint8" => ["StaticSlice:qint8", "Conv2d:qint8"];
    quantized_pad_matches_executorch: "pad_qint8" => ["StaticConstantPad:qint8", "Conv2d:qint8"];
    conv_transpose_matches_executorch: "conv_transpose" => ["ConvTranspose2d:fp32"];
    shared_linear_matches_executorch: "shared_linear" => ["FullyConnected:fp32"];
    quantized_tensors_cross_delegate_boundaries: "cat_qint8" => ["Conv2d:qint8"];
    quantized_mask_add_matches_executorch: "mask_add_qint8" => ["Add:qint8", "FullyConnected:qint8"];
}

#[test]
fn quantized_slice_and_pad_are_bit_exact() {
    // Integer arithmetic followed exactly: ExecuTorch's outputs to the bit (the padding
    // value quantized with the output's parameters as XNNPACK rounds it).
    let dir = fixtures_dir().join("xnnpack_ops");
    // cat_qint8: int8 tensors passed between delegates and the portable cat; the
    // mask add: a scale ratio under XNNPACK's fixed-point range, whose multiplier
    // rounds to 0 as in XNNPACK's released build.
    for name in ["slice_qint8", "pad_qint8", "cat_qint8", "mask_add_qint8"] {
        let spec = IoSpec::read(&dir, name);
        let got = run_case(&dir, &spec).unwrap();
        let want = std::fs::read(dir.join(&spec.outputs[0].file)).unwrap();
        assert!(got[0].bytes == want, "{name} is not bit-exact");
    }
}

#[test]
fn every_single_byte_change_of_the_new_kinds_graphs_fails_cleanly() {
    // Each byte of the flatbuffer graph (fields of StaticConstantPad, StaticResizeBilinear2D,
    // ConvTranspose2d and qint8 StaticSlice, their values and shapes) set to values that
    // make sizes, ids, offsets and flags large, zero, negative or off by one: load and
    // run must return (an error or outputs), never panic or read out of bounds.
    for name in [
        "pad",
        "resize_align_corners",
        "conv_transpose",
        "slice_qint8",
        "cat_qint8",
    ] {
        let original =
            std::fs::read(fixtures_dir().join(format!("xnnpack_ops/{name}.pte"))).unwrap();
        let payload = payload_range(&original);
        let le32 = |at: usize| {
            let b = &original[payload.start + at..payload.start + at + 4];
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        };
        // The XNNPACK header: flatbuffer offset at 10 and size at 14.
        let graph = payload.start + le32(10)..payload.start + le32(10) + le32(14);
        assert!(
            graph.len() > 256 && graph.end <= payload.end,
            "{name}: {graph:?}"
        );
        for at in graph {
            for value in [0x00, 0x01, 0x02, 0x7f, 0x80, 0xff] {
                if original[at] == value {
                    continue;
                }
                let mut bytes = original.clone();
                bytes[at] = value;
                load_and_run_bytes(&bytes);
            }
        }
    }
}
