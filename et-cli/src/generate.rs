//! `etch generate`: text generation with a program ExecuTorch's LLM exporter wrote.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use et_llm::runner::{GenerateError, Generation, Sampling, StopReason, TextGenerator};
use et_llm::tokenizer::{TextStream, Tokenizer};

use crate::format::json_str;
use crate::Failure;

/// `etch generate`'s arguments.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    etch generate llama.pte --tokenizer tokenizer.json --prompt \"Once upon a time\"\n  \
    etch generate llama.pte --prompt-tokens 1,45,99 --temperature 0 --max-new-tokens 16 --json")]
pub struct GenerateArgs {
    /// The .pte program (written by ExecuTorch's export_llm).
    model: PathBuf,
    /// A `.ptd` data file with the program's weights (repeatable).
    #[arg(long = "data", short = 'd')]
    data: Vec<PathBuf>,
    /// A Hugging Face `tokenizer.json` or a SentencePiece `tokenizer.model`: needed for
    /// `--prompt` and to print text (without one, token ids are printed).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// The prompt as text (the program's beginning-of-sequence token is put first).
    #[arg(
        long,
        conflicts_with = "prompt_tokens",
        required_unless_present = "prompt_tokens"
    )]
    prompt: Option<String>,
    /// The prompt as token ids, comma-separated, used as given.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    prompt_tokens: Option<Vec<u32>>,
    /// Stop after this many generated tokens (also stops at an end-of-sequence token and
    /// at the end of the program's context).
    #[arg(long, default_value_t = 64)]
    max_new_tokens: usize,
    /// 0 always takes the most likely token; higher values sample more freely.
    #[arg(long, default_value_t = 0.8)]
    temperature: f32,
    /// Sample only among the most likely tokens whose probabilities sum to P.
    #[arg(long, value_name = "P", default_value_t = 0.9)]
    top_p: f32,
    /// The sampler's seed (the same seed, prompt and settings give the same tokens).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Threads for the kernels and the XNNPACK backend.
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,
    /// Print one JSON object at the end instead of streaming text.
    #[arg(long)]
    json: bool,
    /// Generate once, silently, before the reported generation (as ExecuTorch's runner
    /// `warmup` does): the figures are then those of a warm process, caches and planned
    /// memory already touched.
    #[arg(long)]
    warmup: bool,
}

pub fn generate(args: &GenerateArgs) -> Result<(), Failure> {
    let model = args.model.display();
    let tokenizer = args.tokenizer.as_ref().map(Tokenizer::open).transpose()?;
    let mut llm = TextGenerator::from_file(&args.model, &args.data)
        .map_err(|e| Failure(format!("{model}: {e}")))?;
    if args.threads > 1 {
        set_threads(&mut llm, args.threads)?;
    }
    let prompt = match (&args.prompt, &args.prompt_tokens) {
        (_, Some(tokens)) => tokens.clone(),
        (Some(text), None) => {
            let Some(tokenizer) = &tokenizer else {
                return Err(Failure(String::from(
                    "--prompt needs --tokenizer (or give --prompt-tokens)",
                )));
            };
            let mut tokens: Vec<u32> = Vec::new();
            if let Some(bos) = llm.config().bos_id {
                tokens.push(u32::try_from(bos).map_err(|_| {
                    Failure(format!("{model}: get_bos_id returns {bos}, not a token id"))
                })?);
            }
            tokens.extend(tokenizer.encode(text)?);
            tokens
        }
        (None, None) => return Err(Failure(String::from("give --prompt or --prompt-tokens"))),
    };
    if let Some(tokenizer) = &tokenizer {
        let (ours, theirs) = (tokenizer.vocab_size(), llm.config().vocab_size);
        if ours > theirs {
            return Err(Failure(format!(
                "the tokenizer has {ours} tokens but {model} has a vocabulary of {theirs}: \
                 they do not belong together"
            )));
        }
    }

    let sampling = Sampling {
        temperature: args.temperature,
        top_p: args.top_p,
        seed: args.seed,
    };
    if args.warmup {
        llm.generate(&prompt, args.max_new_tokens, sampling, |_| true)
            .map_err(|e| generate_failure(&model.to_string(), e))?;
    }
    let mut stream = tokenizer.as_ref().map(TextStream::new);
    let mut stdout = std::io::stdout().lock();
    let mut write_error = None;
    let generation = llm
        .generate(&prompt, args.max_new_tokens, sampling, |token| {
            if args.json {
                return true;
            }
            let piece = match &mut stream {
                Some(stream) => stream.push(token).unwrap_or_default(),
                None => format!("{token} "),
            };
            match stdout
                .write_all(piece.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => true,
                Err(e) => {
                    write_error = Some(e);
                    false
                }
            }
        })
        .map_err(|e| generate_failure(&model.to_string(), e))?;
    if let Some(e) = write_error {
        return Err(Failure(format!("cannot write the text: {e}")));
    }
    let text = match &tokenizer {
        Some(tokenizer) => Some(tokenizer.decode(&generation.tokens)?),
        None => None,
    };
    if args.json {
        println!("{}", json(&prompt, &generation, text.as_deref()));
        return Ok(());
    }
    if let Some(stream) = &mut stream {
        write!(stdout, "{}", stream.finish()?)?;
    }
    writeln!(stdout)?;
    stdout.flush()?;
    eprintln!("{}", summary(&generation));
    Ok(())
}

#[cfg(feature = "threads")]
fn set_threads(llm: &mut TextGenerator, threads: usize) -> Result<(), Failure> {
    Ok(llm.module_mut().set_threads(threads)?)
}

#[cfg(not(feature = "threads"))]
fn set_threads(_: &mut TextGenerator, threads: usize) -> Result<(), Failure> {
    eprintln!("etch generate: --threads {threads} needs an etch built with the `threads` feature");
    std::process::exit(2);
}

fn generate_failure(model: &str, e: GenerateError) -> Failure {
    Failure(format!("{model}: {e}"))
}

fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndOfSequence => "end_of_sequence",
        StopReason::MaxNewTokens => "max_new_tokens",
        StopReason::ContextFull => "context_full",
        _ => "stopped",
    }
}

fn summary(g: &Generation) -> String {
    let s = &g.stats;
    let mut out = format!(
        "prompt {} tokens, prefill {:.2} ms ({:.1} tokens/s); time to first token {:.2} ms; \
         generated {} tokens, decode {:.1} tokens/s; stopped: {}",
        s.prompt_tokens,
        ms(s.prefill),
        s.prefill_tokens_per_s(),
        ms(s.time_to_first_token),
        s.generated_tokens,
        s.decode_tokens_per_s(),
        stop_name(g.stop).replace('_', " "),
    );
    if let Some(peak) = peak_memory_bytes() {
        out.push_str(&format!(
            "; peak memory {:.1} MiB",
            peak as f64 / (1 << 20) as f64
        ));
    }
    out
}

fn json(prompt: &[u32], g: &Generation, text: Option<&str>) -> String {
    let s = &g.stats;
    let list = |t: &[u32]| t.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    format!(
        "{{\"prompt_tokens\":[{}],\"generated_tokens\":[{}],\"text\":{},\"stop\":\"{}\",\
         \"prefill_ms\":{:.3},\"time_to_first_token_ms\":{:.3},\"prefill_tokens_per_s\":{:.2},\
         \"decode_tokens_per_s\":{:.2},\"peak_memory_bytes\":{}}}",
        list(prompt),
        list(&g.tokens),
        text.map_or_else(|| String::from("null"), json_str),
        stop_name(g.stop),
        ms(s.prefill),
        ms(s.time_to_first_token),
        s.prefill_tokens_per_s(),
        s.decode_tokens_per_s(),
        peak_memory_bytes().map_or_else(|| String::from("null"), |b| b.to_string()),
    )
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The process's peak resident memory (Linux's `VmHWM`), mapped weights included.
fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
