//! Every fixture program against the `selected_operators.yaml` ExecuTorch's own
//! `gen_oplist` wrote for it.

use std::fs;
use std::path::{Path, PathBuf};

use selection::Selection;

fn fixtures() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures")).to_path_buf()
}

/// `(NAME, NAME.pte bytes, NAME.selected_operators.yaml text)` for every fixture that has
/// both.
fn cases() -> Vec<(String, Vec<u8>, String)> {
    let mut cases = Vec::new();
    for entry in fs::read_dir(fixtures()).expect("tests/fixtures exists") {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".selected_operators.yaml"))
        else {
            continue;
        };
        let pte = fixtures().join(format!("{name}.pte"));
        if !pte.exists() {
            continue;
        }
        cases.push((
            name.to_owned(),
            fs::read(&pte).unwrap(),
            fs::read_to_string(&path).unwrap(),
        ));
    }
    cases.sort();
    assert!(
        cases.len() >= 15,
        "expected the fixture set, found {} cases",
        cases.len()
    );
    cases
}

/// The XNNPACK node kinds of each program's delegates with their datatype families
/// (`Conv2d:qint8`, sorted), from `xnnpack_nodes.yaml`, which the fixture exporter wrote
/// with ExecuTorch's own payload reader. That file gives each payload's value datatypes,
/// not each node's; in these fixtures every node of a payload has the payload's family
/// (qdint8 if a value is qdint8, else qint8 if one is statically quantized, else fp32).
fn xnnpack_node_kinds(name: &str) -> Vec<String> {
    let text = fs::read_to_string(fixtures().join("xnnpack_nodes.yaml")).unwrap();
    let all: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let family = |d: &serde_yaml::Value| {
        let types: Vec<&str> = d
            .get("value_datatypes")
            .and_then(|m| m.as_mapping())
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(|k| k.as_str()?.strip_prefix("xnn_datatype_"))
            .collect();
        if types.contains(&"qdint8") {
            "qdint8"
        } else if types.iter().any(|t| t.starts_with('q')) {
            "qint8"
        } else {
            "fp32"
        }
    };
    let mut kinds: Vec<String> = all
        .get(name)
        .and_then(|d| d.as_sequence())
        .into_iter()
        .flatten()
        .flat_map(|d| {
            let family = family(d);
            d.get("node_kinds")
                .and_then(|m| m.as_mapping())
                .into_iter()
                .flat_map(|m| m.keys())
                .filter_map(move |k| Some(format!("{}:{family}", k.as_str()?.strip_prefix("XNN")?)))
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// `gen_oplist`'s selection for `name` plus, as etch records it, the node kinds of its
/// XNNPACK delegates.
fn expected(name: &str, gen_oplist_yaml: &str) -> Selection {
    let mut sel = Selection::parse_yaml(gen_oplist_yaml)
        .unwrap_or_else(|e| panic!("{name}: parse_yaml failed: {e}"));
    let kinds = xnnpack_node_kinds(name);
    if !kinds.is_empty() {
        let extra = format!(
            "kernel_metadata:\n  {}: [{}]\n",
            selection::XNNPACK_NODE_KINDS_KEY,
            kinds.join(", ")
        );
        sel.merge(&Selection::parse_yaml(&extra).unwrap());
    }
    sel
}

#[test]
fn from_program_matches_gen_oplist() {
    let mut delegated = 0;
    for (name, pte, yaml) in cases() {
        let label = format!("{name}.pte");
        let ours = Selection::from_program(&pte, &label)
            .unwrap_or_else(|e| panic!("{name}: from_program failed: {e}"));
        let theirs = expected(&name, &yaml);
        delegated += usize::from(!theirs.xnnpack_node_kinds().is_empty());

        let ops: Vec<&str> = ours.operators().collect();
        let want_ops: Vec<&str> = theirs.operators().collect();
        assert_eq!(ops, want_ops, "{name}: operator set");
        for op in &want_ops {
            assert_eq!(
                ours.kernel_keys(op),
                theirs.kernel_keys(op),
                "{name}: kernel keys of {op}"
            );
        }
        assert_eq!(
            ours.xnnpack_node_kinds(),
            theirs.xnnpack_node_kinds(),
            "{name}: XNNPACK node kinds"
        );
        // Everything else too (flags, debug_info).
        assert_eq!(ours, theirs, "{name}");
    }
    assert!(delegated >= 1, "no XNNPACK-delegated fixture was compared");
}

#[test]
fn to_yaml_is_byte_identical_to_gen_oplist() {
    for (name, pte, yaml) in cases() {
        let from_program = Selection::from_program(&pte, &format!("{name}.pte")).unwrap();
        // Identical to gen_oplist's file but for the node kinds of XNNPACK payloads.
        assert_eq!(
            from_program.to_yaml(),
            expected(&name, &yaml).to_yaml(),
            "{name}: from_program().to_yaml()"
        );
        if xnnpack_node_kinds(&name).is_empty() {
            assert_eq!(from_program.to_yaml(), yaml, "{name}: gen_oplist's bytes");
        }
        let parsed = Selection::parse_yaml(&yaml).unwrap();
        assert_eq!(parsed.to_yaml(), yaml, "{name}: parse_yaml().to_yaml()");
        assert_eq!(
            Selection::parse_yaml(&parsed.to_yaml()).unwrap(),
            parsed,
            "{name}: round trip"
        );
    }
}

#[test]
fn fixture_details() {
    let read = |name: &str| {
        let pte = fs::read(fixtures().join(format!("{name}.pte"))).unwrap();
        Selection::from_program(&pte, name).unwrap()
    };
    use et_schema::ScalarType::*;

    // Two keys for one op (sorted as gen_oplist sorts them), from two methods.
    let two = read("two_methods");
    assert_eq!(
        two.kernel_keys("aten::add.out"),
        ["v1/6;0|6;0|6;0|6;0", "v1/6;0|6;|6;0|6;0"]
    );
    assert_eq!(two.allowed_dtypes("aten::add.out"), Some(vec![Float]));

    // Mixed dtypes: the union of every tensor entry, inputs and outputs.
    let ints = read("int_ops");
    assert_eq!(
        ints.allowed_dtypes("dim_order_ops::_to_dim_order_copy.out"),
        Some(vec![Int, Long])
    );
    assert_eq!(
        ints.allowed_dtypes("aten::where.self_out"),
        Some(vec![Long, Bool])
    );
    assert!(ints.allows("aten::add.out", Long));
    assert!(!ints.allows("aten::add.out", Float));
    assert!(!ints.allows_op("aten::addmm.out"));

    // A delegated program selects no operator at all, and exactly its node kinds.
    let xnn = read("mlp_xnnpack");
    assert_eq!(xnn.operators().count(), 0);
    assert!(!xnn.includes_all());
    assert_eq!(
        xnn.xnnpack_node_kinds(),
        ["FullyConnected:fp32", "Softmax:fp32"]
    );
    assert!(xnn.allows_xnnpack_node("FullyConnected"));
    assert!(xnn.allows_xnnpack_node_datatype("FullyConnected", "fp32"));
    assert!(!xnn.allows_xnnpack_node_datatype("FullyConnected", "qint8"));
    assert!(!xnn.allows_xnnpack_node("Conv2d"));
    // The dynamically quantized mlp: its FullyConnected and Convert in family qdint8,
    // and its float Clamp and Softmax (other payloads) in fp32.
    let qd8 = read("mlp_xnnpack_qd8");
    assert!(qd8.allows_xnnpack_node_datatype("FullyConnected", "qdint8"));
    assert!(qd8.allows_xnnpack_node_datatype("Convert", "qdint8"));
    assert!(!qd8.allows_xnnpack_node_datatype("FullyConnected", "fp32"));
    assert!(!qd8.allows_xnnpack_node_datatype("Convert", "qint8"));
    // MobileNetV2's payload, kept in a segment.
    let mv2 = read("mv2_xnnpack");
    assert_eq!(
        mv2.xnnpack_node_kinds(),
        [
            "Add:fp32",
            "Conv2d:fp32",
            "DepthwiseConv2d:fp32",
            "FullyConnected:fp32",
            "GlobalAvgPooling2d:fp32",
            "StaticReshape:fp32",
            "StaticTranspose:fp32"
        ]
    );
    assert!(!mv2.allows_xnnpack_node_datatype("Conv2d", "qint8"));
    // The int8 MobileNetV2: every node in family qint8, none in fp32.
    let q8 = read("mv2_xnnpack_q8");
    assert!(q8.allows_xnnpack_node_datatype("Conv2d", "qint8"));
    assert!(q8.allows_xnnpack_node_datatype("Convert", "qint8"));
    assert!(!q8.allows_xnnpack_node_datatype("Conv2d", "fp32"));
    assert!(!q8.allows_xnnpack_node_datatype("Add", "fp32"));
    // A portable program names none; including every operator keeps every kind.
    assert!(read("mv2").xnnpack_node_kinds().is_empty());
    assert!(!read("mv2").allows_xnnpack_node("Add"));
    assert!(Selection::all().allows_xnnpack_node("Conv2d"));
    // Merging unites the kinds.
    let mut merged = xnn.clone();
    merged.merge(&read("tiny_transformer_xnnpack"));
    assert!(merged.allows_xnnpack_node("FullyConnected") && merged.allows_xnnpack_node("Gelu"));

    // Two models merged: ops and keys united, debug info of shared ops appended.
    let mut both = read("mv2");
    both.merge(&ints);
    assert!(both.allows_op("aten::convolution.out"));
    assert!(both.allows_op("aten::where.self_out"));
    assert_eq!(
        both.allowed_dtypes("aten::add.out"),
        Some(vec![Long, Float])
    );
    assert_eq!(
        both.operator_info("aten::add.out").unwrap().debug_info,
        Some(vec!["mv2".to_owned(), "int_ops".to_owned()])
    );
}

/// The operator conformance programs: every one reads, with exactly the operators the
/// case index lists.
#[test]
fn opcases_read_with_their_operators() {
    let dir = fixtures().join("opcases");
    let index: serde_yaml::Value =
        serde_yaml::from_str(&fs::read_to_string(dir.join("index.yaml")).unwrap()).unwrap();
    let cases = index.as_sequence().expect("index.yaml is a list");
    assert!(cases.len() > 300);
    for case in cases {
        let name = case["case"].as_str().unwrap();
        let mut want: Vec<&str> = case["operators"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        want.sort();
        want.dedup();
        let pte = fs::read(dir.join(format!("{name}.pte"))).unwrap();
        let sel = Selection::from_program(&pte, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(sel.operators().collect::<Vec<_>>(), want, "{name}");
        for op in &want {
            assert!(!sel.kernel_keys(op).is_empty(), "{name}: {op} has no key");
        }
    }
}

/// Tensor lists follow gen_oplist's rule, not the runtime's (pte-format.md §5,
/// DISCREPANCY).
#[test]
fn tensor_list_keys_follow_gen_oplist() {
    let read = |name: &str| {
        let pte = fs::read(fixtures().join("opcases").join(format!("{name}.pte"))).unwrap();
        Selection::from_program(&pte, name).unwrap()
    };
    // TensorList: its first element stands for the list.
    assert_eq!(
        read("cat_float32").kernel_keys("aten::cat.out"),
        ["v1/6;0,1|6;0,1|6;0,1"]
    );
    // OptionalTensorList: its first non-null element.
    assert_eq!(
        read("index_float32").kernel_keys("aten::index.Tensor_out"),
        ["v1/6;0,1|4;0|6;0,1|6;0,1"]
    );
}
