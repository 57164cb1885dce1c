//! `etch_generator`: text generation with an LLM program, as `etch generate` does it.

use std::ffi::{c_char, c_int, c_void};

use et_llm::runner::{GenerateError, Generation, Sampling, StopReason, TextGenerator};
use et_llm::tokenizer::{TextStream, Tokenizer};

use crate::error::{etch_status, guard, guard_value, Failure, Result};
use crate::module::{path_arg, paths_arg, str_arg};

/// A text generator: an LLM program (written by ExecuTorch's `export_llm`) and, for text
/// prompts, its tokenizer. Made by `etch_generator_new`, freed by `etch_generator_free`.
///
/// Not thread-safe: one thread at a time per generator (it may move between threads).
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct etch_generator {
    llm: TextGenerator,
    tokenizer: Option<Tokenizer>,
    top_p: f32,
}

/// Why a generation stopped.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum etch_stop_reason {
    /// An end-of-sequence token was generated (it is the last token).
    ETCH_STOP_END_OF_SEQUENCE = 0,
    /// `max_new_tokens` tokens were generated.
    ETCH_STOP_MAX_NEW_TOKENS = 1,
    /// The program's context is full.
    ETCH_STOP_CONTEXT_FULL = 2,
    /// The callback returned non-zero.
    ETCH_STOP_CALLBACK = 3,
}

/// Figures of one generation.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct etch_generation_stats {
    /// Prompt tokens (with the beginning-of-sequence token a text prompt gets).
    pub prompt_tokens: usize,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Why generation stopped.
    pub stop: etch_stop_reason,
    /// Time of the prefill (the prompt's `forward` calls), in milliseconds.
    pub prefill_ms: f64,
    /// From the start to the first generated token, in milliseconds.
    pub time_to_first_token_ms: f64,
    /// Time of the decode calls (one per token after the first), in milliseconds.
    pub decode_ms: f64,
    /// Prompt tokens per second of prefill.
    pub prefill_tokens_per_s: f64,
    /// Tokens per second of decoding.
    pub decode_tokens_per_s: f64,
}

/// Receives each piece of generated text: `len` bytes of UTF-8 at `piece` (also
/// NUL-terminated), valid during the call only. Pieces never split a character. Return 0
/// to go on, non-zero to stop. `user` is the pointer given to the generate call. The
/// callback runs on the thread that called generate; it must not unwind (throw a C++
/// exception or `longjmp`) through etch, and must not use the generator.
#[allow(non_camel_case_types)]
pub type etch_text_callback =
    Option<unsafe extern "C" fn(piece: *const c_char, len: usize, user: *mut c_void) -> c_int>;

/// Receives each generated token id. Return 0 to go on, non-zero to stop. The rules of
/// `etch_text_callback` apply.
#[allow(non_camel_case_types)]
pub type etch_token_callback = Option<unsafe extern "C" fn(token: u32, user: *mut c_void) -> c_int>;

fn generate_failure(e: GenerateError) -> Failure {
    let status = match &e {
        GenerateError::Module(m) => etch_status::of(m.code()),
        GenerateError::NotAnLlm(_) => etch_status::ETCH_NOT_AN_LLM,
        _ => etch_status::ETCH_INVALID_ARGUMENT,
    };
    Failure::new(status, e.to_string())
}

/// The generator a caller passed, borrowed exclusively for the call.
///
/// # Safety
/// `g` is NULL or a live generator that nothing else uses while the borrow lives.
unsafe fn generator_mut<'a>(g: *mut etch_generator) -> Result<&'a mut etch_generator> {
    // SAFETY: the caller's promise.
    unsafe { g.as_mut() }.ok_or_else(|| Failure::null("generator"))
}

/// Opens an LLM program and its tokenizer.
///
/// - `pte_path`: the `.pte` program (ExecuTorch's `export_llm` output: `forward(tokens,
///   input_pos)` and the constant methods such as `get_max_seq_len`), mapped, and its
///   `forward` loaded.
/// - `tokenizer_path`: a Hugging Face `tokenizer.json` or a SentencePiece
///   `tokenizer.model`, or NULL (then only `etch_generator_generate_tokens` works).
/// - `out`: receives the generator (NULL on failure); free it with `etch_generator_free`.
///
/// Failures: `ETCH_ACCESS_FAILED` or `ETCH_INVALID_PROGRAM` for the program,
/// `ETCH_NOT_AN_LLM` for a program without the LLM methods, `ETCH_IO` for an unreadable
/// tokenizer, `ETCH_TOKENIZER` for a malformed one or one whose vocabulary is larger than
/// the program's. Sampling keeps the most likely tokens up to probability 0.9 (top-p, as
/// `etch generate`'s default; see `etch_generator_set_top_p`). Thread-safe.
///
/// # Safety
/// `pte_path` is NULL or NUL-terminated; `tokenizer_path` likewise; `out` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_new(
    pte_path: *const c_char,
    tokenizer_path: *const c_char,
    out: *mut *mut etch_generator,
) -> etch_status {
    // SAFETY: the caller's promises, passed on; no data paths.
    unsafe { etch_generator_new_with_data(pte_path, std::ptr::null(), 0, tokenizer_path, out) }
}

/// `etch_generator_new` for a program whose weights are in `.ptd` data files:
/// `num_data_paths` file names at `data_paths` (as `etch_module_load` takes them).
///
/// # Safety
/// As `etch_generator_new`; `data_paths` points to `num_data_paths` NUL-terminated
/// strings (or `num_data_paths` is 0).
#[no_mangle]
pub unsafe extern "C" fn etch_generator_new_with_data(
    pte_path: *const c_char,
    data_paths: *const *const c_char,
    num_data_paths: usize,
    tokenizer_path: *const c_char,
    out: *mut *mut etch_generator,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: `out` NULL or writable, `pte_path` a C string,
        // `num_data_paths` C strings at `data_paths`.
        let (out, pte, data) = unsafe {
            (
                crate::out_ptr(out, "out")?,
                path_arg(pte_path, "pte_path")?,
                paths_arg(data_paths, num_data_paths, "data_paths")?,
            )
        };
        let tokenizer = if tokenizer_path.is_null() {
            None
        } else {
            // SAFETY: the caller's promise: a C string.
            let path = unsafe { path_arg(tokenizer_path, "tokenizer_path") }?;
            // Read here rather than by `Tokenizer::open` so that an unreadable file and a
            // malformed one get different statuses; the messages are `open`'s.
            let bytes = std::fs::read(&path).map_err(|e| {
                Failure::new(
                    etch_status::ETCH_IO,
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            let tokenizer = Tokenizer::from_bytes(&bytes).map_err(|e| {
                Failure::new(
                    etch_status::ETCH_TOKENIZER,
                    format!("{}: {e}", path.display()),
                )
            })?;
            Some(tokenizer)
        };
        let model = pte.display().to_string();
        let llm = TextGenerator::from_file(&pte, &data).map_err(|e| {
            let f = generate_failure(e);
            Failure::new(f.status, format!("{model}: {}", f.message))
        })?;
        if let Some(tokenizer) = &tokenizer {
            let (ours, theirs) = (tokenizer.vocab_size(), llm.config().vocab_size);
            if ours > theirs {
                return Err(Failure::new(
                    etch_status::ETCH_TOKENIZER,
                    format!(
                        "the tokenizer has {ours} tokens but {model} has a vocabulary of \
                         {theirs}: they do not belong together"
                    ),
                ));
            }
        }
        *out = Box::into_raw(Box::new(etch_generator {
            llm,
            tokenizer,
            top_p: 0.9,
        }));
        Ok(())
    })
}

/// Frees a generator. NULL is a no-op.
///
/// # Safety
/// `generator` is NULL or a live generator, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_free(generator: *mut etch_generator) {
    guard_value((), || {
        if !generator.is_null() {
            // SAFETY: generators are made as `Box`es by `etch_generator_new`; the caller
            // frees each once.
            drop(unsafe { Box::from_raw(generator) });
        }
    })
}

/// Starts a new sequence: the next generation does not see the previous one (each
/// generate call starts a new sequence anyway; this releases nothing).
///
/// # Safety
/// `generator` is NULL or a live generator.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_reset(generator: *mut etch_generator) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live generator.
        unsafe { generator_mut(generator) }?.llm.reset();
        Ok(())
    })
}

/// Runs the program's kernels on `threads` threads (see `etch_module_set_threads`).
///
/// # Safety
/// `generator` is NULL or a live generator.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_set_threads(
    generator: *mut etch_generator,
    threads: usize,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live generator.
        let g = unsafe { generator_mut(generator) }?;
        Ok(g.llm.module_mut().set_threads(threads)?)
    })
}

/// Samples only among the most likely tokens whose probabilities sum to `top_p` (0 to
/// 1; 1 samples among all). Used when the temperature is above 0.
///
/// # Safety
/// `generator` is NULL or a live generator.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_set_top_p(
    generator: *mut etch_generator,
    top_p: f32,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live generator.
        let g = unsafe { generator_mut(generator) }?;
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(Failure::invalid(format!("top_p {top_p} is not in (0, 1]")));
        }
        g.top_p = top_p;
        Ok(())
    })
}

fn sampling(g: &etch_generator, temperature: f32, seed: u64) -> Result<Sampling> {
    if !(temperature >= 0.0 && temperature.is_finite()) {
        return Err(Failure::invalid(format!(
            "temperature {temperature} is not a finite number >= 0"
        )));
    }
    Ok(Sampling {
        temperature,
        top_p: g.top_p,
        seed,
    })
}

/// # Safety
/// `stats` is NULL or writable.
unsafe fn write_stats(stats: *mut etch_generation_stats, g: &Generation) {
    let s = &g.stats;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let out = etch_generation_stats {
        prompt_tokens: s.prompt_tokens,
        generated_tokens: s.generated_tokens,
        stop: match g.stop {
            StopReason::EndOfSequence => etch_stop_reason::ETCH_STOP_END_OF_SEQUENCE,
            StopReason::MaxNewTokens => etch_stop_reason::ETCH_STOP_MAX_NEW_TOKENS,
            StopReason::ContextFull => etch_stop_reason::ETCH_STOP_CONTEXT_FULL,
            _ => etch_stop_reason::ETCH_STOP_CALLBACK,
        },
        prefill_ms: ms(s.prefill),
        time_to_first_token_ms: ms(s.time_to_first_token),
        decode_ms: ms(s.decode),
        prefill_tokens_per_s: s.prefill_tokens_per_s(),
        decode_tokens_per_s: s.decode_tokens_per_s(),
    };
    // SAFETY: the caller's promise: NULL or writable.
    if let Some(slot) = unsafe { stats.as_mut() } {
        *slot = out;
    }
}

/// Generates text after `prompt`, as `etch generate --prompt` does: the prompt is
/// encoded with the tokenizer after the program's beginning-of-sequence token, then
/// tokens are chosen one at a time until an end-of-sequence token, `max_new_tokens`, the
/// end of the context, or the callback asking to stop. Each generation starts a new
/// sequence.
///
/// - `temperature`: 0 always takes the most likely token (the result is then
///   deterministic); higher values sample more freely, from a generator seeded with
///   `seed` (the same seed, prompt and settings give the same text).
/// - `callback`: receives the text as it is generated; may be NULL.
/// - `stats`: receives the figures and the stop reason; may be NULL.
///
/// Needs a tokenizer (`ETCH_INVALID_STATE` without). A prompt longer than the context is
/// `ETCH_INVALID_ARGUMENT`. Not thread-safe for one generator.
///
/// # Safety
/// `generator` is NULL or a live generator; `prompt` is NULL or NUL-terminated;
/// `callback` is NULL or a function obeying `etch_text_callback`'s rules; `stats` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_generate(
    generator: *mut etch_generator,
    prompt: *const c_char,
    max_new_tokens: usize,
    temperature: f32,
    seed: u64,
    callback: etch_text_callback,
    user: *mut c_void,
    stats: *mut etch_generation_stats,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: NULL or a live generator, NULL or a C string.
        let (g, prompt) = unsafe { (generator_mut(generator)?, str_arg(prompt, "prompt")?) };
        let sampling = sampling(g, temperature, seed)?;
        let Some(tokenizer) = &g.tokenizer else {
            return Err(Failure::new(
                etch_status::ETCH_INVALID_STATE,
                "the generator has no tokenizer: give one to etch_generator_new, or \
                 prompt with token ids (etch_generator_generate_tokens)",
            ));
        };
        let tokenizer_failure = |e: et_llm::tokenizer::TokenizerError| {
            Failure::new(etch_status::ETCH_TOKENIZER, e.to_string())
        };
        let mut tokens: Vec<u32> = Vec::new();
        if let Some(bos) = g.llm.config().bos_id {
            tokens.push(u32::try_from(bos).map_err(|_| {
                Failure::new(
                    etch_status::ETCH_NOT_AN_LLM,
                    format!("get_bos_id returns {bos}, not a token id"),
                )
            })?);
        }
        tokens.extend(tokenizer.encode(prompt).map_err(tokenizer_failure)?);

        let mut stream = TextStream::new(tokenizer);
        let mut failure = None;
        let send = |piece: &str| -> bool {
            let Some(callback) = callback else {
                return true;
            };
            let mut bytes = Vec::with_capacity(piece.len() + 1);
            bytes.extend_from_slice(piece.as_bytes());
            bytes.push(0);
            // SAFETY: the caller's promise: `callback` obeys `etch_text_callback`'s rules;
            // `bytes` is the piece and a NUL, live for the call.
            unsafe { callback(bytes.as_ptr().cast(), piece.len(), user) == 0 }
        };
        let generation = g
            .llm
            .generate(&tokens, max_new_tokens, sampling, |token| {
                match stream.push(token) {
                    Ok(piece) if piece.is_empty() => true,
                    Ok(piece) => send(&piece),
                    Err(e) => {
                        failure = Some(tokenizer_failure(e));
                        false
                    }
                }
            })
            .map_err(generate_failure)?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        let rest = stream.finish().map_err(tokenizer_failure)?;
        if !rest.is_empty() {
            send(&rest);
        }
        // SAFETY: the caller's promise: NULL or writable.
        unsafe { write_stats(stats, &generation) };
        Ok(())
    })
}

/// Generates tokens after `prompt_tokens` (`num_prompt_tokens` ids, used as given: put
/// the beginning-of-sequence token first if the model wants one), as `etch generate
/// --prompt-tokens` does; no tokenizer is needed. `callback` (may be NULL) receives each
/// token id. Otherwise as `etch_generator_generate`. A token outside the vocabulary is
/// `ETCH_INVALID_ARGUMENT`.
///
/// # Safety
/// `generator` is NULL or a live generator; `prompt_tokens` points to
/// `num_prompt_tokens` readable ids; `callback` is NULL or a function obeying
/// `etch_token_callback`'s rules; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_generator_generate_tokens(
    generator: *mut etch_generator,
    prompt_tokens: *const u32,
    num_prompt_tokens: usize,
    max_new_tokens: usize,
    temperature: f32,
    seed: u64,
    callback: etch_token_callback,
    user: *mut c_void,
    stats: *mut etch_generation_stats,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live generator.
        let g = unsafe { generator_mut(generator) }?;
        let prompt: &[u32] = match (num_prompt_tokens, prompt_tokens.is_null()) {
            (0, _) => &[],
            (_, true) => return Err(Failure::null("prompt_tokens")),
            // SAFETY: the caller's promise: `num_prompt_tokens` ids at `prompt_tokens`.
            (n, false) => unsafe { std::slice::from_raw_parts(prompt_tokens, n) },
        };
        let sampling = sampling(g, temperature, seed)?;
        let generation = g
            .llm
            .generate(prompt, max_new_tokens, sampling, |token| match callback {
                // SAFETY: the caller's promise: a function obeying `etch_token_callback`.
                Some(callback) => unsafe { callback(token, user) == 0 },
                None => true,
            })
            .map_err(generate_failure)?;
        // SAFETY: the caller's promise: NULL or writable.
        unsafe { write_stats(stats, &generation) };
        Ok(())
    })
}
