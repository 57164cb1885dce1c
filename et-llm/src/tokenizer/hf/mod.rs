//! Hugging Face `tokenizer.json`, through the `tokenizers` crate (feature `tokenizers`):
//! the format has many models, normalizers, pre-tokenizers and decoders, and that crate
//! is their reference implementation. Every call into it is [`contained`]: a panic
//! there is an error here.

mod contained;

use std::format;
use std::string::ToString;
use std::vec::Vec;

use self::contained::contained;
use super::{Codec, TokenizerError};

#[derive(Debug)]
pub(super) struct HfTokenizer(tokenizers::Tokenizer);

impl HfTokenizer {
    pub(super) fn from_bytes(bytes: &[u8]) -> Result<HfTokenizer, TokenizerError> {
        contained(|| tokenizers::Tokenizer::from_bytes(bytes))
            .map_err(|panic| format!("the tokenizers crate failed on it: {panic}"))
            .and_then(|parsed| parsed.map_err(|e| e.to_string()))
            .map(HfTokenizer)
            .map_err(|e| TokenizerError::new(format!("not a valid tokenizer.json: {e}")))
    }
}

impl Codec for HfTokenizer {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let encoding = contained(|| self.0.encode(text, false))
            .map_err(|panic| format!("the tokenizers crate failed: {panic}"))
            .and_then(|encoded| encoded.map_err(|e| e.to_string()))
            .map_err(|e| TokenizerError::new(format!("cannot encode the text: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, TokenizerError> {
        // Special tokens (`</s>`) are not text.
        contained(|| self.0.decode(ids, true))
            .map_err(|panic| format!("the tokenizers crate failed: {panic}"))
            .and_then(|decoded| decoded.map_err(|e| e.to_string()))
            .map(|s| s.into_bytes())
            .map_err(|e| TokenizerError::new(format!("cannot decode tokens: {e}")))
    }

    fn vocab_size(&self) -> usize {
        contained(|| self.0.get_vocab_size(true)).unwrap_or(0)
    }

    fn token_id(&self, text: &str) -> Option<u32> {
        contained(|| self.0.token_to_id(text)).ok().flatten()
    }
}
