//! A bounded reader for the few protobuf messages of a SentencePiece `.model` file,
//! and for the precompiled character map one of them holds.
//!
//! The file is a `ModelProto` (sentencepiece_model.proto). Only the fields the tokenizer
//! uses are decoded; every other field is skipped by its wire type. The reader never
//! trusts a length: each is checked against the bytes that remain, nothing is allocated
//! ahead of the data that fills it, and every defect is an error naming the byte offset
//! and the field, never a panic.

// The crate is `no_std` with `std` for this module: its prelude, by name.
use std::prelude::rust_2021::*;
#[allow(unused_imports)]
use std::{format, vec};

use super::SentencePieceError;

/// Field values of `ModelProto.SentencePiece.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

/// One `ModelProto.SentencePiece`.
#[derive(Debug)]
pub(super) struct RawPiece {
    pub(super) text: String,
    pub(super) score: f32,
    pub(super) kind: PieceType,
}

/// The fields of `ModelProto` (with its `TrainerSpec` and `NormalizerSpec`) that the
/// tokenizer needs, with the proto's defaults for the ones the file leaves out.
#[derive(Debug)]
pub(super) struct RawModel {
    pub(super) pieces: Vec<RawPiece>,
    /// `TrainerSpec.model_type`: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR.
    pub(super) model_type: u64,
    pub(super) byte_fallback: bool,
    pub(super) treat_whitespace_as_suffix: bool,
    /// `TrainerSpec.bos_piece` and `eos_piece`: the texts of the BOS and EOS pieces.
    pub(super) bos_piece: String,
    pub(super) eos_piece: String,
    pub(super) unk_surface: String,
    pub(super) add_dummy_prefix: bool,
    pub(super) remove_extra_whitespaces: bool,
    pub(super) escape_whitespaces: bool,
    pub(super) precompiled_charsmap: Vec<u8>,
    /// Whether the file has a `trainer_spec` and a `normalizer_spec`, which
    /// sentencepiece always writes (after the pieces): without them the file was cut.
    pub(super) has_trainer_spec: bool,
    pub(super) has_normalizer_spec: bool,
}

/// One field's value, by wire type.
enum Value<'a> {
    Varint(u64),
    Fixed64,
    Fixed32(u32),
    Bytes(&'a [u8]),
}

/// Reads the fields of one message. `base` is the message's offset in the file, so that
/// errors give absolute byte offsets.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    fn err(&self, at: usize, what: &str) -> SentencePieceError {
        SentencePieceError::new(format!("{what} at byte offset {}", self.base + at))
    }

    fn varint(&mut self) -> Result<u64, SentencePieceError> {
        let start = self.pos;
        let mut value = 0u64;
        // At most 10 bytes encode 64 bits; a longer run is malformed, not a bigger number.
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.err(start, "truncated varint"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.err(start, "varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], SentencePieceError> {
        let start = self.pos;
        if n > self.buf.len() - self.pos {
            return Err(self.err(
                start,
                &format!(
                    "{what}: {n} bytes needed but only {} remain",
                    self.buf.len() - self.pos
                ),
            ));
        }
        self.pos += n;
        Ok(&self.buf[start..self.pos])
    }

    /// The next field as (number, value, offset of its value), or `None` at the end.
    fn next(&mut self) -> Result<Option<(u64, Value<'a>, usize)>, SentencePieceError> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key_at = self.pos;
        let key = self.varint()?;
        let field = key >> 3;
        if field == 0 {
            return Err(self.err(key_at, "field number 0"));
        }
        let at = self.pos;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8, "fixed64 field")?;
                Value::Fixed64
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                let at = self.pos;
                let bytes = self.take(len, &format!("length-delimited field {field}"))?;
                return Ok(Some((field, Value::Bytes(bytes), at)));
            }
            5 => {
                let b = self.take(4, "fixed32 field")?;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            // Groups (3, 4) are deprecated and never written by sentencepiece; 6 and 7
            // are not wire types.
            other => return Err(self.err(key_at, &format!("field {field}: wire type {other}"))),
        };
        Ok(Some((field, value, at)))
    }

    fn wrong_type(&self, at: usize, name: &str) -> SentencePieceError {
        self.err(at, &format!("{name}: wrong wire type"))
    }

    fn varint_of(&self, v: Value, at: usize, name: &str) -> Result<u64, SentencePieceError> {
        match v {
            Value::Varint(x) => Ok(x),
            _ => Err(self.wrong_type(at, name)),
        }
    }

    fn bytes_of(
        &self,
        v: Value<'a>,
        at: usize,
        name: &str,
    ) -> Result<&'a [u8], SentencePieceError> {
        match v {
            Value::Bytes(b) => Ok(b),
            _ => Err(self.wrong_type(at, name)),
        }
    }

    fn string_of(&self, v: Value<'a>, at: usize, name: &str) -> Result<String, SentencePieceError> {
        let bytes = self.bytes_of(v, at, name)?;
        match core::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(self.err(at, &format!("{name}: not UTF-8"))),
        }
    }
}

/// Decodes a `ModelProto`.
pub(super) fn parse_model(bytes: &[u8]) -> Result<RawModel, SentencePieceError> {
    // The defaults of sentencepiece_model.proto.
    let mut model = RawModel {
        pieces: Vec::new(),
        model_type: 1,
        byte_fallback: false,
        treat_whitespace_as_suffix: false,
        bos_piece: "<s>".to_owned(),
        eos_piece: "</s>".to_owned(),
        unk_surface: " \u{2047} ".to_owned(),
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
        precompiled_charsmap: Vec::new(),
        has_trainer_spec: false,
        has_normalizer_spec: false,
    };
    let mut r = Reader::new(bytes, 0);
    while let Some((field, value, at)) = r.next()? {
        match field {
            1 => {
                let b = r.bytes_of(value, at, "ModelProto.pieces")?;
                let index = model.pieces.len();
                model.pieces.push(parse_piece(b, at, index)?);
            }
            // A message field that occurs twice is merged, as protobuf does.
            2 => {
                parse_trainer(
                    r.bytes_of(value, at, "ModelProto.trainer_spec")?,
                    at,
                    &mut model,
                )?;
                model.has_trainer_spec = true;
            }
            3 => {
                let b = r.bytes_of(value, at, "ModelProto.normalizer_spec")?;
                parse_normalizer(b, at, &mut model)?;
                model.has_normalizer_spec = true;
            }
            _ => {}
        }
    }
    Ok(model)
}

fn parse_piece(bytes: &[u8], base: usize, index: usize) -> Result<RawPiece, SentencePieceError> {
    let mut piece = RawPiece {
        text: String::new(),
        score: 0.0,
        kind: PieceType::Normal,
    };
    let mut r = Reader::new(bytes, base);
    let name = |f: &str| format!("pieces[{index}].{f}");
    while let Some((field, value, at)) = r.next()? {
        match field {
            1 => piece.text = r.string_of(value, at, &name("piece"))?,
            2 => match value {
                Value::Fixed32(bits) => piece.score = f32::from_bits(bits),
                _ => return Err(r.wrong_type(at, &name("score"))),
            },
            3 => {
                piece.kind = match r.varint_of(value, at, &name("type"))? {
                    1 => PieceType::Normal,
                    2 => PieceType::Unknown,
                    3 => PieceType::Control,
                    4 => PieceType::UserDefined,
                    5 => PieceType::Unused,
                    6 => PieceType::Byte,
                    other => {
                        return Err(r.err(at, &format!("{}: unknown type {other}", name("type"))))
                    }
                }
            }
            _ => {}
        }
    }
    Ok(piece)
}

fn parse_trainer(
    bytes: &[u8],
    base: usize,
    model: &mut RawModel,
) -> Result<(), SentencePieceError> {
    let mut r = Reader::new(bytes, base);
    while let Some((field, value, at)) = r.next()? {
        match field {
            3 => model.model_type = r.varint_of(value, at, "TrainerSpec.model_type")?,
            24 => {
                model.treat_whitespace_as_suffix =
                    r.varint_of(value, at, "TrainerSpec.treat_whitespace_as_suffix")? != 0
            }
            35 => model.byte_fallback = r.varint_of(value, at, "TrainerSpec.byte_fallback")? != 0,
            46 => model.bos_piece = r.string_of(value, at, "TrainerSpec.bos_piece")?,
            47 => model.eos_piece = r.string_of(value, at, "TrainerSpec.eos_piece")?,
            44 => model.unk_surface = r.string_of(value, at, "TrainerSpec.unk_surface")?,
            _ => {}
        }
    }
    Ok(())
}

fn parse_normalizer(
    bytes: &[u8],
    base: usize,
    model: &mut RawModel,
) -> Result<(), SentencePieceError> {
    let mut r = Reader::new(bytes, base);
    while let Some((field, value, at)) = r.next()? {
        match field {
            2 => {
                let b = r.bytes_of(value, at, "NormalizerSpec.precompiled_charsmap")?;
                model.precompiled_charsmap = b.to_vec();
            }
            3 => {
                model.add_dummy_prefix =
                    r.varint_of(value, at, "NormalizerSpec.add_dummy_prefix")? != 0
            }
            4 => {
                model.remove_extra_whitespaces =
                    r.varint_of(value, at, "NormalizerSpec.remove_extra_whitespaces")? != 0
            }
            5 => {
                model.escape_whitespaces =
                    r.varint_of(value, at, "NormalizerSpec.escape_whitespaces")? != 0
            }
            _ => {}
        }
    }
    Ok(())
}

/// A precompiled character map (`NormalizerSpec.precompiled_charsmap`): a little-endian
/// u32 byte size of a darts-clone double-array trie, the trie's u32 units, then the
/// NUL-terminated replacement strings that the trie's values are offsets into.
#[derive(Debug)]
pub(super) struct CharsMap {
    units: Vec<u32>,
    strings: Vec<u8>,
}

impl CharsMap {
    pub(super) fn new(blob: Vec<u8>) -> Result<CharsMap, SentencePieceError> {
        let err = |m: &str| {
            Err(SentencePieceError::new(format!(
                "NormalizerSpec.precompiled_charsmap: {m}"
            )))
        };
        let Some(size) = blob.get(..4) else {
            return err("shorter than 4 bytes");
        };
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        if !size.is_multiple_of(4) || size == 0 || size > blob.len() - 4 {
            return err(&format!(
                "trie size {size} is not a positive multiple of 4 within {} bytes",
                blob.len() - 4
            ));
        }
        let units = blob[4..4 + size]
            .chunks_exact(4)
            .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
            .collect();
        Ok(CharsMap {
            units,
            strings: blob[4 + size..].to_vec(),
        })
    }

    /// The replacement of the longest key `text` starts with, and the key's length. A
    /// malformed trie or replacement yields no match rather than an error: the blob was
    /// checked only for its framing.
    pub(super) fn longest_match<'s>(&'s self, text: &str) -> Option<(&'s str, usize)> {
        // darts-clone unit layout: bit 8 has-leaf, bits 0-7 (and 31) the label, bits
        // 10-31 the offset (shifted left 8 more if bit 9), bits 0-30 a leaf's value.
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let mut node = offset(*self.units.first()?);
        let mut found = None;
        for (i, &byte) in text.as_bytes().iter().enumerate() {
            node ^= usize::from(byte);
            let unit = *self.units.get(node)?;
            if unit & ((1 << 31) | 0xff) != u32::from(byte) {
                break;
            }
            node ^= offset(unit);
            if unit & (1 << 8) != 0 {
                let value = self.units.get(node)? & 0x7fff_ffff;
                found = Some((value as usize, i + 1));
            }
        }
        let (value, len) = found?;
        // A key that ends inside a character cannot be replaced without splitting it.
        if !text.is_char_boundary(len) {
            return None;
        }
        let tail = self.strings.get(value..)?;
        let nul = tail.iter().position(|&b| b == 0)?;
        Some((core::str::from_utf8(&tail[..nul]).ok()?, len))
    }
}
