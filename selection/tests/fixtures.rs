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

#[test]
fn from_program_matches_gen_oplist() {
    for (name, pte, yaml) in cases() {
        let label = format!("{name}.pte");
        let ours = Selection::from_program(&pte, &label)
            .unwrap_or_else(|e| panic!("{name}: from_program failed: {e}"));
        let theirs = Selection::parse_yaml(&yaml)
            .unwrap_or_else(|e| panic!("{name}: parse_yaml failed: {e}"));

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
        // Everything else too (flags, debug_info).
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
fn to_yaml_is_byte_identical_to_gen_oplist() {
    for (name, pte, yaml) in cases() {
        let from_program = Selection::from_program(&pte, &format!("{name}.pte")).unwrap();
        assert_eq!(from_program.to_yaml(), yaml, "{name}: gen_oplist's bytes");
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

    // A delegated program selects no operator at all (what its payloads need is its
    // backend's: et-xnnpack-schema's tests).
    let xnn = read("mlp_xnnpack");
    assert_eq!(xnn.operators().count(), 0);
    assert!(!xnn.includes_all());
    assert!(xnn.metadata("etch::xnnpack_node_kinds").is_empty());

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
