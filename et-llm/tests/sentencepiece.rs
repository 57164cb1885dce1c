//! The SentencePiece tokenizer against the sentencepiece library: the models and the
//! cases in tests/fixtures/llm/spm/ come from scripts/make-spm-fixtures.py, which asks
//! the library for every encoding and decoding checked here.

use std::path::PathBuf;

use et_llm::tokenizer::sentencepiece::SentencePiece;
use serde::Deserialize;

#[derive(Deserialize)]
struct Cases {
    models: Vec<ModelCases>,
}

#[derive(Deserialize)]
struct ModelCases {
    file: String,
    vocab_size: usize,
    bos: i64,
    eos: i64,
    encode: Vec<EncodeCase>,
    decode: Vec<DecodeCase>,
}

#[derive(Deserialize)]
struct EncodeCase {
    text: String,
    ids: Vec<u32>,
    decoded: String,
}

#[derive(Deserialize)]
struct DecodeCase {
    ids: Vec<u32>,
    decoded: String,
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llm/spm")
}

fn cases() -> Cases {
    let text = std::fs::read_to_string(fixtures().join("cases.yaml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

fn model_bytes(file: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(file)).unwrap()
}

fn load(file: &str) -> SentencePiece {
    SentencePiece::from_bytes(&model_bytes(file)).unwrap()
}

fn id(value: i64) -> Option<u32> {
    u32::try_from(value).ok()
}

/// The library's `decode` returns a string, with invalid UTF-8 replaced.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn encode_matches_the_library() {
    for model in cases().models {
        let sp = load(&model.file);
        assert_eq!(sp.vocab_size(), model.vocab_size, "{}", model.file);
        assert_eq!(sp.bos_id(), id(model.bos), "{}", model.file);
        assert_eq!(sp.eos_id(), id(model.eos), "{}", model.file);
        let mut failures = Vec::new();
        for case in &model.encode {
            let ids = sp.encode(&case.text);
            if ids != case.ids {
                let pieces = |ids: &[u32]| {
                    ids.iter()
                        .map(|&i| sp.piece(i).unwrap_or("?").to_owned())
                        .collect::<Vec<_>>()
                };
                failures.push(format!(
                    "{}: {:?}\n  ours:    {:?}\n  library: {:?}",
                    model.file,
                    case.text,
                    pieces(&ids),
                    pieces(&case.ids)
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

#[test]
fn decode_matches_the_library() {
    for model in cases().models {
        let sp = load(&model.file);
        for case in &model.encode {
            assert_eq!(
                text(&sp.decode(&case.ids)),
                case.decoded,
                "{}: {:?}",
                model.file,
                case.ids
            );
        }
        for case in &model.decode {
            assert_eq!(
                text(&sp.decode(&case.ids)),
                case.decoded,
                "{}: {:?}",
                model.file,
                case.ids
            );
        }
    }
}

#[test]
fn bpe_round_trips_any_text() {
    // With byte fallback and the identity normalizer, decode(encode(t)) is t itself,
    // but for a "▁" in the text, which comes back as a space (as from the library).
    let sp = load("bpe.model");
    for case in cases().models[0].encode.iter() {
        let expected = case.text.replace('\u{2581}', " ");
        assert_eq!(text(&sp.decode(&sp.encode(&case.text))), expected);
        assert_eq!(case.decoded, expected);
    }
}

#[test]
fn pieces_and_ids() {
    let sp = load("bpe.model");
    assert_eq!(sp.piece(0), Some("<unk>"));
    assert_eq!(sp.piece(sp.bos_id().unwrap()), Some("<s>"));
    assert_eq!(sp.piece(sp.eos_id().unwrap()), Some("</s>"));
    let a = (0..sp.vocab_size() as u32)
        .find(|&i| sp.piece(i) == Some("<0x41>"))
        .unwrap();
    assert_eq!(sp.piece(sp.vocab_size() as u32), None);
    // Ids past the vocabulary are skipped, not a panic.
    assert_eq!(sp.decode(&[u32::MAX, a]), b"A");
}

/// A deterministic xorshift generator, so the corruption tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn every_truncation_of_a_model_is_an_error() {
    for file in ["bpe.model", "unigram.model", "gemma.model"] {
        let bytes = model_bytes(file);
        // The unigram model is larger (its character map): every 61st prefix of it.
        let step = if file == "unigram.model" { 61 } else { 1 };
        for len in (0..bytes.len()).step_by(step) {
            // Even a prefix that ends between two pieces is an error: it has no
            // trainer_spec or normalizer_spec, which follow the pieces.
            let err = SentencePiece::from_bytes(&bytes[..len])
                .unwrap_err()
                .to_string();
            assert!(!err.is_empty());
        }
    }
    // A cut inside the field that holds the pieces names where.
    let bytes = model_bytes("bpe.model");
    let err = SentencePiece::from_bytes(&bytes[..bytes.len() / 2]).unwrap_err();
    assert!(err.to_string().contains("byte offset"), "{err}");
}

#[test]
fn random_corruption_never_panics() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for file in ["bpe.model", "unigram.model", "gemma.model"] {
        let original = model_bytes(file);
        let rounds = if file == "unigram.model" { 300 } else { 3000 };
        for _ in 0..rounds {
            let mut bytes = original.clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() % bytes.len() as u64) as usize;
                bytes[at] ^= 1 << (rng.next() % 8);
            }
            if let Ok(sp) = SentencePiece::from_bytes(&bytes) {
                let ids = sp.encode("Hello  wörld, ＡＢＣ 日本 🦀\n");
                sp.decode(&ids);
            }
        }
    }
}

#[test]
fn malformed_files_say_what_is_wrong() {
    let err = |bytes: &[u8]| SentencePiece::from_bytes(bytes).unwrap_err().to_string();
    assert!(err(&[]).contains("no pieces"));
    // Field 1, length 5, but one byte follows.
    assert!(err(&[0x0a, 5, 0]).contains("5 bytes needed but only 1 remain"));
    // A varint of 11 bytes.
    assert!(err(&[0x08; 1]
        .iter()
        .chain(&[0xff; 11])
        .copied()
        .collect::<Vec<_>>())
    .contains("varint"));
    // A piece that is not UTF-8: pieces[0].piece.
    assert!(err(&[0x0a, 3, 0x0a, 1, 0xff]).contains("pieces[0].piece"));
    // A piece of unknown type 9.
    assert!(err(&[0x0a, 5, 0x0a, 1, b'a', 0x18, 9]).contains("unknown type 9"));
    // One NORMAL piece but no specs: cut short.
    assert!(err(&[0x0a, 3, 0x0a, 1, b'a']).contains("incomplete"));
    // One NORMAL piece and empty specs: no UNKNOWN piece.
    assert!(err(&[0x0a, 3, 0x0a, 1, b'a', 0x12, 0, 0x1a, 0]).contains("UNKNOWN"));
    // A BYTE piece (type 6) but byte_fallback not set.
    let byte = [
        0x0a, 5, 0x0a, 1, b'u', 0x18, 2, 0x0a, 10, 0x0a, 6, b'<', b'0', b'x', b'4', b'1', b'>',
        0x18, 6, 0x12, 0, 0x1a, 0,
    ];
    assert!(
        err(&byte).contains("pieces[1] is a BYTE piece but byte_fallback"),
        "{}",
        err(&byte)
    );
    // byte_fallback (TrainerSpec field 35) set but 255 byte pieces missing.
    let mut fallback = byte;
    fallback[20] = 3;
    let fallback = [&fallback[..21], &[0x98, 0x02, 1], &fallback[21..]].concat();
    assert!(
        err(&fallback).contains("<0x00> is missing"),
        "{}",
        err(&fallback)
    );
    // WORD models: TrainerSpec { model_type: 3 }.
    let word = [0x0a, 5, 0x0a, 1, b'a', 0x18, 2, 0x12, 2, 0x18, 3, 0x1a, 0];
    assert!(err(&word).contains("model_type 3"));
    // The smallest valid model: one UNKNOWN piece; every text is unknown.
    // TrainerSpec bos_id and eos_id -1 (ten-byte varints, fields the reader skips).
    let minus_one = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    let mut trainer = vec![0xc8, 0x02];
    trainer.extend_from_slice(&minus_one);
    trainer.extend_from_slice(&[0xd0, 0x02]);
    trainer.extend_from_slice(&minus_one);
    let mut file = vec![0x0a, 5, 0x0a, 1, b'u', 0x18, 2, 0x12, trainer.len() as u8];
    file.extend_from_slice(&trainer);
    file.extend_from_slice(&[0x1a, 0]);
    assert!(err(&file[..file.len() - 2]).contains("incomplete"));
    let sp = SentencePiece::from_bytes(&file).unwrap();
    assert_eq!((sp.vocab_size(), sp.bos_id(), sp.eos_id()), (1, None, None));
    assert_eq!(sp.encode("ab c"), [0]);
    assert_eq!(sp.decode(&[0]), " \u{2047} ".as_bytes());
}
