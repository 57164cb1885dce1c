//! Union tags of the schema and the value kinds they stand for.

use core::fmt;

use crate::fields as fb;
use crate::reader::{Table, Vector};

/// The `KernelTypes` and `InstructionArguments` union tags.
#[allow(
    missing_docs,
    reason = "each constant is the schema union member of its name"
)]
pub mod tag {
    pub const NULL: u8 = 1;
    pub const INT: u8 = 2;
    pub const BOOL: u8 = 3;
    pub const DOUBLE: u8 = 4;
    pub const TENSOR: u8 = 5;
    pub const STRING: u8 = 6;
    pub const INT_LIST: u8 = 7;
    pub const DOUBLE_LIST: u8 = 8;
    pub const BOOL_LIST: u8 = 9;
    pub const TENSOR_LIST: u8 = 10;
    pub const OPTIONAL_TENSOR_LIST: u8 = 11;

    pub const KERNEL_CALL: u8 = 1;
    pub const DELEGATE_CALL: u8 = 2;
    pub const MOVE_CALL: u8 = 3;
    pub const JUMP_FALSE_CALL: u8 = 4;
    pub const FREE_CALL: u8 = 5;
}

// The tags above are the generated code's, and every list table keeps its items in its
// first field (read through `IntList`'s offset).
const _: () = {
    use fb::{InstructionArguments as I, KernelTypes as K};
    assert!(K::Null.0 == tag::NULL && K::Int.0 == tag::INT && K::Bool.0 == tag::BOOL);
    assert!(K::Double.0 == tag::DOUBLE && K::Tensor.0 == tag::TENSOR);
    assert!(K::String.0 == tag::STRING && K::IntList.0 == tag::INT_LIST);
    assert!(K::DoubleList.0 == tag::DOUBLE_LIST && K::BoolList.0 == tag::BOOL_LIST);
    assert!(K::TensorList.0 == tag::TENSOR_LIST);
    assert!(K::OptionalTensorList.0 == tag::OPTIONAL_TENSOR_LIST);
    assert!(I::KernelCall.0 == tag::KERNEL_CALL && I::DelegateCall.0 == tag::DELEGATE_CALL);
    assert!(I::MoveCall.0 == tag::MOVE_CALL && I::JumpFalseCall.0 == tag::JUMP_FALSE_CALL);
    assert!(I::FreeCall.0 == tag::FREE_CALL);
    let items = fb::IntList::VT_ITEMS;
    assert!(fb::DoubleList::VT_ITEMS == items && fb::BoolList::VT_ITEMS == items);
    assert!(fb::TensorList::VT_ITEMS == items && fb::OptionalTensorList::VT_ITEMS == items);
};

/// Value `index` of a value table: its `KernelTypes` tag and member table (`None` when
/// the index is out of range).
pub fn value_at(values: Vector<'_>, index: i64) -> Option<(u8, Option<Table<'_>>)> {
    let ev = values.table(usize::try_from(index).ok()?)?;
    // Two fields: the vtable is found once.
    Some(
        ev.fields()
            .union(fb::EValue::VT_VAL_TYPE, fb::EValue::VT_VAL),
    )
}

/// The kind of a value, numbered as ExecuTorch's EValue `Tag` (used in messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs, reason = "the variants are ExecuTorch's tags")]
pub enum Tag {
    None = 0,
    Tensor = 1,
    String = 2,
    Double = 3,
    Int = 4,
    Bool = 5,
    ListBool = 6,
    ListDouble = 7,
    ListInt = 8,
    ListTensor = 9,
    ListScalar = 10,
    ListOptionalTensor = 11,
}

impl Tag {
    /// A lower-case name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Tag::None => "none",
            Tag::Tensor => "tensor",
            Tag::String => "string",
            Tag::Double => "double",
            Tag::Int => "int",
            Tag::Bool => "bool",
            Tag::ListBool => "bool list",
            Tag::ListDouble => "double list",
            Tag::ListInt => "int list",
            Tag::ListTensor => "tensor list",
            Tag::ListScalar => "scalar list",
            Tag::ListOptionalTensor => "optional tensor list",
        }
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
