//! Tensor element types, numbered as in ExecuTorch's `scalar_type.fbs`.

use core::fmt;

/// A tensor's element type. Discriminants are the numbers used in `.pte` files and in
/// kernel keys (`v1/6;0,1` is a `Float` tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs, reason = "the variants are ExecuTorch's names")]
pub enum ScalarType {
    Byte = 0,
    Char = 1,
    Short = 2,
    Int = 3,
    Long = 4,
    Half = 5,
    Float = 6,
    Double = 7,
    ComplexHalf = 8,
    ComplexFloat = 9,
    ComplexDouble = 10,
    Bool = 11,
    QInt8 = 12,
    QUInt8 = 13,
    QInt32 = 14,
    BFloat16 = 15,
    QUInt4x2 = 16,
    QUInt2x4 = 17,
    Bits1x8 = 18,
    Bits2x4 = 19,
    Bits4x2 = 20,
    Bits8 = 21,
    Bits16 = 22,
    Float8E5M2 = 23,
    Float8E4M3FN = 24,
    Float8E5M2FNUZ = 25,
    Float8E4M3FNUZ = 26,
    UInt16 = 27,
    UInt32 = 28,
    UInt64 = 29,
}

/// [`ScalarType::element_size`] by discriminant.
static ELEMENT_SIZES: [u8; 30] = {
    use ScalarType::*;
    let mut sizes = [0u8; 30];
    let mut i = 0;
    while i < 30 {
        // `element_size` indexes by discriminant: `ALL` must be in discriminant order.
        assert!(ScalarType::ALL[i] as usize == i);
        sizes[i] = match ScalarType::ALL[i] {
            Byte | Char | Bool | QInt8 | QUInt8 | QUInt4x2 | QUInt2x4 | Bits1x8 | Bits2x4
            | Bits4x2 | Bits8 | Float8E5M2 | Float8E4M3FN | Float8E5M2FNUZ | Float8E4M3FNUZ => 1,
            Short | Half | BFloat16 | Bits16 | UInt16 => 2,
            Int | Float | QInt32 | ComplexHalf | UInt32 => 4,
            Long | Double | ComplexFloat | UInt64 => 8,
            ComplexDouble => 16,
        };
        i += 1;
    }
    sizes
};

impl ScalarType {
    /// All element types, in numeric order.
    pub const ALL: [ScalarType; 30] = {
        let mut all = [ScalarType::Byte; 30];
        let mut i = 0;
        while i < 30 {
            all[i] = match ScalarType::from_i8(i as i8) {
                Some(t) => t,
                None => ScalarType::Byte,
            };
            i += 1;
        }
        all
    };

    /// The type numbered `value`, if it is one ExecuTorch's runtime accepts (0..=29).
    pub const fn from_i8(value: i8) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match value {
            0 => Byte,
            1 => Char,
            2 => Short,
            3 => Int,
            4 => Long,
            5 => Half,
            6 => Float,
            7 => Double,
            8 => ComplexHalf,
            9 => ComplexFloat,
            10 => ComplexDouble,
            11 => Bool,
            12 => QInt8,
            13 => QUInt8,
            14 => QInt32,
            15 => BFloat16,
            16 => QUInt4x2,
            17 => QUInt2x4,
            18 => Bits1x8,
            19 => Bits2x4,
            20 => Bits4x2,
            21 => Bits8,
            22 => Bits16,
            23 => Float8E5M2,
            24 => Float8E4M3FN,
            25 => Float8E5M2FNUZ,
            26 => Float8E4M3FNUZ,
            27 => UInt16,
            28 => UInt32,
            29 => UInt64,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub const fn element_size(self) -> usize {
        // A byte table built from the `match` above rather than the `match` itself,
        // which compiles to a table of words, one copy per inlining.
        ELEMENT_SIZES[self as usize] as usize
    }

    /// One element, given as its little-endian bytes, as an `f64` (bool as 0 or 1): for
    /// tools that compare outputs. `None` for types without one real value (complex,
    /// quantized, bit and float8 types) or when `bytes` is shorter than an element.
    pub fn read_f64(self, bytes: &[u8]) -> Option<f64> {
        use ScalarType::*;
        fn le<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
            b.get(..N)?.try_into().ok()
        }
        Some(match self {
            Float => f32::from_le_bytes(le(bytes)?).into(),
            Double => f64::from_le_bytes(le(bytes)?),
            Half => half::f16::from_le_bytes(le(bytes)?).to_f64(),
            BFloat16 => half::bf16::from_le_bytes(le(bytes)?).to_f64(),
            Byte | Bool => f64::from(*bytes.first()?),
            Char => f64::from(*bytes.first()? as i8),
            Short => i16::from_le_bytes(le(bytes)?).into(),
            UInt16 => u16::from_le_bytes(le(bytes)?).into(),
            Int => i32::from_le_bytes(le(bytes)?).into(),
            UInt32 => u32::from_le_bytes(le(bytes)?).into(),
            Long => i64::from_le_bytes(le(bytes)?) as f64,
            UInt64 => u64::from_le_bytes(le(bytes)?) as f64,
            _ => return None,
        })
    }

    /// The NumPy/PyTorch name (`float32`, `int64`, `bool`, ...).
    pub const fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Byte => "uint8",
            Char => "int8",
            Short => "int16",
            Int => "int32",
            Long => "int64",
            Half => "float16",
            Float => "float32",
            Double => "float64",
            ComplexHalf => "complex32",
            ComplexFloat => "complex64",
            ComplexDouble => "complex128",
            Bool => "bool",
            QInt8 => "qint8",
            QUInt8 => "quint8",
            QInt32 => "qint32",
            BFloat16 => "bfloat16",
            QUInt4x2 => "quint4x2",
            QUInt2x4 => "quint2x4",
            Bits1x8 => "bits1x8",
            Bits2x4 => "bits2x4",
            Bits4x2 => "bits4x2",
            Bits8 => "bits8",
            Bits16 => "bits16",
            Float8E5M2 => "float8_e5m2",
            Float8E4M3FN => "float8_e4m3fn",
            Float8E5M2FNUZ => "float8_e5m2fnuz",
            Float8E4M3FNUZ => "float8_e4m3fnuz",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
        }
    }

    /// Parses a NumPy/PyTorch name (`float32`), an ExecuTorch name (`Float`), or a Rust
    /// primitive name (`f32`).
    pub fn from_name(name: &str) -> Option<ScalarType> {
        use ScalarType::*;
        if let Some(e) = ElementType::named(name) {
            return Some(e.dtype);
        }
        let by_alias = match name {
            "Half" | "half" => Some(Half),
            "Float" | "float" => Some(Float),
            "Double" | "double" => Some(Double),
            "Byte" => Some(Byte),
            "Char" => Some(Char),
            "Short" => Some(Short),
            "Int" => Some(Int),
            "Long" | "long" => Some(Long),
            "Bool" => Some(Bool),
            "BFloat16" => Some(BFloat16),
            _ => None,
        };
        by_alias.or_else(|| ScalarType::ALL.into_iter().find(|t| t.name() == name))
    }

    /// True for the floating-point types.
    pub const fn is_floating(self) -> bool {
        matches!(
            self,
            ScalarType::Half | ScalarType::Float | ScalarType::Double | ScalarType::BFloat16
        )
    }

    /// True for the integral types, optionally counting `Bool`.
    pub const fn is_integral(self, include_bool: bool) -> bool {
        match self {
            ScalarType::Byte
            | ScalarType::Char
            | ScalarType::Short
            | ScalarType::Int
            | ScalarType::Long
            | ScalarType::UInt16
            | ScalarType::UInt32
            | ScalarType::UInt64 => true,
            ScalarType::Bool => include_bool,
            _ => false,
        }
    }

    /// A one-bit-per-type mask, used by dtype sets.
    pub const fn bit(self) -> u32 {
        1u32 << (self as u8)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of element types as a bit mask; the compile-time form of a dtype selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DtypeSet(pub u32);

impl DtypeSet {
    /// Every type.
    pub const ALL: DtypeSet = DtypeSet(u32::MAX);
    /// No type.
    pub const EMPTY: DtypeSet = DtypeSet(0);

    /// Whether `t` is in the set.
    pub const fn contains(self, t: ScalarType) -> bool {
        self.0 & t.bit() != 0
    }

    /// The set with `t` added.
    pub const fn with(self, t: ScalarType) -> DtypeSet {
        DtypeSet(self.0 | t.bit())
    }
}

/// A boolean tensor element: one byte, where any non-zero value reads as true.
///
/// Tensor bytes can come from files and user buffers, so they are not guaranteed to be
/// 0 or 1; reading them as Rust `bool` could be undefined behaviour. Kernels write 0/1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Bool(pub u8);

impl Bool {
    /// The truth value.
    #[inline]
    pub const fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    #[inline]
    fn from(b: bool) -> Bool {
        Bool(b as u8)
    }
}

impl From<Bool> for bool {
    #[inline]
    fn from(b: Bool) -> bool {
        b.0 != 0
    }
}

/// A Rust type that can view tensor data of one [`ScalarType`].
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self`, the size must be
/// `DTYPE.element_size()`, and the type must have no padding or interior mutability.
pub unsafe trait Element:
    Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static
{
    /// The element type this Rust type reads.
    const DTYPE: ScalarType;
}

/// A Rust element type that kernels are instantiated with: the one table that ties the
/// names written in `#[kernel(dtype = ..)]` to [`ScalarType`]s and to the Rust types that
/// implement [`Element`] (the `#[kernel]` macro reads it; the impls below are generated
/// from the same lines, so the two cannot disagree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementType {
    /// The name `#[kernel(dtype = ..)]` and [`ScalarType::from_name`] accept (`f32`, `bool`).
    pub name: &'static str,
    /// The Rust type's name: a primitive (`f32`), or one of this crate's types (`f16`,
    /// `bf16`, `Bool`), which et-runtime re-exports.
    pub rust_type: &'static str,
    /// Whether `rust_type` is a primitive.
    pub primitive: bool,
    /// The tensor element type; its number is `dtype as u8`, its size
    /// [`ScalarType::element_size`].
    pub dtype: ScalarType,
}

macro_rules! element_types {
    ($($name:literal => $t:ty, $rust:literal, $primitive:literal, $d:ident;)*) => {
        $(
            // SAFETY: plain-old-data numeric types (or a u8 newtype) whose every bit
            // pattern is valid, whose size matches the dtype, and which have no padding.
            unsafe impl Element for $t {
                const DTYPE: ScalarType = ScalarType::$d;
            }
        )*

        /// Every element type kernels can be instantiated with.
        pub const ELEMENT_TYPES: &[ElementType] = &[$(ElementType {
            name: $name,
            rust_type: $rust,
            primitive: $primitive,
            dtype: ScalarType::$d,
        }),*];

        // The table's sizes are the Rust types' sizes.
        const _: () = {$(
            assert!(core::mem::size_of::<$t>() == ScalarType::$d.element_size());
        )*};
    };
}

element_types! {
    "f16" => half::f16, "f16", false, Half;
    "bf16" => half::bf16, "bf16", false, BFloat16;
    "f32" => f32, "f32", true, Float;
    "f64" => f64, "f64", true, Double;
    "u8" => u8, "u8", true, Byte;
    "i8" => i8, "i8", true, Char;
    "i16" => i16, "i16", true, Short;
    "i32" => i32, "i32", true, Int;
    "i64" => i64, "i64", true, Long;
    "bool" => Bool, "Bool", false, Bool;
    "u16" => u16, "u16", true, UInt16;
    "u32" => u32, "u32", true, UInt32;
    "u64" => u64, "u64", true, UInt64;
}

impl ElementType {
    /// The entry named `name` (`f32`, `bool`).
    pub fn named(name: &str) -> Option<&'static ElementType> {
        ELEMENT_TYPES.iter().find(|e| e.name == name)
    }
}
