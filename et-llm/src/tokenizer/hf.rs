//! Hugging Face `tokenizer.json`, through the `tokenizers` crate (feature `tokenizers`):
//! the format has many models, normalizers, pre-tokenizers and decoders, and that crate
//! is their reference implementation.

use std::format;
use std::vec::Vec;

use super::{Codec, TokenizerError};

#[derive(Debug)]
pub(super) struct HfTokenizer(tokenizers::Tokenizer);

impl HfTokenizer {
    pub(super) fn from_bytes(bytes: &[u8]) -> Result<HfTokenizer, TokenizerError> {
        tokenizers::Tokenizer::from_bytes(bytes)
            .map(HfTokenizer)
            .map_err(|e| TokenizerError::new(format!("not a valid tokenizer.json: {e}")))
    }
}

impl Codec for HfTokenizer {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let encoding = self
            .0
            .encode(text, false)
            .map_err(|e| TokenizerError::new(format!("cannot encode the text: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, TokenizerError> {
        // Special tokens (`</s>`) are not text.
        self.0
            .decode(ids, true)
            .map(|s| s.into_bytes())
            .map_err(|e| TokenizerError::new(format!("cannot decode tokens: {e}")))
    }

    fn vocab_size(&self) -> usize {
        self.0.get_vocab_size(true)
    }

    fn token_id(&self, text: &str) -> Option<u32> {
        self.0.token_to_id(text)
    }
}
