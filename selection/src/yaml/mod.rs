//! Reading and writing `selected_operators.yaml`.
//!
//! Reading goes through serde with small validating newtypes, so that a bad operator name
//! or kernel key is reported by serde_yaml with its key path, line and column. Writing
//! (`emit`) is done by hand to match PyYAML's `yaml.safe_dump(data,
//! default_flow_style=False)` byte for byte.

mod emit;
mod resolve;
mod scalar;

pub(crate) use emit::write;

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::key::KernelKey;
use crate::name::check_op_name;
use crate::{OperatorInfo, Selection};

/// The document as written; absent keys and `null` values mean "the default".
#[derive(Deserialize)]
#[serde(
    expecting = "a mapping of selected_operators.yaml keys (operators, et_kernel_metadata, ...)"
)]
pub(crate) struct RawSelection {
    #[serde(default)]
    include_all_operators: Option<Flag>,
    #[serde(default)]
    include_all_non_op_selectives: Option<Flag>,
    #[serde(default)]
    debug_info: Option<Vec<Option<Text>>>,
    #[serde(default)]
    operators: Option<BTreeMap<OpName, Option<RawOperator>>>,
    #[serde(default)]
    kernel_metadata: Option<BTreeMap<Text, Option<Vec<Option<Text>>>>>,
    #[serde(default)]
    et_kernel_metadata: Option<BTreeMap<OpName, Option<Vec<KeyText>>>>,
    #[serde(default)]
    custom_classes: Option<Vec<Option<Text>>>,
    #[serde(default)]
    build_features: Option<Vec<Option<Text>>>,
}

#[derive(Deserialize)]
#[serde(
    expecting = "a mapping with is_root_operator, is_used_for_training, include_all_overloads, debug_info"
)]
struct RawOperator {
    #[serde(default)]
    is_root_operator: Option<Flag>,
    #[serde(default)]
    is_used_for_training: Option<Flag>,
    #[serde(default)]
    include_all_overloads: Option<Flag>,
    #[serde(default)]
    debug_info: Option<Vec<Option<Text>>>,
}

impl RawSelection {
    pub(crate) fn into_selection(self) -> Selection {
        let texts = |v: Option<Vec<Option<Text>>>| -> Vec<String> {
            v.into_iter().flatten().flatten().map(|t| t.0).collect()
        };
        let mut sel = Selection {
            include_all_operators: self.include_all_operators.is_some_and(|f| f.0),
            include_all_non_op_selectives: self.include_all_non_op_selectives.is_some_and(|f| f.0),
            debug_info: self.debug_info.map(|d| texts(Some(d))),
            ..Selection::default()
        };
        for (name, op) in self.operators.into_iter().flatten() {
            let info = match op {
                None => OperatorInfo::default(),
                Some(op) => OperatorInfo {
                    is_root_operator: op.is_root_operator.is_none_or(|f| f.0),
                    is_used_for_training: op.is_used_for_training.is_none_or(|f| f.0),
                    include_all_overloads: op.include_all_overloads.is_some_and(|f| f.0),
                    debug_info: op.debug_info.map(|d| texts(Some(d))),
                },
            };
            sel.operators.insert(name.0, info);
        }
        for (tag, dtypes) in self.kernel_metadata.into_iter().flatten() {
            let mut dtypes = texts(dtypes);
            dtypes.sort();
            dtypes.dedup();
            sel.kernel_metadata.insert(tag.0, dtypes);
        }
        for (name, keys) in self.et_kernel_metadata.into_iter().flatten() {
            let mut keys: Vec<String> = keys.into_iter().flatten().map(|k| k.0).collect();
            keys.sort();
            keys.dedup();
            sel.et_kernel_metadata.insert(name.0, keys);
        }
        sel.custom_classes = texts(self.custom_classes).into_iter().collect();
        sel.build_features = texts(self.build_features).into_iter().collect();
        sel
    }
}

/// A boolean, also in YAML 1.1 spelling (`yes`, `No`, `on`, ...), which PyYAML reads and
/// older selection files use.
struct Flag(bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean (true or false)")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Flag, E> {
                match yaml11_bool(v) {
                    Some(b) => Ok(Flag(b)),
                    None => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Any scalar, as text (`debug_info` entries may be numbers or dates to YAML).
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.0 == other.0
    }
}
impl Eq for Text {}
impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// A checked operator name (`aten::add.out`).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct OpName(String);

impl<'de> Deserialize<'de> for OpName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OpName, D::Error> {
        let name = String::deserialize(d)?;
        match check_op_name(&name) {
            Ok(()) => Ok(OpName(name)),
            Err(why) => Err(de::Error::custom(format!(
                "invalid operator name `{name}`: {why}"
            ))),
        }
    }
}

/// A checked kernel key string (`default` or `v1/6;0,1|...`).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyText, D::Error> {
        let key = String::deserialize(d)?;
        match KernelKey::parse(&key) {
            Ok(_) => Ok(KeyText(key)),
            Err(why) => Err(de::Error::custom(format!(
                "invalid kernel key `{key}`: {why}"
            ))),
        }
    }
}

/// YAML 1.1 booleans, as PyYAML's resolver knows them.
pub(crate) fn yaml11_bool(s: &str) -> Option<bool> {
    match s {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}
