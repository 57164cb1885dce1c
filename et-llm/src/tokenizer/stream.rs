//! Text from tokens as they are generated.

use std::string::String;
use std::vec::Vec;

use super::{Tokenizer, TokenizerError};

/// Turns a stream of tokens into text pieces. A piece is released only when it ends in
/// a whole character: a token may hold part of a character's bytes (byte fallback,
/// byte-level BPE), and decoders change a token's text by what precedes it (a
/// SentencePiece word's leading space), so each step decodes the new tokens together
/// with the ones before them and releases the difference.
#[derive(Debug)]
pub struct TextStream<'t> {
    tokenizer: &'t Tokenizer,
    ids: Vec<u32>,
    /// Where the context decoded with new tokens starts.
    prefix_start: usize,
    /// Tokens already released as text.
    released: usize,
}

impl<'t> TextStream<'t> {
    /// A stream decoding with `tokenizer`.
    pub fn new(tokenizer: &'t Tokenizer) -> TextStream<'t> {
        TextStream {
            tokenizer,
            ids: Vec::new(),
            prefix_start: 0,
            released: 0,
        }
    }

    /// Adds a token; returns the text it completes (often empty).
    pub fn push(&mut self, id: u32) -> Result<String, TokenizerError> {
        self.ids.push(id);
        let before = self
            .tokenizer
            .decode(&self.ids[self.prefix_start..self.released])?;
        let after = self.tokenizer.decode(&self.ids[self.prefix_start..])?;
        if after.ends_with(char::REPLACEMENT_CHARACTER) || after.len() <= before.len() {
            return Ok(String::new());
        }
        let piece = match after.get(before.len()..) {
            Some(new) if after.starts_with(&before) => String::from(new),
            // A decoder that rewrote the earlier text: release what follows it anyway.
            _ => after.chars().skip(before.chars().count()).collect(),
        };
        self.prefix_start = self.released;
        self.released = self.ids.len();
        Ok(piece)
    }

    /// Whatever is held back at the end (an incomplete character, as U+FFFD).
    pub fn finish(&mut self) -> Result<String, TokenizerError> {
        if self.released == self.ids.len() {
            return Ok(String::new());
        }
        let before = self
            .tokenizer
            .decode(&self.ids[self.prefix_start..self.released])?;
        let after = self.tokenizer.decode(&self.ids[self.prefix_start..])?;
        self.released = self.ids.len();
        Ok(after.chars().skip(before.chars().count()).collect())
    }
}
