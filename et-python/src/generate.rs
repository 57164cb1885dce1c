//! `_Generator`: text generation over [`et_llm::runner::TextGenerator`], a token at a
//! time, for `etch.generate` and its streaming form.
//!
//! `TextGenerator::generate` drives the loop with a callback; a Python iterator must
//! return between tokens instead, so this type keeps the loop's state (the sampler, the
//! tokens so far, the last logits) and takes one step per `next_piece` call. The steps
//! and stopping rules are those of `TextGenerator::generate` (and so of `etch generate`).

use std::path::PathBuf;
use std::sync::Mutex;

use et_llm::runner::{Sampler, Sampling, TextGenerator};
use et_llm::tokenizer::Tokenizer;
use et_runtime::Error;
use pyo3::prelude::*;

use crate::errors::{catch, generate_error, panicked, raise, tokenizer_error, Kind};
use crate::lock::lock;

/// An LLM program with its tokenizer, generating one sequence at a time.
#[derive(Debug)]
#[pyclass(name = "_Generator", module = "etch._etch", frozen)]
pub struct Generator {
    /// The program's path, as messages name it.
    program: String,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    llm: TextGenerator,
    tokenizer: Option<Tokenizer>,
    run: Option<Run>,
    /// Numbers runs, so an iterator of an earlier run stops rather than read a later one.
    runs: u64,
}

/// One generation in progress.
#[derive(Debug)]
struct Run {
    id: u64,
    sampler: Sampler,
    max_new_tokens: usize,
    tokens: Vec<u32>,
    /// The logits the next token is chosen from.
    logits: Vec<f32>,
    /// The text released so far (the decoded tokens, less a held-back partial character).
    released: String,
    finished: bool,
}

/// What a prompt is: text (the tokenizer encodes it after the beginning-of-sequence
/// token) or token ids used as given.
#[derive(FromPyObject)]
enum Prompt {
    Text(String),
    Tokens(Vec<u32>),
}

impl Generator {
    fn state(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, State> {
        lock(py, &self.state)
    }
}

#[pymethods]
impl Generator {
    /// Opens an LLM program, its `.ptd` data files and (optional) tokenizer.
    #[new]
    #[pyo3(signature = (program, tokenizer, data_files, threads))]
    fn new(
        py: Python<'_>,
        program: PathBuf,
        tokenizer: Option<PathBuf>,
        data_files: Vec<PathBuf>,
        threads: usize,
    ) -> PyResult<Generator> {
        let shown = program.display().to_string();
        let tokenizer = match tokenizer {
            Some(path) => Some(
                py.detach(|| catch(|| Tokenizer::open(&path)))
                    .map_err(|m| panicked(py, "reading the tokenizer", &m))?
                    .map_err(|e| tokenizer_error(py, &e))?,
            ),
            None => None,
        };
        let mut llm = py
            .detach(|| catch(|| TextGenerator::from_file(&program, &data_files)))
            .map_err(|m| panicked(py, "loading the program", &m))?
            .map_err(|e| generate_error(py, &shown, &e))?;
        if let Some(tokenizer) = &tokenizer {
            let (ours, theirs) = (tokenizer.vocab_size(), llm.config().vocab_size);
            if ours > theirs {
                return Err(raise(
                    py,
                    Kind::Code(Error::InvalidArgument),
                    format!(
                        "the tokenizer has {ours} tokens but {shown} has a vocabulary of \
                         {theirs}: they do not belong together"
                    ),
                ));
            }
        }
        if threads > 1 {
            llm.module_mut()
                .set_threads(threads)
                .map_err(|e| raise(py, Kind::Code(e.code()), e.message()))?;
        }
        Ok(Generator {
            program: shown,
            state: Mutex::new(State {
                llm,
                tokenizer,
                run: None,
                runs: 0,
            }),
        })
    }

    /// Starts a sequence: encodes `prompt` and prefills it. Returns the run's id.
    fn start(
        &self,
        py: Python<'_>,
        prompt: Prompt,
        max_new_tokens: usize,
        temperature: f32,
        top_p: f32,
        seed: u64,
    ) -> PyResult<u64> {
        let mut state = self.state(py);
        let state = &mut *state;
        state.run = None;
        let tokens = match prompt {
            Prompt::Tokens(tokens) => tokens,
            Prompt::Text(text) => {
                let Some(tokenizer) = &state.tokenizer else {
                    return Err(raise(
                        py,
                        Kind::Code(Error::InvalidArgument),
                        "a text prompt needs a tokenizer (or give the prompt as token ids)",
                    ));
                };
                let mut tokens = Vec::new();
                if let Some(bos) = state.llm.config().bos_id {
                    tokens.push(u32::try_from(bos).map_err(|_| {
                        raise(
                            py,
                            Kind::Code(Error::InvalidProgram),
                            format!("{}: get_bos_id returns {bos}, not a token id", self.program),
                        )
                    })?);
                }
                tokens.extend(
                    tokenizer
                        .encode(&text)
                        .map_err(|e| tokenizer_error(py, &e))?,
                );
                tokens
            }
        };
        let sampling = Sampling {
            temperature,
            top_p,
            seed,
        };
        let llm = &mut state.llm;
        let prefilled = py.detach(|| {
            catch(|| {
                llm.reset();
                llm.prefill(&tokens).map(<[f32]>::to_vec)
            })
        });
        let logits = prefilled
            .map_err(|m| panicked(py, "the prefill", &m))?
            .map_err(|e| generate_error(py, &self.program, &e))?;
        state.runs += 1;
        state.run = Some(Run {
            id: state.runs,
            sampler: Sampler::new(sampling),
            max_new_tokens,
            tokens: Vec::new(),
            logits,
            released: String::new(),
            finished: max_new_tokens == 0,
        });
        Ok(state.runs)
    }

    /// The next piece of text of run `id` (a token's, or several when a character spans
    /// tokens), or `None` when the run is over.
    fn next_piece(&self, py: Python<'_>, id: u64) -> PyResult<Option<String>> {
        let mut state = self.state(py);
        let State {
            llm,
            tokenizer,
            run,
            ..
        } = &mut *state;
        let Some(run) = run.as_mut().filter(|r| r.id == id) else {
            return Ok(None);
        };
        loop {
            if run.finished {
                // What a partial character held back, as U+FFFD.
                return Ok(match tokenizer {
                    Some(t) => {
                        let text = t.decode(&run.tokens).map_err(|e| tokenizer_error(py, &e))?;
                        let rest = new_text(&run.released, &text);
                        run.released = text;
                        Some(rest).filter(|r| !r.is_empty())
                    }
                    None => None,
                });
            }
            let token = run.sampler.sample(&run.logits);
            run.tokens.push(token);
            let piece = match tokenizer {
                Some(t) => {
                    let text = t.decode(&run.tokens).map_err(|e| tokenizer_error(py, &e))?;
                    if text.ends_with(char::REPLACEMENT_CHARACTER) {
                        String::new()
                    } else {
                        let piece = new_text(&run.released, &text);
                        run.released = text;
                        piece
                    }
                }
                None => format!("{token} "),
            };
            let config = llm.config();
            run.finished = config.eos_ids.contains(&i64::from(token))
                || run.tokens.len() >= run.max_new_tokens
                || llm.position() >= config.max_context_len;
            if !run.finished {
                let stepped = py.detach(|| catch(|| llm.step(token).map(<[f32]>::to_vec)));
                match stepped {
                    Ok(Ok(logits)) => run.logits = logits,
                    Ok(Err(e)) => {
                        run.finished = true;
                        return Err(generate_error(py, &self.program, &e));
                    }
                    Err(m) => {
                        run.finished = true;
                        return Err(panicked(py, "a decode step", &m));
                    }
                }
            }
            if !piece.is_empty() {
                return Ok(Some(piece));
            }
        }
    }

    /// The tokens run `id` has generated so far.
    fn tokens(&self, py: Python<'_>, id: u64) -> Vec<u32> {
        let state = self.state(py);
        match &state.run {
            Some(run) if run.id == id => run.tokens.clone(),
            _ => Vec::new(),
        }
    }

    /// The program's vocabulary size.
    #[getter]
    fn vocab_size(&self, py: Python<'_>) -> usize {
        self.state(py).llm.config().vocab_size
    }

    /// The program's context length (prompt and generated tokens together).
    #[getter]
    fn max_context_len(&self, py: Python<'_>) -> usize {
        self.state(py).llm.config().max_context_len
    }
}

/// The text `now` adds to `before`. Decoders may change earlier text as tokens follow
/// (a SentencePiece word's leading space), so when `now` does not extend `before`, what
/// follows its first `before.chars().count()` characters is new.
fn new_text(before: &str, now: &str) -> String {
    match now.strip_prefix(before) {
        Some(new) => String::from(new),
        None => now.chars().skip(before.chars().count()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::new_text;

    #[test]
    fn new_text_is_the_difference() {
        assert_eq!(new_text("Once", "Once upon"), " upon");
        assert_eq!(new_text("", "a"), "a");
        assert_eq!(new_text("ab", "xbc"), "c");
        assert_eq!(new_text("abc", "ab"), "");
    }
}
