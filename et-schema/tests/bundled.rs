//! Reading a bundled program written by ExecuTorch (`mlp.bpte`: two methods, two test
//! cases each), and reading damaged copies of it without a panic.

use et_schema::bundled::{is_bundled, BundledProgram, BundledValue};
use et_schema::ScalarType;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/").to_owned() + name)
        .unwrap()
}

/// Reads everything the views expose; the first error, if any.
fn walk(bytes: &[u8]) -> Result<usize, String> {
    let b = BundledProgram::parse(bytes).map_err(|e| e.to_string())?;
    let mut values = b.program().map_err(|e| e.to_string())?.len();
    for s in 0..b.num_suites() {
        let suite = b.suite(s).map_err(|e| e.to_string())?;
        for c in 0..suite.num_cases() {
            let case = suite.case(c).map_err(|e| e.to_string())?;
            let inputs = (0..case.num_inputs()).map(|i| case.input(i));
            let outputs = (0..case.num_expected_outputs()).map(|i| case.expected_output(i));
            for v in inputs.chain(outputs) {
                if let BundledValue::Tensor(t) = v.map_err(|e| e.to_string())? {
                    for d in 0..t.dim() {
                        values += t.size(d).unwrap_or(0) % 7;
                    }
                    values += t.data.len() + t.dim_order.len();
                }
            }
        }
    }
    Ok(values)
}

#[test]
fn reads_executorchs_bundled_mlp() {
    let bytes = fixture("mlp.bpte");
    assert!(is_bundled(&bytes));
    let b = BundledProgram::parse(&bytes).unwrap();
    // The embedded program is the fixture's .pte (its length per the fixture's yaml),
    // 32-aligned.
    let program = b.program().unwrap();
    assert_eq!(program.len(), 7456);
    assert_eq!(&program[4..8], b"ET12");
    assert_eq!(program.as_ptr() as usize % 32, bytes.as_ptr() as usize % 32);
    let names: Vec<&str> = (0..b.num_suites())
        .map(|s| b.suite(s).unwrap().method)
        .collect();
    assert_eq!(names, ["forward", "logits"]);
    let suite = b.suite(0).unwrap();
    assert_eq!(suite.num_cases(), 2);
    let case = suite.case(1).unwrap();
    let BundledValue::Tensor(input) = case.input(0).unwrap() else {
        panic!("input 0 is not a tensor")
    };
    assert_eq!(input.dtype, ScalarType::Float);
    assert_eq!(
        (input.dim(), input.size(0), input.size(1)),
        (2, Ok(4), Ok(16))
    );
    assert_eq!(input.data, fixture("mlp_bundled.forward.case1.in0.bin"));
    let BundledValue::Tensor(out) = case.expected_output(0).unwrap() else {
        panic!("output 0 is not a tensor")
    };
    assert_eq!(out.data, fixture("mlp_bundled.forward.case1.out0.bin"));
    assert!(walk(&bytes).is_ok());
}

#[test]
fn damaged_bundled_programs_read_as_errors_not_panics() {
    let good = fixture("mlp.bpte");
    // The code always; the explanation only with the feature `messages`.
    let err = BundledProgram::parse(b"not a bundled program").unwrap_err();
    assert_eq!(err.error, et_schema::Error::InvalidProgram);
    if cfg!(feature = "messages") {
        assert!(walk(b"not a bundled program").unwrap_err().contains("BP08"));
    }
    for len in 0..good.len() {
        let _ = walk(&good[..len]);
    }
    let mut state = 0x9e37_79b9_u32;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let mut bytes = good.clone();
        let at = state as usize % bytes.len();
        bytes[at] ^= 1 << (state >> 29);
        let _ = walk(&bytes);
    }
}
