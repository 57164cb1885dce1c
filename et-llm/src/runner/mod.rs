//! Text generation over a program ExecuTorch's LLM exporter wrote (feature `std`): the
//! library side of `etch generate`, so an application needs no CLI.
//!
//! [`TextGenerator`] reads the program's constant methods ([`LlmConfig`]), prefills a
//! prompt (in one call when `forward` takes a dynamic sequence, else a token per call),
//! then decodes a token per call with `input_pos` until an end-of-sequence token, the
//! token limit or the end of the context. The KV cache lives in the program's mutable
//! buffers, so state carries over from call to call; [`TextGenerator::reset`] starts a
//! new sequence.
//!
//! ```no_run
//! use et_llm::runner::{Sampling, TextGenerator};
//! # use et_ops as _; use et_xnnpack as _;
//!
//! let mut llm = TextGenerator::from_file("llama.pte", &[] as &[&str])?;
//! let generation = llm.generate(&[1, 45, 99], 32, Sampling::default(), |token| {
//!     println!("{token}");
//!     true // keep going
//! })?;
//! println!("{:.1} tokens/s", generation.stats.decode_tokens_per_s());
//! # Ok::<(), et_llm::runner::GenerateError>(())
//! ```

mod config;
mod sampler;

use std::fmt;
use std::format;
use std::path::Path;
use std::string::String;
use std::time::{Duration, Instant};
use std::vec::Vec;

use et_runtime::{EValue, Input, Module, ModuleError, ScalarType, TensorRef};

pub use config::LlmConfig;
pub use sampler::{argmax, Sampler, Sampling};

/// Why generation could not start or go on.
#[derive(Debug)]
#[non_exhaustive]
pub enum GenerateError {
    /// Running the program failed.
    Module(ModuleError),
    /// The program lacks what an LLM program has (constant methods, `forward`'s inputs).
    NotAnLlm(String),
    /// The prompt does not fit the context.
    PromptTooLong {
        /// Prompt tokens.
        prompt: usize,
        /// The program's context length.
        context: usize,
    },
    /// The prompt has no tokens.
    EmptyPrompt,
    /// A token id outside the vocabulary.
    TokenOutOfRange {
        /// The token.
        token: u32,
        /// The vocabulary size.
        vocab_size: usize,
    },
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::Module(e) => write!(f, "{e}"),
            GenerateError::NotAnLlm(why) => write!(f, "not an LLM program: {why}"),
            GenerateError::PromptTooLong { prompt, context } => write!(
                f,
                "the prompt has {prompt} tokens, but the program's context holds {context} \
                 (prompt and generated tokens together)"
            ),
            GenerateError::EmptyPrompt => f.write_str("the prompt has no tokens"),
            GenerateError::TokenOutOfRange { token, vocab_size } => write!(
                f,
                "token {token} is outside the program's vocabulary of {vocab_size}"
            ),
        }
    }
}

impl std::error::Error for GenerateError {}

impl From<ModuleError> for GenerateError {
    fn from(e: ModuleError) -> Self {
        GenerateError::Module(e)
    }
}

/// Why generation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// An end-of-sequence token was generated (it is the last token returned).
    EndOfSequence,
    /// The requested number of tokens was generated.
    MaxNewTokens,
    /// The KV cache is full.
    ContextFull,
    /// The token callback asked to stop.
    Stopped,
}

/// Timings of one [`TextGenerator::generate`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationStats {
    /// Prompt tokens.
    pub prompt_tokens: usize,
    /// Tokens generated (the first comes from the prefill's logits).
    pub generated_tokens: usize,
    /// Time of the prefill calls.
    pub prefill: Duration,
    /// From the start to the first generated token.
    pub time_to_first_token: Duration,
    /// Time of the decode calls (one per generated token after the first).
    pub decode: Duration,
    /// Decode calls made.
    pub decode_steps: usize,
}

impl GenerationStats {
    /// Prompt tokens per second of prefill.
    pub fn prefill_tokens_per_s(&self) -> f64 {
        per_second(self.prompt_tokens, self.prefill)
    }

    /// Tokens per second of decoding (one token per call).
    pub fn decode_tokens_per_s(&self) -> f64 {
        per_second(self.decode_steps, self.decode)
    }
}

fn per_second(n: usize, t: Duration) -> f64 {
    if t.is_zero() {
        0.0
    } else {
        n as f64 / t.as_secs_f64()
    }
}

/// The result of [`TextGenerator::generate`].
#[derive(Clone, Debug)]
pub struct Generation {
    /// The generated tokens (prompt excluded).
    pub tokens: Vec<u32>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Timings.
    pub stats: GenerationStats,
}

/// Generates tokens with an LLM program; see the [module docs](self).
#[derive(Debug)]
pub struct TextGenerator {
    module: Module,
    config: LlmConfig,
    token_dtype: ScalarType,
    /// The most tokens one call takes (the tokens input's bound).
    chunk: usize,
    /// Positions of the KV cache filled so far.
    pos: usize,
    /// Tokens of the current sequence, for programs without a KV cache.
    history: Vec<u32>,
    /// The tokens of the call being made, in the program's integer type (kept to reuse
    /// their allocation from call to call).
    long: Vec<i64>,
    int: Vec<i32>,
    logits: Vec<f32>,
}

impl TextGenerator {
    /// Opens an LLM program (mapped) with its `.ptd` data files.
    pub fn from_file(
        path: impl AsRef<Path>,
        data_files: &[impl AsRef<Path>],
    ) -> Result<TextGenerator, GenerateError> {
        Self::new(Module::from_file_with_data(path, data_files)?)
    }

    /// A generator over `module`, which must hold an LLM program: `forward(tokens,
    /// input_pos) -> logits` and the constant methods.
    pub fn new(mut module: Module) -> Result<TextGenerator, GenerateError> {
        let config = LlmConfig::read(&mut module)?;
        // Loaded now (delegates packing their weights), so the first prefill is timed on
        // its own.
        module.load_method("forward")?;
        let meta = module.method_meta("forward")?;
        let expected_inputs = if config.use_kv_cache { 2 } else { 1 };
        if meta.num_inputs() != expected_inputs {
            return Err(GenerateError::NotAnLlm(format!(
                "forward takes {} inputs; an LLM program {} the KV cache takes {expected_inputs}",
                meta.num_inputs(),
                if config.use_kv_cache {
                    "with"
                } else {
                    "without"
                }
            )));
        }
        let tokens = meta.input_tensor(0).map_err(|_| {
            GenerateError::NotAnLlm(String::from("forward's first input is not a token tensor"))
        })?;
        let token_dtype = tokens.dtype;
        if !matches!(token_dtype, ScalarType::Long | ScalarType::Int) || tokens.sizes().len() != 2 {
            return Err(GenerateError::NotAnLlm(format!(
                "forward's first input is {:?} of sizes {:?}, not integer tokens [1, n]",
                token_dtype,
                tokens.sizes()
            )));
        }
        let bound = tokens.sizes()[1].max(1);
        let chunk = if config.enable_dynamic_shape {
            bound.min(config.max_seq_len)
        } else {
            1
        };
        Ok(TextGenerator {
            module,
            config,
            token_dtype,
            chunk,
            pos: 0,
            history: Vec::new(),
            long: Vec::new(),
            int: Vec::new(),
            logits: Vec::new(),
        })
    }

    /// The program's constants.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The module, to set threads or read metadata.
    pub fn module_mut(&mut self) -> &mut Module {
        &mut self.module
    }

    /// Positions of the context used by the current sequence.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Starts a new sequence at position 0. The cache entries of the old one are
    /// overwritten as the new one fills them; attention never reads past the current
    /// position, so nothing of the old sequence is seen.
    pub fn reset(&mut self) {
        self.pos = 0;
        self.history.clear();
    }

    /// Feeds `tokens` at the current position and returns the logits after the last one.
    pub fn prefill(&mut self, tokens: &[u32]) -> Result<&[f32], GenerateError> {
        if tokens.is_empty() {
            return Err(GenerateError::EmptyPrompt);
        }
        if self.pos + tokens.len() > self.config.max_context_len {
            return Err(GenerateError::PromptTooLong {
                prompt: self.pos + tokens.len(),
                context: self.config.max_context_len,
            });
        }
        for &t in tokens {
            self.check_token(t)?;
        }
        for piece in tokens.chunks(self.chunk) {
            self.call(piece)?;
        }
        Ok(&self.logits)
    }

    /// Feeds one token at the current position and returns the logits after it.
    pub fn step(&mut self, token: u32) -> Result<&[f32], GenerateError> {
        self.check_token(token)?;
        if self.pos + 1 > self.config.max_context_len {
            return Err(GenerateError::PromptTooLong {
                prompt: self.pos + 1,
                context: self.config.max_context_len,
            });
        }
        self.call(&[token])?;
        Ok(&self.logits)
    }

    /// Generates up to `max_new_tokens` after `prompt` (a new sequence), calling
    /// `on_token` with each token as it is chosen; `on_token` returning `false` stops.
    pub fn generate(
        &mut self,
        prompt: &[u32],
        max_new_tokens: usize,
        sampling: Sampling,
        mut on_token: impl FnMut(u32) -> bool,
    ) -> Result<Generation, GenerateError> {
        self.reset();
        let mut sampler = Sampler::new(sampling);
        let mut stats = GenerationStats {
            prompt_tokens: prompt.len(),
            ..GenerationStats::default()
        };
        let start = Instant::now();
        self.prefill(prompt)?;
        stats.prefill = start.elapsed();
        let mut tokens = Vec::new();
        let stop = loop {
            if tokens.len() == max_new_tokens {
                break StopReason::MaxNewTokens;
            }
            let token = sampler.sample(&self.logits);
            if tokens.is_empty() {
                stats.time_to_first_token = start.elapsed();
            }
            tokens.push(token);
            let more = on_token(token);
            if self.config.eos_ids.contains(&i64::from(token)) {
                break StopReason::EndOfSequence;
            }
            if !more {
                break StopReason::Stopped;
            }
            if tokens.len() == max_new_tokens {
                break StopReason::MaxNewTokens;
            }
            if self.pos >= self.config.max_context_len {
                break StopReason::ContextFull;
            }
            let t0 = Instant::now();
            self.step(token)?;
            stats.decode += t0.elapsed();
            stats.decode_steps += 1;
        };
        stats.generated_tokens = tokens.len();
        Ok(Generation {
            tokens,
            stop,
            stats,
        })
    }

    fn check_token(&self, token: u32) -> Result<(), GenerateError> {
        if token as usize >= self.config.vocab_size {
            return Err(GenerateError::TokenOutOfRange {
                token,
                vocab_size: self.config.vocab_size,
            });
        }
        Ok(())
    }

    /// One `forward` call on `tokens` at the current position; keeps the last
    /// position's logits.
    fn call(&mut self, tokens: &[u32]) -> Result<(), GenerateError> {
        let fed: &[u32] = if self.config.use_kv_cache {
            tokens
        } else {
            // Without a cache the program sees the whole sequence every call.
            self.history.extend_from_slice(tokens);
            &self.history
        };
        let sizes = [1, fed.len()];
        let tokens_input = match self.token_dtype {
            ScalarType::Int => {
                self.int.clear();
                self.int.extend(fed.iter().map(|&t| t as i32));
                TensorRef::from_slice(&self.int, &sizes)
            }
            _ => {
                self.long.clear();
                self.long.extend(fed.iter().map(|&t| i64::from(t)));
                TensorRef::from_slice(&self.long, &sizes)
            }
        };
        let pos = [self.pos as i64];
        let pos_input = TensorRef::from_slice(&pos, &[1]);
        let inputs: &[Input<'_>] = if self.config.use_kv_cache {
            &[tokens_input.into(), pos_input.into()]
        } else {
            &[tokens_input.into()]
        };
        let vocab = self.config.vocab_size;
        let logits = &mut self.logits;
        let read = self.module.execute_with("forward", inputs, |outputs| {
            let Some(EValue::Tensor(t)) = outputs.first() else {
                return Err(String::from("forward's first output is not a tensor"));
            };
            let data = t
                .data::<f32>()
                .map_err(|_| format!("forward's logits are {:?}, not float32", t.dtype()))?;
            if data.len() < vocab || data.len() % vocab != 0 {
                return Err(format!(
                    "forward's logits have sizes {:?}, not a multiple of the vocabulary ({vocab})",
                    t.sizes()
                ));
            }
            logits.clear();
            logits.extend_from_slice(&data[data.len() - vocab..]);
            Ok(())
        })?;
        read.map_err(GenerateError::NotAnLlm)?;
        self.pos += tokens.len();
        Ok(())
    }
}
