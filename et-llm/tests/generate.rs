//! The text generator and tokenizers on the LLM programs ExecuTorch's `export_llm`
//! wrote (tests/fixtures/llm): greedy generation chooses ExecuTorch's tokens, the
//! program's constants are read, and bad prompts, programs and tokenizer files are clear
//! errors.

use std::path::PathBuf;

use et_llm::runner::{GenerateError, LlmConfig, Sampling, StopReason, TextGenerator};
#[cfg(feature = "tokenizers")]
use et_llm::tokenizer::TextStream;
use et_llm::tokenizer::Tokenizer;
use et_runtime::Module;

use et_llm as _;
use et_ops as _;
use et_xnnpack as _;

fn llm_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llm")
}

/// The prompt and ExecuTorch's greedy tokens from `NAME.llm.yaml`.
fn reference(name: &str) -> (Vec<u32>, Vec<u32>) {
    let text = std::fs::read_to_string(llm_dir().join(format!("{name}.llm.yaml"))).unwrap();
    let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let ids = |key: &str| -> Vec<u32> {
        y[key]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap() as u32)
            .collect()
    };
    (ids("prompt"), ids("greedy_tokens"))
}

fn open(name: &str) -> TextGenerator {
    TextGenerator::from_file(llm_dir().join(format!("{name}.pte")), &[] as &[&str]).unwrap()
}

fn greedy_matches_executorch(name: &str) {
    let (prompt, greedy) = reference(name);
    let mut llm = open(name);
    let mut streamed = Vec::new();
    let g = llm
        .generate(&prompt, greedy.len(), Sampling::default(), |t| {
            streamed.push(t);
            true
        })
        .unwrap();
    assert_eq!(g.tokens, greedy, "{name}: greedy tokens");
    assert_eq!(streamed, greedy);
    assert_eq!(g.stop, StopReason::MaxNewTokens);
    assert_eq!(g.stats.prompt_tokens, prompt.len());
    assert_eq!(g.stats.decode_steps, greedy.len() - 1);
    assert_eq!(llm.position(), prompt.len() + greedy.len() - 1);

    // A second generation starts a new sequence over the same cache.
    let again = llm
        .generate(&prompt, greedy.len(), Sampling::default(), |_| true)
        .unwrap();
    assert_eq!(again.tokens, greedy, "{name}: after reset");
}

#[test]
fn fp32_greedy_tokens_are_executorchs() {
    greedy_matches_executorch("llama_tiny_fp32");
}

#[test]
fn q8da4w_greedy_tokens_are_executorchs() {
    greedy_matches_executorch("llama_tiny_8da4w");
}

#[test]
fn constants_come_from_the_constant_methods() {
    let llm = open("llama_tiny_fp32");
    let c: &LlmConfig = llm.config();
    assert_eq!(
        (c.max_seq_len, c.max_context_len, c.vocab_size),
        (128, 128, 512)
    );
    assert_eq!((c.bos_id, c.eos_ids.as_slice()), (Some(1), &[2i64][..]));
    assert!(c.use_kv_cache && c.enable_dynamic_shape);
}

#[test]
fn sampling_is_repeatable_and_stops_where_asked() {
    let (prompt, _) = reference("llama_tiny_fp32");
    let mut llm = open("llama_tiny_fp32");
    let sampling = Sampling {
        temperature: 0.9,
        top_p: 0.95,
        seed: 42,
    };
    let a = llm
        .generate(&prompt, 12, sampling, |_| true)
        .unwrap()
        .tokens;
    let b = llm
        .generate(&prompt, 12, sampling, |_| true)
        .unwrap()
        .tokens;
    assert_eq!(a, b);
    let mut n = 0;
    let g = llm
        .generate(&prompt, 12, sampling, |_| {
            n += 1;
            n < 3
        })
        .unwrap();
    assert_eq!((g.tokens.len(), g.stop), (3, StopReason::Stopped));
}

#[test]
fn bad_prompts_are_errors() {
    let mut llm = open("llama_tiny_fp32");
    let long = vec![5u32; 129];
    let e = llm
        .generate(&long, 4, Sampling::default(), |_| true)
        .unwrap_err();
    assert!(
        matches!(
            e,
            GenerateError::PromptTooLong {
                prompt: 129,
                context: 128
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("129 tokens") && e.to_string().contains("128"),
        "{e}"
    );
    let e = llm
        .generate(&[], 4, Sampling::default(), |_| true)
        .unwrap_err();
    assert!(matches!(e, GenerateError::EmptyPrompt), "{e}");
    let e = llm
        .generate(&[1, 512], 4, Sampling::default(), |_| true)
        .unwrap_err();
    assert!(e.to_string().contains("token 512 is outside"), "{e}");
    // The context fills: a prompt of 126 leaves room for three tokens.
    let g = llm
        .generate(&[5; 126], 10, Sampling::default(), |_| true)
        .unwrap();
    assert_eq!((g.tokens.len(), g.stop), (3, StopReason::ContextFull));
}

#[test]
fn a_program_without_the_constant_methods_is_not_an_llm() {
    let mv2 = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/mlp.pte");
    let e = TextGenerator::new(Module::from_file(mv2).unwrap()).unwrap_err();
    assert!(matches!(e, GenerateError::NotAnLlm(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("get_max_seq_len") && msg.contains("export_llm"),
        "{msg}"
    );
}

#[cfg(feature = "tokenizers")]
#[test]
fn tokenizer_json_encodes_as_hugging_face_does() {
    let tok = Tokenizer::open(llm_dir().join("tokenizer.json")).unwrap();
    assert_eq!(tok.vocab_size(), 512);
    assert_eq!(tok.token_id("</s>"), Some(2));
    // Reference ids from Hugging Face's Python `tokenizers` on the same file.
    let cases: [(&str, &[u32]); 3] = [
        (
            "Once upon a time",
            &[49, 80, 316, 312, 82, 264, 262, 259, 381, 71],
        ),
        (
            "Hello, world!  Two  spaces\nnew line",
            &[
                42, 71, 358, 81, 14, 280, 265, 78, 70, 3, 223, 328, 89, 81, 223, 286, 82, 422, 293,
                201, 80, 71, 89, 315, 266, 71,
            ],
        ),
        (
            "café naïve 日本 🙂",
            &[
                69, 67, 72, 130, 105, 305, 67, 130, 110, 324, 223, 165, 248, 101, 165, 253, 108,
                223, 175, 256, 250, 227,
            ],
        ),
    ];
    for (text, ids) in cases {
        assert_eq!(tok.encode(text).unwrap(), ids, "{text:?}");
        assert_eq!(tok.decode(ids).unwrap(), text);
        // Streamed one token at a time, the pieces join to the same text, and no piece
        // holds half a character.
        let mut stream = TextStream::new(&tok);
        let mut joined = String::new();
        for &id in ids {
            joined.push_str(&stream.push(id).unwrap());
        }
        joined.push_str(&stream.finish().unwrap());
        assert_eq!(joined, text);
    }
}

#[test]
fn malformed_tokenizer_files_are_errors() {
    for (bytes, expect) in [
        (&b""[..], "empty"),
        (&b"{\"model\": 3"[..], "tokenizer.json"),
        (&b"\x0a\x05abc"[..], "SentencePiece"),
    ] {
        let e = Tokenizer::from_bytes(bytes).unwrap_err();
        assert!(e.to_string().contains(expect), "{e}");
    }
    let e = Tokenizer::open(llm_dir().join("no_such_tokenizer.json")).unwrap_err();
    assert!(e.to_string().contains("no_such_tokenizer.json"), "{e}");
}

#[cfg(feature = "tokenizers")]
/// The fixture's tokenizer.json with a stray comma inside its `decoder` object: the
/// `tokenizers` crate unwraps that error inside its decoder deserializer (a panic), which
/// must come out as an error naming the file, with nothing printed.
fn decoder_with_a_stray_comma() -> Vec<u8> {
    let text = std::fs::read_to_string(llm_dir().join("tokenizer.json")).unwrap();
    let decoder = text.find("\"decoder\"").unwrap();
    let at = decoder + text[decoder..].find("\"trim_offsets\": true,").unwrap();
    let at = at + "\"trim_offsets\": true,".len();
    [&text.as_bytes()[..at], b",", &text.as_bytes()[at..]].concat()
}

#[cfg(feature = "tokenizers")]
#[test]
fn a_tokenizer_json_that_panics_the_tokenizers_crate_is_an_error() {
    let e = Tokenizer::from_bytes(&decoder_with_a_stray_comma()).unwrap_err();
    assert!(e.to_string().contains("not a valid tokenizer.json"), "{e}");
    let dir = std::env::temp_dir().join(format!("etch-tokenizer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stray_comma.json");
    std::fs::write(&path, decoder_with_a_stray_comma()).unwrap();
    let e = Tokenizer::open(&path).unwrap_err();
    assert!(e.to_string().contains("stray_comma.json"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Seeded mutations of the fixture's tokenizer.json (bytes replaced by, or inserted as,
/// JSON's structural characters, or deleted): each is a tokenizer or an error, never a
/// panic, and a tokenizer that loads encodes and decodes without one too.
#[cfg(feature = "tokenizers")]
#[test]
fn mutated_tokenizer_json_files_are_tokenizers_or_errors() {
    let base = std::fs::read(llm_dir().join("tokenizer.json")).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let structural = b"{}[]\":,0-9aZ \\";
    let mut errors = 0;
    for _ in 0..1500 {
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 4 {
            let at = next() % bytes.len();
            match next() % 3 {
                0 => bytes[at] = structural[next() % structural.len()],
                1 => drop(bytes.remove(at)),
                _ => bytes.insert(at, structural[next() % structural.len()]),
            }
        }
        match Tokenizer::from_bytes(&bytes) {
            Ok(tokenizer) => {
                if let Ok(ids) = tokenizer.encode("Once upon a time") {
                    let _ = tokenizer.decode(&ids);
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                errors += 1;
            }
        }
    }
    // Most mutations break the JSON: the loop reached the error paths.
    assert!(errors > 500, "{errors} errors");
}
