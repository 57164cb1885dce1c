//! The XNNPACK part of a selection: node kinds read from every fixture's payloads
//! against ExecuTorch's own payload reader, and hand-written entries checked.

use std::fs;
use std::path::{Path, PathBuf};

use et_xnnpack_schema::{NodeKinds, NODE_KINDS_KEY};
use selection::Selection;

fn fixtures() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures")).to_path_buf()
}

/// The selection of fixture `name`, with its XNNPACK payloads read.
fn read(name: &str) -> Selection {
    read_bytes(
        name,
        &fs::read(fixtures().join(format!("{name}.pte"))).unwrap(),
    )
}

/// The selection of program `pte` (fixture `name`), with its XNNPACK payloads read.
fn read_bytes(name: &str, pte: &[u8]) -> Selection {
    Selection::from_program_with(pte, name, &[&NodeKinds]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Whether `sel` keeps node kind `kind`, in `family` when one is given.
fn keeps(sel: &Selection, kind: &str, family: Option<&str>) -> bool {
    sel.allows_metadata_entry(NODE_KINDS_KEY, kind, family)
}

/// The error of checking `yaml`'s node kinds.
fn checked(yaml: &str) -> String {
    Selection::parse_yaml(yaml)
        .unwrap()
        .check_metadata(&NodeKinds)
        .unwrap_err()
        .to_string()
}

/// The XNNPACK node kinds of each program's delegates with their datatype families
/// (`Conv2d:qint8`, sorted), from `xnnpack_nodes.yaml`, which the fixture exporter wrote
/// with ExecuTorch's own payload reader. That file gives each payload's value datatypes,
/// not each node's; in these fixtures every node of a payload has the payload's family
/// (qdint8 if a value is qdint8, else qint8 if one is statically quantized, else fp32).
fn executorch_node_kinds(all: &serde_yaml::Value, name: &str) -> Vec<String> {
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

#[test]
fn node_kinds_match_executorchs_payload_reader() {
    let text = fs::read_to_string(fixtures().join("xnnpack_nodes.yaml")).unwrap();
    let all: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let names: Vec<&str> = all
        .as_mapping()
        .unwrap()
        .keys()
        .filter_map(|k| k.as_str())
        .filter(|name| fixtures().join(format!("{name}.pte")).exists())
        .collect();
    assert!(
        names.len() >= 5,
        "expected the delegated fixtures, found {names:?}"
    );
    for name in names {
        let bytes = fs::read(fixtures().join(format!("{name}.pte"))).unwrap();
        let sel = read_bytes(name, &bytes);
        assert_eq!(
            sel.metadata(NODE_KINDS_KEY),
            executorch_node_kinds(&all, name),
            "{name}: XNNPACK node kinds"
        );
        // The program's operators are gen_oplist's, whatever its payloads hold.
        let plain = Selection::from_program(&bytes, name).unwrap();
        assert!(plain.operators().eq(sel.operators()), "{name}");
    }
}

#[test]
fn fixture_details() {
    // A delegated program selects no operator at all, and exactly its node kinds.
    let xnn = read("mlp_xnnpack");
    assert_eq!(xnn.operators().count(), 0);
    assert_eq!(
        xnn.metadata(NODE_KINDS_KEY),
        ["FullyConnected:fp32", "Softmax:fp32"]
    );
    assert!(keeps(&xnn, "FullyConnected", None));
    assert!(keeps(&xnn, "FullyConnected", Some("fp32")));
    assert!(!keeps(&xnn, "FullyConnected", Some("qint8")));
    assert!(!keeps(&xnn, "Conv2d", None));
    // The dynamically quantized mlp: its FullyConnected and Convert in family qdint8,
    // and its float Clamp and Softmax (other payloads) in fp32.
    let qd8 = read("mlp_xnnpack_qd8");
    assert!(keeps(&qd8, "FullyConnected", Some("qdint8")));
    assert!(keeps(&qd8, "Convert", Some("qdint8")));
    assert!(!keeps(&qd8, "FullyConnected", Some("fp32")));
    assert!(!keeps(&qd8, "Convert", Some("qint8")));
    // MobileNetV2's payload, kept in a segment.
    let mv2 = read("mv2_xnnpack");
    assert_eq!(
        mv2.metadata(NODE_KINDS_KEY),
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
    assert!(!keeps(&mv2, "Conv2d", Some("qint8")));
    // The int8 MobileNetV2: every node in family qint8, none in fp32.
    let q8 = read("mv2_xnnpack_q8");
    assert!(keeps(&q8, "Conv2d", Some("qint8")));
    assert!(keeps(&q8, "Convert", Some("qint8")));
    assert!(!keeps(&q8, "Conv2d", Some("fp32")));
    assert!(!keeps(&q8, "Add", Some("fp32")));
    // A portable program names none, and its file stays gen_oplist's; including every
    // operator keeps every kind.
    let portable = read("mv2");
    assert!(portable.metadata(NODE_KINDS_KEY).is_empty());
    assert!(!keeps(&portable, "Add", None));
    assert!(!portable.to_yaml().contains(NODE_KINDS_KEY));
    assert!(keeps(&Selection::all(), "Conv2d", None));
    // Merging unites the kinds.
    let mut merged = xnn.clone();
    merged.merge(&read("tiny_transformer_xnnpack"));
    assert!(keeps(&merged, "FullyConnected", None) && keeps(&merged, "Gelu", None));
}

#[test]
fn xnnpack_node_kinds_in_yaml() {
    let key = NODE_KINDS_KEY;
    let sel = Selection::parse_yaml(&format!(
        "kernel_metadata:\n  {key}:\n  - Conv2d\n  - Add\n  - Conv2d\n"
    ))
    .unwrap();
    assert_eq!(sel.metadata(NODE_KINDS_KEY), ["Add", "Conv2d"]);
    assert!(keeps(&sel, "Conv2d", None));
    assert!(!keeps(&sel, "Gelu", None));
    // Written back where ExecuTorch's tools carry it, and read again unchanged.
    let written = sel.to_yaml();
    assert!(
        written.contains(&format!(
            "kernel_metadata:\n  {key}:\n  - Add\n  - Conv2d\n"
        )),
        "{written}"
    );
    assert_eq!(Selection::parse_yaml(&written).unwrap(), sel);

    // A name the schema does not define (or written with the XNN prefix) is refused,
    // naming the key and the name.
    for bad in ["Conv3d", "XNNConv2d"] {
        let err = checked(&format!("kernel_metadata:\n  {key}: [Add, {bad}]\n"));
        assert!(
            err.contains(key) && err.contains(&format!("`{bad}`")),
            "{bad}: {err}"
        );
    }
}

#[test]
fn xnnpack_node_datatypes_in_yaml() {
    let key = NODE_KINDS_KEY;
    // A bare kind keeps every datatype family (the earlier form); `Kind:family` keeps one.
    let sel = Selection::parse_yaml(&format!(
        "kernel_metadata:\n  {key}:\n  - Conv2d:qint8\n  - Add\n  - FullyConnected:qdint8\n"
    ))
    .unwrap();
    assert!(keeps(&sel, "Conv2d", None) && keeps(&sel, "FullyConnected", None));
    assert!(keeps(&sel, "Conv2d", Some("qint8")));
    assert!(!keeps(&sel, "Conv2d", Some("fp32")));
    assert!(keeps(&sel, "Add", Some("fp32")));
    assert!(keeps(&sel, "Add", Some("qint8")));
    assert!(keeps(&sel, "FullyConnected", Some("qdint8")));
    assert!(!keeps(&sel, "FullyConnected", Some("qint8")));
    assert!(!keeps(&sel, "Gelu", Some("fp32")));
    assert!(keeps(&Selection::all(), "Gelu", Some("qint8")));
    // Written back unquoted, sorted, and read again unchanged.
    let written = sel.to_yaml();
    assert!(
        written.contains(&format!(
            "  {key}:\n  - Add\n  - Conv2d:qint8\n  - FullyConnected:qdint8\n"
        )),
        "{written}"
    );
    assert_eq!(Selection::parse_yaml(&written).unwrap(), sel);
    // Merging unites the entries.
    let mut merged = sel.clone();
    merged.merge(
        &Selection::parse_yaml(&format!("kernel_metadata:\n  {key}: [Conv2d:fp32]\n")).unwrap(),
    );
    assert!(keeps(&merged, "Conv2d", Some("fp32")));
    assert!(keeps(&merged, "Conv2d", Some("qint8")));

    // An unknown family is refused, naming the entry and the families.
    for bad in ["Conv2d:int8", "Add:", "Add:fp32:qint8"] {
        let err = checked(&format!("kernel_metadata:\n  {key}: [Add, '{bad}']\n"));
        assert!(
            err.contains(key)
                && err.contains(&format!("`{bad}`"))
                && err.contains("fp32, qint8, qdint8"),
            "{bad}: {err}"
        );
    }
    // An unknown kind with a family is refused as an unknown kind.
    let err = checked(&format!("kernel_metadata:\n  {key}: [Conv3d:fp32]\n"));
    assert!(
        err.contains("`Conv3d:fp32` is not an XNNPACK node kind"),
        "{err}"
    );
}

#[test]
fn delegated_program_errors_name_the_delegate() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mlp_xnnpack.pte"
    );
    let good = std::fs::read(path).unwrap();
    let payload = good
        .windows(4)
        .position(|w| w == b"XH00")
        .expect("the payload's header")
        - 4;
    // A payload whose flatbuffer offset points past its end.
    let mut bad = good.clone();
    bad[payload + 8..payload + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Selection::from_program_with(&bad, "m.pte", &[&NodeKinds])
        .unwrap_err()
        .to_string();
    assert!(err.contains("delegate 0 (XnnpackBackend)"), "{err}");
}
