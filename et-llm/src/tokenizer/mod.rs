//! Tokenizers for text in and out of [`TextGenerator`](crate::runner::TextGenerator)
//! (feature `std`): Hugging Face `tokenizer.json` (feature `tokenizers`, through the
//! `tokenizers` crate: BPE, WordPiece and Unigram with their normalizers and
//! pre-tokenizers, as Llama 3, Qwen and SmolLM ship them) and SentencePiece `.model`
//! files (Llama 2, Gemma; etch's own reader, no dependency).
//!
//! [`Tokenizer::open`] tells the two apart by content. [`TextStream`] turns tokens into
//! text as they arrive, holding back bytes until they form whole UTF-8 characters.

#[cfg(feature = "tokenizers")]
mod hf;
pub mod sentencepiece;
mod stream;

use std::boxed::Box;
use std::format;
use std::path::Path;
use std::string::String;
use std::vec::Vec;

pub use stream::TextStream;

/// A tokenizer file that could not be read or used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenizerError(String);

impl TokenizerError {
    pub(crate) fn new(message: impl Into<String>) -> TokenizerError {
        TokenizerError(message.into())
    }
}

impl core::fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TokenizerError {}

/// What a tokenizer does for generation.
trait Codec: core::fmt::Debug + Send + Sync {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError>;
    /// The bytes of `ids`' text (a byte-fallback token may hold part of a character).
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, TokenizerError>;
    fn vocab_size(&self) -> usize;
    fn token_id(&self, text: &str) -> Option<u32>;
}

/// A tokenizer read from a file; see the [module docs](self).
#[derive(Debug)]
pub struct Tokenizer {
    codec: Box<dyn Codec>,
}

impl Tokenizer {
    /// Reads `path`: a Hugging Face `tokenizer.json` (a JSON object) or a SentencePiece
    /// model (a protobuf), told apart by the first byte.
    pub fn open(path: impl AsRef<Path>) -> Result<Tokenizer, TokenizerError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| TokenizerError::new(format!("cannot read {}: {e}", path.display())))?;
        Self::from_bytes(&bytes)
            .map_err(|e| TokenizerError::new(format!("{}: {e}", path.display())))
    }

    /// A tokenizer from a file's bytes (see [`open`](Self::open)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let codec: Box<dyn Codec> = match first {
            Some(b'{') => Self::json(bytes)?,
            Some(_) => Box::new(
                sentencepiece::SentencePiece::from_bytes(bytes)
                    .map_err(|e| TokenizerError::new(format!("not a SentencePiece model: {e}")))?,
            ),
            None => return Err(TokenizerError::new("the tokenizer file is empty")),
        };
        Ok(Tokenizer { codec })
    }

    #[cfg(feature = "tokenizers")]
    fn json(bytes: &[u8]) -> Result<Box<dyn Codec>, TokenizerError> {
        Ok(Box::new(hf::HfTokenizer::from_bytes(bytes)?))
    }

    #[cfg(not(feature = "tokenizers"))]
    fn json(_: &[u8]) -> Result<Box<dyn Codec>, TokenizerError> {
        Err(TokenizerError::new(
            "a Hugging Face tokenizer.json needs et-llm's feature `tokenizers`",
        ))
    }

    /// The token ids of `text` (no beginning-of-sequence token added).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.codec.encode(text)
    }

    /// The text of `ids`; bytes that do not form UTF-8 become U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let bytes = self.codec.decode_bytes(ids)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The bytes of `ids`' text.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, TokenizerError> {
        self.codec.decode_bytes(ids)
    }

    /// Tokens in the vocabulary, special ones included.
    pub fn vocab_size(&self) -> usize {
        self.codec.vocab_size()
    }

    /// The id of a token's text (`"<s>"`), if it is one token.
    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.codec.token_id(text)
    }
}

impl Codec for sentencepiece::SentencePiece {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        Ok(sentencepiece::SentencePiece::encode(self, text))
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, TokenizerError> {
        Ok(self.decode(ids))
    }

    fn vocab_size(&self) -> usize {
        sentencepiece::SentencePiece::vocab_size(self)
    }

    fn token_id(&self, text: &str) -> Option<u32> {
        (0..self.vocab_size() as u32).find(|&id| self.piece(id) == Some(text))
    }
}
