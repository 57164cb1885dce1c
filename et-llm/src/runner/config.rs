//! What an LLM program says about itself: the constant methods ExecuTorch's LLM
//! exporter writes (`get_max_seq_len`, `get_bos_id`, ...), read once at open.

use std::format;
use std::string::String;
use std::vec::Vec;

use et_runtime::{Module, Output};

use super::GenerateError;

/// An LLM program's constants, from its constant methods.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LlmConfig {
    /// The longest token sequence one `forward` call takes (`get_max_seq_len`).
    pub max_seq_len: usize,
    /// Positions the KV cache holds: prompt plus generated tokens (`get_max_context_len`;
    /// `get_max_seq_len` in files that predate it).
    pub max_context_len: usize,
    /// Logits per position (`get_vocab_size`).
    pub vocab_size: usize,
    /// The token a prompt starts with (`get_bos_id`).
    pub bos_id: Option<i64>,
    /// Tokens that end generation (`get_eos_ids`, or the older `get_eos_id`).
    pub eos_ids: Vec<i64>,
    /// Whether `forward` takes `input_pos` and keeps a KV cache (`use_kv_cache`).
    pub use_kv_cache: bool,
    /// Whether `forward` takes a prompt of any length up to `max_seq_len` in one call
    /// (`enable_dynamic_shape`); otherwise one token per call.
    pub enable_dynamic_shape: bool,
}

/// The constant methods a program must have to be generated from.
const REQUIRED: [&str; 2] = ["get_max_seq_len", "get_vocab_size"];

impl LlmConfig {
    /// Reads the constants from `module`'s methods; a program without the required ones
    /// is not an LLM program (the error lists what is missing).
    pub fn read(module: &mut Module) -> Result<LlmConfig, GenerateError> {
        let names: Vec<String> = module
            .method_names()
            .iter()
            .map(|n| String::from(*n))
            .collect();
        let has = |name: &str| names.iter().any(|n| n == name);
        let missing: Vec<&str> = REQUIRED.iter().copied().filter(|n| !has(n)).collect();
        if !missing.is_empty() || !has("forward") {
            return Err(GenerateError::NotAnLlm(format!(
                "the program has no {} method{}: it was not written by ExecuTorch's LLM \
                 exporter, export_llm (its methods are {})",
                if has("forward") {
                    missing.join(", ")
                } else {
                    String::from("forward")
                },
                if missing.len() > 1 { "s" } else { "" },
                names.join(", ")
            )));
        }
        let mut int = |name: &str| -> Result<Option<Vec<i64>>, GenerateError> {
            if !has(name) {
                return Ok(None);
            }
            let outputs = module.execute(name, &[])?;
            outputs
                .iter()
                .map(|o| o.to_i64().ok_or_else(|| not_an_int(name, o)))
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        };
        let one = |name: &str, v: Option<Vec<i64>>| -> Result<Option<i64>, GenerateError> {
            match v.as_deref() {
                None => Ok(None),
                Some([x]) => Ok(Some(*x)),
                Some(other) => Err(GenerateError::NotAnLlm(format!(
                    "constant method {name} returns {} values, not one",
                    other.len()
                ))),
            }
        };
        let positive = |name: &str, v: Option<i64>| -> Result<usize, GenerateError> {
            match v {
                Some(x) if x > 0 => usize::try_from(x).map_err(|_| bad(name, x)),
                Some(x) => Err(bad(name, x)),
                None => Err(GenerateError::NotAnLlm(format!(
                    "the program has no {name} method"
                ))),
            }
        };
        let max_seq = one("get_max_seq_len", int("get_max_seq_len")?)?;
        let max_seq_len = positive("get_max_seq_len", max_seq)?;
        let context = one("get_max_context_len", int("get_max_context_len")?)?;
        let max_context_len = match context {
            Some(_) => positive("get_max_context_len", context)?,
            None => max_seq_len,
        };
        let vocab_size = positive(
            "get_vocab_size",
            one("get_vocab_size", int("get_vocab_size")?)?,
        )?;
        let bos_id = one("get_bos_id", int("get_bos_id")?)?;
        let eos_ids = match int("get_eos_ids")? {
            Some(ids) => ids,
            None => one("get_eos_id", int("get_eos_id")?)?.into_iter().collect(),
        };
        let flag = |v: Option<Vec<i64>>, default| v.map_or(default, |v| v.iter().any(|&x| x != 0));
        let use_kv_cache = flag(int("use_kv_cache")?, false);
        let enable_dynamic_shape = flag(int("enable_dynamic_shape")?, false);
        Ok(LlmConfig {
            max_seq_len,
            max_context_len,
            vocab_size,
            bos_id,
            eos_ids,
            use_kv_cache,
            enable_dynamic_shape,
        })
    }
}

fn not_an_int(name: &str, o: &Output) -> GenerateError {
    GenerateError::NotAnLlm(format!(
        "constant method {name} returns {o:?}, not an integer"
    ))
}

fn bad(name: &str, v: i64) -> GenerateError {
    GenerateError::NotAnLlm(format!(
        "constant method {name} returns {v}, not a positive size"
    ))
}
