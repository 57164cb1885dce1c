//! The public API on hand-written inputs.

use et_schema::ScalarType::{self, *};
use selection::{Error, KernelKey, Selection};

const ADD_MUL: &str = "\
build_features: []
custom_classes: []
et_kernel_metadata:
  aten::add.out:
  - v1/6;0,1|6;0,1|6;0,1|6;0,1
  aten::mm.out:
  - v1/6;0,1|6;0,1|6;0,1|6;0,1
include_all_non_op_selectives: false
include_all_operators: false
kernel_metadata: {}
operators:
  aten::add.out:
    debug_info:
    - add_mul.pte
    include_all_overloads: false
    is_root_operator: true
    is_used_for_training: true
  aten::mm.out:
    debug_info:
    - add_mul.pte
    include_all_overloads: false
    is_root_operator: true
    is_used_for_training: true
";

fn yaml_err(text: &str) -> (String, Option<(usize, usize)>) {
    match Selection::parse_yaml(text) {
        Err(Error::Yaml { message, location }) => (message, location),
        other => panic!("expected a YAML error for {text:?}, got {other:?}"),
    }
}

#[test]
fn parse_and_query() {
    let sel = Selection::parse_yaml(ADD_MUL).unwrap();
    assert!(!sel.includes_all());
    assert!(sel.allows_op("aten::add.out"));
    assert!(sel.allows_op("aten::mm.out"));
    assert!(!sel.allows_op("aten::add.Tensor"));
    assert!(!sel.allows_op("aten::sub.out"));
    assert_eq!(
        sel.operators().collect::<Vec<_>>(),
        ["aten::add.out", "aten::mm.out"]
    );
    assert_eq!(
        sel.kernel_keys("aten::add.out"),
        ["v1/6;0,1|6;0,1|6;0,1|6;0,1"]
    );
    assert!(sel.kernel_keys("aten::sub.out").is_empty());
    assert_eq!(sel.allowed_dtypes("aten::add.out"), Some(vec![Float]));
    // Not selected: no dtype at all.
    assert_eq!(sel.allowed_dtypes("aten::sub.out"), Some(vec![]));
    assert!(sel.allows("aten::add.out", Float));
    assert!(!sel.allows("aten::add.out", Double));
    assert!(!sel.allows("aten::sub.out", Float));
    let info = sel.operator_info("aten::add.out").unwrap();
    assert!(info.is_root_operator && info.is_used_for_training && !info.include_all_overloads);
    assert_eq!(
        info.debug_info.as_deref(),
        Some(&["add_mul.pte".to_owned()][..])
    );
    assert_eq!(sel.debug_info(), None);
    assert_eq!(sel.to_yaml(), ADD_MUL);
}

#[test]
fn allowed_dtypes_follow_gen_selected_op_variants() {
    let sel = Selection::parse_yaml(
        "\
et_kernel_metadata:
  aten::add.out:
  - v1/6;0,1|6;0,1|6;0,1
  - v1/4;0|4;0|4;0
  - v1/3;|3;|3;
  aten::gt.Scalar_out:
  - v1/6;|11;|11;
  aten::mm.out:
  - default
  aten::mul.out:
  - v1/6;0|6;0|6;0
  - default
  aten::empty.out: []
  aten::sym_size.int:
  - v1
operators:
  aten::add.out: {}
  aten::gt.Scalar_out: {}
  aten::mm.out: {}
  aten::mul.out: {}
  aten::empty.out: {}
  aten::sym_size.int: {}
  aten::relu.out: {}
",
    )
    .unwrap();
    // Union over all keys, sorted by number.
    assert_eq!(
        sel.allowed_dtypes("aten::add.out"),
        Some(vec![Int, Long, Float])
    );
    // Inputs and outputs alike.
    assert_eq!(
        sel.allowed_dtypes("aten::gt.Scalar_out"),
        Some(vec![Float, Bool])
    );
    // `default` anywhere: every dtype.
    assert_eq!(sel.allowed_dtypes("aten::mm.out"), None);
    assert_eq!(sel.allowed_dtypes("aten::mul.out"), None);
    // No keys, a key without tensors, no et_kernel_metadata entry: every dtype.
    assert_eq!(sel.allowed_dtypes("aten::empty.out"), None);
    assert_eq!(sel.allowed_dtypes("aten::sym_size.int"), None);
    assert_eq!(sel.allowed_dtypes("aten::relu.out"), None);
    assert!(sel.allows("aten::relu.out", ComplexDouble));
    // Keys come back sorted (`default` first), as gen_oplist writes them.
    assert_eq!(
        sel.kernel_keys("aten::add.out"),
        ["v1/3;|3;|3;", "v1/4;0|4;0|4;0", "v1/6;0,1|6;0,1|6;0,1"]
    );
    assert_eq!(
        sel.kernel_keys("aten::mul.out"),
        ["default", "v1/6;0|6;0|6;0"]
    );
}

#[test]
fn empty_metadata_and_include_all() {
    let none = Selection::parse_yaml("et_kernel_metadata: {}\noperators: {}\n").unwrap();
    assert_eq!(none, Selection::default());
    assert!(!none.allows_op("aten::add.out"));
    assert_eq!(none.operators().count(), 0);

    let all = Selection::parse_yaml("include_all_operators: true\n").unwrap();
    assert_eq!(all, Selection::all());
    assert!(all.includes_all());
    assert!(all.allows_op("aten::anything.out"));
    assert_eq!(all.allowed_dtypes("aten::anything.out"), None);
    assert!(all.allows("my_ops::mul3.out", Half));
    assert_eq!(all.operators().count(), 0);
    assert_eq!(
        all.to_yaml(),
        "build_features: []\ncustom_classes: []\net_kernel_metadata: {}\n\
         include_all_non_op_selectives: false\ninclude_all_operators: true\n\
         kernel_metadata: {}\noperators: {}\n"
    );

    // include_all_operators with keys for some ops: those keep their dtype limits.
    let mut mixed = Selection::all();
    mixed.merge(&Selection::parse_yaml(ADD_MUL).unwrap());
    assert!(mixed.includes_all());
    assert_eq!(mixed.allowed_dtypes("aten::add.out"), Some(vec![Float]));
    assert_eq!(mixed.allowed_dtypes("aten::sub.out"), None);
}

#[test]
fn operators_entries_follow_torchgen() {
    let sel = Selection::parse_yaml(
        "\
operators:
  aten::add:
    include_all_overloads: true
  aten::sub.out:
    is_root_operator: false
  aten::mul:
    is_root_operator: Yes
et_kernel_metadata:
  aten::div.out: [default]
",
    )
    .unwrap();
    // `aten::add` with include_all_overloads selects every overload.
    assert!(sel.allows_op("aten::add.out"));
    assert!(sel.allows_op("aten::add.Tensor"));
    // Not a root operator: not selected.
    assert!(!sel.allows_op("aten::sub.out"));
    // Without include_all_overloads, only the exact name.
    assert!(sel.allows_op("aten::mul"));
    assert!(!sel.allows_op("aten::mul.out"));
    // Only in et_kernel_metadata: selected.
    assert!(sel.allows_op("aten::div.out"));
    assert_eq!(
        sel.operators().collect::<Vec<_>>(),
        ["aten::add", "aten::div.out", "aten::mul"]
    );
}

#[test]
fn unknown_keys_and_nulls_are_tolerated() {
    let sel = Selection::parse_yaml(
        "\
some_future_key: {nested: [1, 2]}
operators:
  aten::add.out:
    debug_info: [m.pte, 12, null]
    future_field: 3
  aten::mm.out:
et_kernel_metadata:
  aten::add.out:
  - default
  aten::mm.out:
debug_info:
- top
custom_classes: null
build_features:
- f1
kernel_metadata:
  tag: [Float, Float, Double]
",
    )
    .unwrap();
    assert!(sel.allows_op("aten::add.out"));
    assert!(sel.allows_op("aten::mm.out"));
    assert!(sel.kernel_keys("aten::mm.out").is_empty());
    assert_eq!(
        sel.operator_info("aten::add.out").unwrap().debug_info,
        Some(vec!["m.pte".to_owned(), "12".to_owned()])
    );
    assert_eq!(sel.debug_info(), Some(&["top".to_owned()][..]));
    let yaml = sel.to_yaml();
    assert!(yaml.starts_with("build_features:\n- f1\ncustom_classes: []\ndebug_info:\n- top\n"));
    assert!(yaml.contains("kernel_metadata:\n  tag:\n  - Double\n  - Float\n"));
    assert!(yaml.contains("  aten::mm.out: []\n"));
    assert!(!yaml.contains("some_future_key"));
    assert_eq!(Selection::parse_yaml(&yaml).unwrap(), sel);
}

#[test]
fn malformed_yaml_says_what_and_where() {
    let (msg, loc) = yaml_err("operators:\n  aten::add.out: [1\n");
    assert!(loc.is_some(), "{msg}");

    let (msg, loc) = yaml_err("operators: [aten::add.out]\n");
    assert!(
        msg.contains("operators: invalid type: sequence, expected a map"),
        "{msg}"
    );
    assert_eq!(loc, Some((1, 12)));

    let (msg, loc) = yaml_err("et_kernel_metadata:\n  aten::add.out:\n  - v1/6;0|x;0\n");
    assert!(msg.contains("et_kernel_metadata.aten::add.out"), "{msg}");
    assert!(msg.contains("invalid kernel key `v1/6;0|x;0`"), "{msg}");
    assert!(msg.contains("tensor entry 1"), "{msg}");
    assert_eq!(loc, Some((3, 3)));

    let (msg, _) = yaml_err("et_kernel_metadata:\n  aten::add.out:\n  - v1/99;0\n");
    assert!(
        msg.contains("dtype 99 is not an ExecuTorch scalar type"),
        "{msg}"
    );

    let (msg, loc) = yaml_err("et_kernel_metadata:\n  add.out: [default]\n");
    assert!(
        msg.contains("invalid operator name `add.out`: it has no namespace"),
        "{msg}"
    );
    assert_eq!(loc, Some((2, 3)));

    let (msg, _) = yaml_err("operators:\n  aten::add.out:\n    is_root_operator: maybe\n");
    assert!(
        msg.contains("operators.aten::add.out.is_root_operator"),
        "{msg}"
    );
    assert!(msg.contains("expected a boolean"), "{msg}");

    let (msg, _) = yaml_err("et_kernel_metadata:\n  aten::add.out: default\n");
    assert!(msg.contains("expected a sequence"), "{msg}");

    let (msg, _) = yaml_err("- aten::add.out\n");
    assert!(
        msg.contains("expected a mapping of selected_operators.yaml keys"),
        "{msg}"
    );

    for empty in ["", "\n# only a comment\n", "~\n"] {
        let (msg, _) = yaml_err(empty);
        assert!(msg.contains("the document is empty"), "{msg}");
    }

    let err = Selection::parse_yaml("include_all_operators: 3\n").unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.starts_with("invalid selected_operators.yaml: include_all_operators:"),
        "{shown}"
    );
    assert!(shown.contains("line 1 column 24"), "{shown}");
}

#[test]
fn op_lists() {
    let sel = Selection::from_op_list("aten::add.out,aten::mm.out").unwrap();
    assert_eq!(
        sel.operators().collect::<Vec<_>>(),
        ["aten::add.out", "aten::mm.out"]
    );
    assert_eq!(sel.kernel_keys("aten::add.out"), ["default"]);
    assert_eq!(sel.allowed_dtypes("aten::add.out"), None);
    assert!(!sel.allows_op("aten::sub.out"));

    // Whitespace, newlines, repeats and trailing commas are fine.
    let spaced =
        Selection::from_op_list("\n  aten::mm.out ,\n\taten::add.out aten::add.out,\n").unwrap();
    assert_eq!(spaced, sel);
    assert_eq!(Selection::parse_yaml(&sel.to_yaml()).unwrap(), sel);

    for (list, bad, why) in [
        ("aten::add.out,add.out", "add.out", "it has no namespace"),
        (
            "aten::add.out;aten::mm.out",
            "aten::add.out;aten::mm.out",
            "contains ';'",
        ),
        (
            "aten::add.",
            "aten::add.",
            "the overload after `.` is empty",
        ),
        ("aten::add-out", "aten::add-out", "contains '-'"),
    ] {
        match Selection::from_op_list(list) {
            Err(Error::InvalidOperatorName { name, reason }) => {
                assert_eq!(name, bad);
                assert!(reason.contains(why), "{list}: {reason}");
                let shown = Error::InvalidOperatorName { name, reason }.to_string();
                assert!(
                    shown.starts_with(&format!("invalid operator name `{bad}`: ")),
                    "{shown}"
                );
            }
            other => panic!("{list}: {other:?}"),
        }
    }
    for empty in ["", " , \n"] {
        assert_eq!(Selection::from_op_list(empty), Err(Error::EmptyOpList));
    }
}

#[test]
fn kernel_library() {
    let sel = Selection::from_kernel_library([
        ("aten::add.out", Some(Float)),
        ("aten::add.out", Some(Long)),
        ("aten::mm.out", None),
        ("aten::relu.out", Some(Float)),
        ("aten::relu.out", None),
    ])
    .unwrap();
    assert_eq!(sel.kernel_keys("aten::add.out"), ["v1/4;", "v1/6;"]);
    assert_eq!(sel.allowed_dtypes("aten::add.out"), Some(vec![Long, Float]));
    assert_eq!(sel.allowed_dtypes("aten::mm.out"), None);
    // A fallback next to a dtype kernel: every dtype.
    assert_eq!(sel.allowed_dtypes("aten::relu.out"), None);
    assert!(matches!(
        Selection::from_kernel_library([("relu", None)]),
        Err(Error::InvalidOperatorName { .. })
    ));
}

#[test]
fn merge_unites() {
    let mut a = Selection::parse_yaml(ADD_MUL).unwrap();
    let b = Selection::parse_yaml(
        "\
debug_info: [b]
et_kernel_metadata:
  aten::add.out:
  - v1/4;0,1|4;0,1|4;0,1|4;0,1
  - v1/6;0,1|6;0,1|6;0,1|6;0,1
  aten::sub.out: [default]
operators:
  aten::add.out:
    debug_info: [b.pte]
  aten::sub.out:
    include_all_overloads: true
custom_classes: [C]
",
    )
    .unwrap();
    let before = a.clone();
    a.merge(&b);
    assert_eq!(
        a.kernel_keys("aten::add.out"),
        ["v1/4;0,1|4;0,1|4;0,1|4;0,1", "v1/6;0,1|6;0,1|6;0,1|6;0,1"]
    );
    assert_eq!(a.allowed_dtypes("aten::add.out"), Some(vec![Long, Float]));
    assert_eq!(
        a.kernel_keys("aten::mm.out"),
        before.kernel_keys("aten::mm.out")
    );
    assert!(a.allows_op("aten::sub.out"));
    assert!(
        a.operator_info("aten::sub.out")
            .unwrap()
            .include_all_overloads
    );
    assert_eq!(
        a.operator_info("aten::add.out").unwrap().debug_info,
        Some(vec!["add_mul.pte".to_owned(), "b.pte".to_owned()])
    );
    assert_eq!(a.debug_info(), Some(&["b".to_owned()][..]));
    assert!(a.to_yaml().contains("custom_classes:\n- C\n"));

    // Idempotent, and order does not matter for what is selected.
    let mut twice = a.clone();
    twice.merge(&b);
    assert_eq!(twice, a);
    let mut other_way = b.clone();
    other_way.merge(&before);
    for op in ["aten::add.out", "aten::mm.out", "aten::sub.out"] {
        assert_eq!(other_way.kernel_keys(op), a.kernel_keys(op));
        assert_eq!(other_way.allows_op(op), a.allows_op(op));
    }

    // Merging with `all` selects everything; merging an empty selection changes nothing.
    let mut with_empty = before.clone();
    with_empty.merge(&Selection::default());
    assert_eq!(with_empty, before);
    let mut with_all = before.clone();
    with_all.merge(&Selection::all());
    assert!(with_all.includes_all());
}

#[test]
fn kernel_keys_parse_and_print() {
    let key: KernelKey = "v1/6;0,1|4;0|11;".parse().unwrap();
    assert_eq!(key.dtypes(), Some(vec![Float, Long, Bool]));
    assert_eq!(key.tensors()[1].dim_order, [0]);
    assert_eq!(key.to_string(), "v1/6;0,1|4;0|11;");
    assert_eq!(KernelKey::from_dtype(ScalarType::Int).to_string(), "v1/3;");
    assert!("v1/6;0,1|".parse::<KernelKey>().is_err());
}

#[test]
fn bad_programs_are_errors_not_panics() {
    let good = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/add_mul.pte"
    ))
    .unwrap();
    assert!(Selection::from_program(&good, "add_mul.pte").is_ok());

    let msg = |bytes: &[u8]| match Selection::from_program(bytes, "x.pte") {
        Err(e @ Error::Program { .. }) => e.to_string(),
        other => panic!("expected a program error, got {other:?}"),
    };
    assert!(
        msg(b"").contains("too short to be a program"),
        "{}",
        msg(b"")
    );
    assert!(msg(b"hello world, not a program").contains("no ET12 identifier"));
    let mut et13 = good.clone();
    et13[4..8].copy_from_slice(b"ET13");
    assert!(msg(&et13).contains("unsupported program format version"));
    let shown = msg(&good[..good.len() / 2]);
    assert!(
        shown.starts_with("x.pte: not a readable ExecuTorch program: "),
        "{shown}"
    );

    // Every truncation and a sweep of single-byte corruptions: an error or a selection,
    // never a panic.
    for len in 0..good.len() {
        let _ = Selection::from_program(&good[..len], "t");
    }
    let mut state = 0x2545_f491_u32;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let mut bytes = good.clone();
        let at = state as usize % bytes.len();
        bytes[at] = (state >> 24) as u8;
        let _ = Selection::from_program(&bytes, "c");
    }
}

/// A backend of the test's own: it records each payload's size under its key (failing
/// with `refusal` instead, when given), reads only the delegates that name it, and its
/// entry check names every wrong entry.
struct TestBackend {
    id: &'static str,
    key: &'static str,
    refusal: Option<&'static str>,
}

const PAYLOAD_SIZES: TestBackend = TestBackend {
    id: "XnnpackBackend",
    key: "test::payload_sizes",
    refusal: None,
};

impl selection::DelegateMetadata for TestBackend {
    fn backend_id(&self) -> &str {
        self.id
    }
    fn key(&self) -> &str {
        self.key
    }
    fn read_payload(
        &self,
        payload: &[u8],
        entries: &mut std::collections::BTreeSet<String>,
    ) -> Result<(), String> {
        if let Some(refusal) = self.refusal {
            return Err(refusal.into());
        }
        entries.insert(format!("size:{}", payload.len()));
        Ok(())
    }
    fn check_entry(&self, entry: &str) -> Result<(), String> {
        match entry.strip_prefix("size:").map(str::parse::<usize>) {
            Some(Ok(_)) => Ok(()),
            _ => Err(format!("`{entry}` is not `size:N`")),
        }
    }
}

#[test]
fn delegate_metadata_comes_from_the_backends_given() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mlp_xnnpack.pte"
    );
    let pte = std::fs::read(path).unwrap();
    // Without backends, gen_oplist's selection: nothing under either key.
    let plain = Selection::from_program(&pte, "m.pte").unwrap();
    assert!(plain.metadata("test::payload_sizes").is_empty());
    // A backend no delegate names is never asked to read.
    let other = TestBackend {
        id: "OtherBackend",
        key: "test::other",
        refusal: Some("never called: no delegate names this backend"),
    };
    let sel = Selection::from_program_with(&pte, "m.pte", &[&PAYLOAD_SIZES, &other]).unwrap();
    let sizes = sel.metadata("test::payload_sizes");
    assert_eq!(sizes.len(), 1, "{sizes:?}");
    let size: usize = sizes[0].strip_prefix("size:").unwrap().parse().unwrap();
    assert!(size > 1000 && size < pte.len(), "{size}");
    assert!(sel.metadata("test::other").is_empty());
    assert!(sel.allows_metadata_entry("test::payload_sizes", "size", None));
    assert!(!sel.allows_metadata_entry("test::other", "size", None));
    // Entries written back under the key and read again unchanged.
    assert_eq!(Selection::parse_yaml(&sel.to_yaml()).unwrap(), sel);
    assert!(sel.check_metadata(&PAYLOAD_SIZES).is_ok());

    // The check names the key and every wrong entry.
    let yaml = "kernel_metadata:\n  test::payload_sizes: ['size:3', big, 'size:x']\n";
    let err = Selection::parse_yaml(yaml)
        .unwrap()
        .check_metadata(&PAYLOAD_SIZES)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("kernel_metadata.test::payload_sizes")
            && err.contains("`big` is not")
            && err.contains("`size:x` is not")
            && !err.contains("`size:3`"),
        "{err}"
    );
    // A backend's error on a payload names the method and the delegate.
    let refuses = TestBackend {
        key: "test::refuses",
        refusal: Some("node 3: bad"),
        ..PAYLOAD_SIZES
    };
    let err = Selection::from_program_with(&pte, "m.pte", &[&refuses])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("m.pte") && err.contains("delegate 0 (XnnpackBackend): node 3: bad"),
        "{err}"
    );
}
