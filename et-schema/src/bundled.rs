//! Bundled programs (`.bpte`, file identifier `BP08`): a program with test cases for its
//! methods (inputs and the outputs they must produce), read through bounds-checked views
//! (any bytes are safe to view; a malformed field reads as an error, never a panic).
//!
//! The schema is `et-schema/schema/bundled_program.fbs`, written from ExecuTorch 1.5's.

use crate::error::Error;
use crate::reader::{Table, Vector};
use crate::scalar_type::ScalarType;

/// Field offsets and enums of bundled_program.fbs, derived from flatc's output.
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    missing_docs,
    reason = "generated: the names are the schema's, the docs are bundled_program.fbs's"
)]
#[rustfmt::skip]
#[path = "bundled_program_fields.rs"]
pub mod fields;

use fields as bf;

/// The file identifier at bytes 4..8 of a bundled program.
pub const FILE_IDENTIFIER: &[u8; 4] = b"BP08";

/// Whether `file` starts like a bundled program (its identifier; nothing else checked).
pub fn is_bundled(file: &[u8]) -> bool {
    file.get(4..8) == Some(FILE_IDENTIFIER.as_slice())
}

/// What was wrong with a bundled program.
pub type BundledError = crate::header::ProgramError;

fn malformed(reason: &'static str) -> BundledError {
    BundledError::new(Error::InvalidProgram, reason)
}

/// A bundled program's root table.
#[derive(Clone, Copy, Debug)]
pub struct BundledProgram<'a> {
    root: Table<'a>,
}

impl<'a> BundledProgram<'a> {
    /// Views `file` as a bundled program: the identifier and the root table are checked;
    /// everything else when read.
    pub fn parse(file: &'a [u8]) -> Result<BundledProgram<'a>, BundledError> {
        if !is_bundled(file) {
            return Err(malformed(
                "not a bundled program (no BP08 identifier at byte 4)",
            ));
        }
        let root = Table::root(file).ok_or(malformed(
            "the bundled program's root offset is out of range",
        ))?;
        Ok(BundledProgram { root })
    }

    /// The schema version the file records.
    pub fn version(&self) -> u32 {
        self.root.uint(bf::BundledProgram::VT_VERSION, 4) as u32
    }

    /// The `.pte` inside.
    pub fn program(&self) -> Result<&'a [u8], BundledError> {
        self.root
            .bytes(bf::BundledProgram::VT_PROGRAM)
            .filter(|p| !p.is_empty())
            .ok_or(malformed("the bundled program holds no program"))
    }

    fn suites(&self) -> Vector<'a> {
        self.root
            .vector(bf::BundledProgram::VT_METHOD_TEST_SUITES)
            .unwrap_or(Vector::EMPTY)
    }

    /// Number of method test suites.
    pub fn num_suites(&self) -> usize {
        self.suites().len()
    }

    /// Test suite `i`.
    pub fn suite(&self, i: usize) -> Result<TestSuite<'a>, BundledError> {
        type S<'x> = bf::BundledMethodTestSuite<'x>;
        let t = self
            .suites()
            .table(i)
            .ok_or(malformed("a method test suite is missing"))?;
        Ok(TestSuite {
            method: t
                .string(S::VT_METHOD_NAME)
                .ok_or(malformed("a method test suite names no method"))?,
            cases: t.vector(S::VT_TEST_CASES).unwrap_or(Vector::EMPTY),
        })
    }
}

/// The test cases of one method.
#[derive(Clone, Copy, Debug)]
pub struct TestSuite<'a> {
    /// The method's name.
    pub method: &'a str,
    cases: Vector<'a>,
}

impl<'a> TestSuite<'a> {
    /// Number of test cases.
    pub fn num_cases(&self) -> usize {
        self.cases.len()
    }

    /// Test case `i`.
    pub fn case(&self, i: usize) -> Result<TestCase<'a>, BundledError> {
        type C<'x> = bf::BundledMethodTestCase<'x>;
        let t = self
            .cases
            .table(i)
            .ok_or(malformed("a test case is missing"))?;
        Ok(TestCase {
            inputs: t.vector(C::VT_INPUTS).unwrap_or(Vector::EMPTY),
            expected: t.vector(C::VT_EXPECTED_OUTPUTS).unwrap_or(Vector::EMPTY),
        })
    }
}

/// One test case: inputs and expected outputs.
#[derive(Clone, Copy, Debug)]
pub struct TestCase<'a> {
    inputs: Vector<'a>,
    expected: Vector<'a>,
}

impl<'a> TestCase<'a> {
    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Input `i`.
    pub fn input(&self, i: usize) -> Result<BundledValue<'a>, BundledError> {
        value(self.inputs, i)
    }

    /// Number of expected outputs.
    pub fn num_expected_outputs(&self) -> usize {
        self.expected.len()
    }

    /// Expected output `i`.
    pub fn expected_output(&self, i: usize) -> Result<BundledValue<'a>, BundledError> {
        value(self.expected, i)
    }
}

/// A test input or expected output.
#[derive(Clone, Copy, Debug)]
pub enum BundledValue<'a> {
    /// A tensor.
    Tensor(BundledTensor<'a>),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A double.
    Double(f64),
}

/// A tensor given in full.
#[derive(Clone, Copy, Debug)]
pub struct BundledTensor<'a> {
    /// Its element type.
    pub dtype: ScalarType,
    sizes: Vector<'a>,
    /// Its contiguous data (`numel * element size` bytes for a well-formed file; callers
    /// check before use).
    pub data: &'a [u8],
    /// The order of its dims in memory, when recorded (empty: contiguous).
    pub dim_order: &'a [u8],
}

impl BundledTensor<'_> {
    /// Number of dims.
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }

    /// Size of dim `d` (`InvalidProgram` when negative).
    pub fn size(&self, d: usize) -> Result<usize, BundledError> {
        usize::try_from(self.sizes.i32(d)).map_err(|_| malformed("a tensor has a negative size"))
    }
}

fn value(list: Vector<'_>, i: usize) -> Result<BundledValue<'_>, BundledError> {
    type V<'x> = bf::Value<'x>;
    let t = list.table(i).ok_or(malformed("a test value is missing"))?;
    let (tag, member) = t.union(V::VT_VAL_TYPE, V::VT_VAL);
    let member = member.ok_or(malformed("a test value has no contents"))?;
    Ok(match bf::ValueUnion(tag) {
        bf::ValueUnion::Tensor => {
            type T<'x> = bf::Tensor<'x>;
            let code = member.int(T::VT_SCALAR_TYPE, 1) as i8;
            BundledValue::Tensor(BundledTensor {
                dtype: ScalarType::from_i8(code).ok_or(malformed(
                    "a test tensor has an element type this runtime does not know",
                ))?,
                sizes: member.vector(T::VT_SIZES).unwrap_or(Vector::EMPTY),
                data: member.bytes(T::VT_DATA).unwrap_or(&[]),
                dim_order: member.bytes(T::VT_DIM_ORDER).unwrap_or(&[]),
            })
        }
        bf::ValueUnion::Int => BundledValue::Int(member.int(bf::Int::VT_INT_VAL, 8)),
        bf::ValueUnion::Bool => BundledValue::Bool(member.uint(bf::Bool::VT_BOOL_VAL, 1) != 0),
        bf::ValueUnion::Double => {
            BundledValue::Double(f64::from_bits(member.uint(bf::Double::VT_DOUBLE_VAL, 8)))
        }
        _ => return Err(malformed("a test value has an unknown kind")),
    })
}
