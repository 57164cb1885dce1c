//! Kernel keys as written in `et_kernel_metadata`: `default`, or `v1/6;0,1|6;0,1|...`.

use core::fmt;

use et_schema::meta::key_text::{write_entry, KeyText, DEFAULT_KEY};
use et_schema::ScalarType;

/// One tensor entry of a kernel key: its dtype and dim order (`6;0,1` is a 2-d `Float`
/// tensor in contiguous order; `6;` is a 0-d one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorMeta {
    /// The element type.
    pub dtype: ScalarType,
    /// The dim order (a permutation of `0..rank`; empty for a 0-d tensor).
    pub dim_order: Vec<u8>,
}

/// A parsed kernel key of `et_kernel_metadata`.
///
/// ExecuTorch writes `v1/` followed by `dtype;dim_order` for every tensor argument of a
/// call (inputs, out arguments and the return slot, in argument order), joined with `|`.
/// `default` stands for "any dtype, any dim order" (a fallback kernel). `gen_oplist`
/// writes a bare `v1` for a call without tensor arguments; it parses as a specialized key
/// with no tensors.
///
/// ```
/// use selection::KernelKey;
/// use et_schema::ScalarType;
///
/// let key = KernelKey::parse("v1/6;0,1|4;0|6;").unwrap();
/// assert_eq!(
///     key.dtypes(),
///     Some(vec![ScalarType::Float, ScalarType::Long, ScalarType::Float])
/// );
/// assert_eq!(key.to_string(), "v1/6;0,1|4;0|6;");
/// assert_eq!(KernelKey::parse("default").unwrap(), KernelKey::Default);
/// assert!(KernelKey::parse("v1/6;0,x").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KernelKey {
    /// `default`: not specialized.
    Default,
    /// `v<version>/<tensor>|<tensor>...`.
    Specialized {
        /// The key format version (ExecuTorch writes 1).
        version: u32,
        /// The tensor entries, in argument order.
        tensors: Vec<TensorMeta>,
    },
}

impl KernelKey {
    /// The string ExecuTorch uses for a non-specialized kernel.
    pub const DEFAULT: &'static str = DEFAULT_KEY;

    /// Parses a kernel key string (the grammar is et-schema's `KeyText`). The error says
    /// which part is wrong.
    pub fn parse(text: &str) -> Result<KernelKey, String> {
        Ok(match KeyText::parse(text).map_err(|e| e.to_string())? {
            KeyText::Default => KernelKey::Default,
            key @ KeyText::Specialized { version, .. } => KernelKey::Specialized {
                version,
                tensors: key
                    .entries()
                    .map(|e| TensorMeta {
                        dtype: e.dtype,
                        dim_order: e.dim_order().collect(),
                    })
                    .collect(),
            },
        })
    }

    /// The key `gen_oplist` writes for a dtype given without dim order (`--ops_dict`):
    /// `v1/<dtype>;`.
    pub fn from_dtype(dtype: ScalarType) -> KernelKey {
        KernelKey::Specialized {
            version: 1,
            tensors: vec![TensorMeta {
                dtype,
                dim_order: Vec::new(),
            }],
        }
    }

    /// The dtypes of the tensor entries in order, or `None` for `default`.
    pub fn dtypes(&self) -> Option<Vec<ScalarType>> {
        match self {
            KernelKey::Default => None,
            KernelKey::Specialized { tensors, .. } => {
                Some(tensors.iter().map(|t| t.dtype).collect())
            }
        }
    }

    /// The tensor entries (empty for `default`).
    pub fn tensors(&self) -> &[TensorMeta] {
        match self {
            KernelKey::Default => &[],
            KernelKey::Specialized { tensors, .. } => tensors,
        }
    }
}

impl fmt::Display for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelKey::Default => f.write_str(Self::DEFAULT),
            KernelKey::Specialized { version, tensors } if tensors.is_empty() => {
                write!(f, "v{version}")
            }
            KernelKey::Specialized { version, tensors } => {
                for (i, t) in tensors.iter().enumerate() {
                    let dims = t.dim_order.iter().map(|&d| u64::from(d));
                    write_entry(f, *version, i, t.dtype as u8, dims)?;
                }
                Ok(())
            }
        }
    }
}

impl core::str::FromStr for KernelKey {
    type Err = String;

    fn from_str(s: &str) -> Result<KernelKey, String> {
        KernelKey::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "default",
            "v1",
            "v1/6;0,1|6;0,1|6;0,1|6;0,1",
            "v1/6;|11;|11;",
            "v1/6;0,1,2,3|6;0|6;0|6;0|6;0|6;0,1,2,3|6;0|6;0|6;0,1,2,3",
            "v2/29;0",
        ] {
            assert_eq!(KernelKey::parse(s).unwrap().to_string(), s);
        }
        // `v1/` (no entries) is read as "no tensors" and printed the way gen_oplist does.
        assert_eq!(KernelKey::parse("v1/").unwrap().to_string(), "v1");
    }

    #[test]
    fn dtypes_in_order() {
        let k = KernelKey::parse("v1/11;0,1|4;0,1|3;").unwrap();
        assert_eq!(
            k.dtypes().unwrap(),
            [ScalarType::Bool, ScalarType::Long, ScalarType::Int]
        );
        assert_eq!(k.tensors()[0].dim_order, [0, 1]);
        assert!(k.tensors()[2].dim_order.is_empty());
        assert_eq!(KernelKey::Default.dtypes(), None);
        assert_eq!(
            KernelKey::from_dtype(ScalarType::Float).to_string(),
            "v1/6;"
        );
    }

    #[test]
    fn rejects_malformed() {
        for (s, why) in [
            ("", "expected `default`"),
            ("Float", "expected `default`"),
            ("v/6;0", "version"),
            ("vx/6;0", "version"),
            ("v1/6", "expected `dtype;dim_order`"),
            ("v1/x;0", "dtype `x` is not a number"),
            ("v1/30;0", "dtype 30 is not an ExecuTorch scalar type"),
            ("v1/-1;0", "dtype `-1`"),
            ("v1/6;0,,1", "dim order entry ``"),
            ("v1/6;0,256", "dim order entry `256`"),
            ("v1/6;0|", "tensor entry 1"),
            ("v1/6;0| 6;0", "dtype ` 6`"),
        ] {
            let err = KernelKey::parse(s).unwrap_err();
            assert!(err.contains(why), "{s:?}: {err}");
        }
    }
}
