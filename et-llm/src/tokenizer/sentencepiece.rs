//! SentencePiece `.model` tokenizers (Llama 2, Gemma, T5 style `tokenizer.model`).
//!
//! Reads the protobuf `ModelProto` (the `proto` submodule) and tokenizes as the
//! sentencepiece library does, checked id for id against it by
//! `et-llm/tests/sentencepiece.rs` on Llama 2, T5 and Gemma style models:
//!
//! - Normalization: the precompiled character map when the model has one (nmt_nfkc and
//!   the like: a darts-clone double-array trie of replacements), user-defined pieces
//!   passed through unchanged, leading/trailing/repeated spaces removed if
//!   `remove_extra_whitespaces`, a dummy "▁" prefix if `add_dummy_prefix`, spaces
//!   escaped to "▁" (U+2581) if `escape_whitespaces`.
//! - BPE (`model_type` 2, Llama 2): repeatedly merges the adjacent pair whose merged
//!   piece has the highest score (ties: leftmost); user-defined pieces are matched first
//!   and never merged.
//! - UNIGRAM (`model_type` 1, Gemma, T5): Viterbi over the piece scores, an unknown
//!   character costing the lowest score minus 10.
//! - Either way, a piece not in the vocabulary becomes `<0xAB>` byte pieces with byte
//!   fallback, the unknown id otherwise (one per run of unknown characters).
//!
//! Not supported: WORD and CHAR models and `treat_whitespace_as_suffix` (rejected by
//! [`SentencePiece::from_bytes`]); a BPE merge that makes an UNUSED piece is kept
//! where the library splits it again (unigram skips UNUSED pieces, as the library
//! does); the denormalizer spec is ignored (decoding replaces "▁" only). No released
//! LLM tokenizer has UNUSED pieces or a denormalizer.

// The crate is `no_std` with `std` for this module: its prelude, by name.
use std::prelude::rust_2021::*;
#[allow(unused_imports)]
use std::{format, vec};

mod proto;

use core::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt;

use proto::{CharsMap, PieceType};

/// What was wrong with a `.model` file: the field, piece index or byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentencePieceError {
    message: String,
}

impl SentencePieceError {
    fn new(message: String) -> Self {
        SentencePieceError { message }
    }
}

impl fmt::Display for SentencePieceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid SentencePiece model: {}", self.message)
    }
}

impl std::error::Error for SentencePieceError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Bpe,
    Unigram,
}

#[derive(Debug)]
struct Piece {
    text: String,
    score: f32,
    kind: PieceType,
}

/// A SentencePiece tokenizer loaded from a `.model` file.
#[derive(Debug)]
pub struct SentencePiece {
    pieces: Vec<Piece>,
    /// NORMAL, USER_DEFINED and UNUSED pieces: the ones text can be segmented into.
    vocab: HashMap<String, u32>,
    /// The other pieces (control, unknown, byte), which only an exact lookup finds.
    reserved: HashMap<String, u32>,
    /// User-defined pieces, matched whole before normalization and segmentation.
    user_defined: HashSet<String>,
    user_defined_max_len: usize,
    /// The longest piece of `vocab`, in bytes: bounds the unigram lattice's matches.
    vocab_max_len: usize,
    byte_ids: [Option<u32>; 256],
    algorithm: Algorithm,
    byte_fallback: bool,
    unk_id: u32,
    bos_id: Option<u32>,
    eos_id: Option<u32>,
    unk_surface: String,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    charsmap: Option<CharsMap>,
    /// The lowest and highest score of the NORMAL pieces (unigram unknown and
    /// user-defined scores derive from them).
    min_score: f32,
    max_score: f32,
}

/// "▁", which stands for a space in pieces.
const SPACE: &str = "\u{2581}";

/// The penalty of an unknown character below the lowest piece score (unigram).
const UNK_PENALTY: f32 = 10.0;

impl SentencePiece {
    /// Reads a `.model` file (a serialized `ModelProto`).
    ///
    /// Errors say what is malformed or unsupported: truncated or invalid protobuf (with
    /// the byte offset), a piece that is not UTF-8 or repeated (with its index), special
    /// ids out of range, a WORD/CHAR model or a suffix-whitespace model.
    pub fn from_bytes(bytes: &[u8]) -> Result<SentencePiece, SentencePieceError> {
        let raw = proto::parse_model(bytes)?;
        let err = |m: String| Err(SentencePieceError::new(m));
        let algorithm = match raw.model_type {
            1 => Algorithm::Unigram,
            2 => Algorithm::Bpe,
            3 | 4 => {
                return err(format!(
                    "TrainerSpec.model_type {} (WORD/CHAR) is not supported",
                    raw.model_type
                ))
            }
            other => return err(format!("TrainerSpec.model_type {other} is unknown")),
        };
        if raw.treat_whitespace_as_suffix {
            return err("TrainerSpec.treat_whitespace_as_suffix is not supported".into());
        }
        if raw.pieces.is_empty() {
            return err("the model has no pieces".into());
        }
        if !raw.has_trainer_spec || !raw.has_normalizer_spec {
            return err("no trainer_spec or normalizer_spec: the file is incomplete".into());
        }
        let count = raw.pieces.len();
        if u32::try_from(count).is_err() {
            return err(format!("{count} pieces do not fit u32 ids"));
        }
        let mut s = SentencePiece {
            pieces: Vec::new(),
            vocab: HashMap::new(),
            reserved: HashMap::new(),
            user_defined: HashSet::new(),
            user_defined_max_len: 0,
            vocab_max_len: 0,
            byte_ids: [None; 256],
            algorithm,
            byte_fallback: raw.byte_fallback,
            unk_id: 0,
            bos_id: None,
            eos_id: None,
            unk_surface: raw.unk_surface,
            add_dummy_prefix: raw.add_dummy_prefix,
            remove_extra_whitespaces: raw.remove_extra_whitespaces,
            escape_whitespaces: raw.escape_whitespaces,
            charsmap: None,
            min_score: f32::MAX,
            // As sentencepiece: the smallest positive float, so not below 0 in practice.
            max_score: f32::MIN_POSITIVE,
        };
        for (i, p) in raw.pieces.into_iter().enumerate() {
            let id = i as u32;
            if p.text.is_empty() {
                return err(format!("pieces[{i}] is empty"));
            }
            let map = match p.kind {
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused => &mut s.vocab,
                _ => &mut s.reserved,
            };
            if map.insert(p.text.clone(), id).is_some() {
                return err(format!("pieces[{i}] {:?} is repeated", p.text));
            }
            match p.kind {
                PieceType::Normal => {
                    s.min_score = s.min_score.min(p.score);
                    s.max_score = s.max_score.max(p.score);
                }
                PieceType::UserDefined => {
                    s.user_defined_max_len = s.user_defined_max_len.max(p.text.len());
                    s.user_defined.insert(p.text.clone());
                }
                PieceType::Byte => match parse_byte_piece(&p.text) {
                    Some(b) => s.byte_ids[usize::from(b)] = Some(id),
                    None => {
                        return err(format!(
                            "pieces[{i}] {:?} is a BYTE piece but not <0xAB>",
                            p.text
                        ))
                    }
                },
                _ => {}
            }
            if matches!(
                p.kind,
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused
            ) {
                s.vocab_max_len = s.vocab_max_len.max(p.text.len());
            }
            s.pieces.push(Piece {
                text: p.text,
                score: p.score,
                kind: p.kind,
            });
        }
        // As the library: the unknown id is that of the one UNKNOWN piece, BOS and EOS
        // those of the CONTROL pieces named by TrainerSpec.bos_piece and eos_piece (the
        // trainer's unk_id, bos_id and eos_id fields are not read at load).
        let mut unknown = s
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == PieceType::Unknown);
        s.unk_id = match (unknown.next(), unknown.next()) {
            (Some((id, _)), None) => id as u32,
            (None, _) => return err("no piece is of type UNKNOWN".into()),
            (Some(_), Some((id, _))) => {
                return err(format!("pieces[{id}] is a second UNKNOWN piece"))
            }
        };
        let control = |name: &str| {
            let id = *s.reserved.get(name)?;
            (s.pieces[id as usize].kind == PieceType::Control).then_some(id)
        };
        s.bos_id = control(&raw.bos_piece);
        s.eos_id = control(&raw.eos_piece);
        if s.byte_fallback {
            if let Some(b) = s.byte_ids.iter().position(Option::is_none) {
                return err(format!(
                    "byte_fallback is set but piece <0x{b:02X}> is missing"
                ));
            }
        } else if let Some(i) = s.pieces.iter().position(|p| p.kind == PieceType::Byte) {
            return err(format!(
                "pieces[{i}] is a BYTE piece but byte_fallback is not set"
            ));
        }
        if !raw.precompiled_charsmap.is_empty() {
            s.charsmap = Some(CharsMap::new(raw.precompiled_charsmap)?);
        }
        Ok(s)
    }

    /// The number of pieces; ids are below it.
    pub fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    /// The beginning-of-sequence id, if the model has one.
    pub fn bos_id(&self) -> Option<u32> {
        self.bos_id
    }

    /// The end-of-sequence id, if the model has one.
    pub fn eos_id(&self) -> Option<u32> {
        self.eos_id
    }

    /// The text of piece `id` (`"▁the"`, `"<0x0A>"`, `"<s>"`), `None` past the vocabulary.
    pub fn piece(&self, id: u32) -> Option<&str> {
        self.pieces.get(id as usize).map(|p| p.text.as_str())
    }

    /// Tokenizes `text` as sentencepiece's `encode` does, without BOS or EOS.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalize(text);
        let pieces = match self.algorithm {
            Algorithm::Bpe => self.bpe(&normalized),
            Algorithm::Unigram => self.viterbi(&normalized),
        };
        let mut ids = Vec::with_capacity(pieces.len());
        let mut prev_unk = false;
        for (start, end, id) in pieces {
            let unk = id == self.unk_id;
            if unk && self.byte_fallback {
                for &b in &normalized.as_bytes()[start..end] {
                    // All 256 byte pieces exist when byte_fallback is set (checked at load).
                    ids.push(self.byte_ids[usize::from(b)].unwrap_or(self.unk_id));
                }
            } else if !(unk && prev_unk) {
                // A run of unknown pieces is one unknown token, as sentencepiece has it.
                ids.push(id);
            }
            prev_unk = unk;
        }
        ids
    }

    /// Turns ids back into text: "▁" is a space, the space of the dummy prefix is
    /// dropped at the start, byte pieces are their byte (so the result may split a
    /// UTF-8 character; the caller assembles), control pieces (BOS, EOS) are dropped, the
    /// unknown piece is the model's unknown surface (" ⁇ "), ids past the vocabulary
    /// are skipped.
    pub fn decode(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        // The first "▁" of the text is the dummy prefix, not text: a piece that comes
        // before any output loses one; only one such piece does, unless extra spaces were
        // removed when encoding, where no output can start with a space.
        let strips = self.add_dummy_prefix || self.remove_extra_whitespaces;
        let mut stripped = false;
        for &id in ids {
            let Some(piece) = self.pieces.get(id as usize) else {
                continue;
            };
            let at_start = out.is_empty() && !stripped;
            stripped = false;
            match piece.kind {
                PieceType::Control => {}
                PieceType::Unknown => out.extend_from_slice(self.unk_surface.as_bytes()),
                PieceType::Byte => {
                    if let Some(b) = parse_byte_piece(&piece.text) {
                        out.push(b);
                    }
                }
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused => {
                    let mut text = piece.text.as_str();
                    if at_start && strips {
                        if let Some(rest) = text.strip_prefix(SPACE) {
                            text = rest;
                            stripped = !self.remove_extra_whitespaces;
                        }
                    }
                    out.extend_from_slice(text.replace(SPACE, " ").as_bytes());
                }
            }
        }
        out
    }

    /// The text the segmentation sees: mapped by the character map, spaces escaped,
    /// extra spaces removed and the dummy prefix added as the model says.
    fn normalize(&self, text: &str) -> String {
        let mut rest = text;
        if self.remove_extra_whitespaces {
            while !rest.is_empty() {
                let (piece, used) = self.normalize_prefix(rest);
                if piece != " " {
                    break;
                }
                rest = &rest[used..];
            }
        }
        if rest.is_empty() {
            return String::new();
        }
        let space = if self.escape_whitespaces { SPACE } else { " " };
        let mut out = String::with_capacity(rest.len() + space.len());
        if self.add_dummy_prefix {
            out.push_str(space);
        }
        let mut prev_space = self.remove_extra_whitespaces;
        while !rest.is_empty() {
            let (piece, used) = self.normalize_prefix(rest);
            rest = &rest[used..];
            let piece = if prev_space {
                piece.trim_start_matches(' ')
            } else {
                piece
            };
            if piece.is_empty() {
                continue;
            }
            for ch in piece.chars() {
                if ch == ' ' {
                    out.push_str(space);
                } else {
                    out.push(ch);
                }
            }
            prev_space = self.remove_extra_whitespaces && piece.ends_with(' ');
        }
        if self.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        out
    }

    /// The normalized form of the start of `text` and how many bytes it covers: a
    /// user-defined piece as is, else the character map's longest match, else one
    /// character as is.
    fn normalize_prefix<'s>(&'s self, text: &'s str) -> (&'s str, usize) {
        if let Some(len) = self.user_defined_prefix(text) {
            return (&text[..len], len);
        }
        if let Some((replacement, len)) = self.charsmap.as_ref().and_then(|m| m.longest_match(text))
        {
            return (replacement, len);
        }
        let len = text.chars().next().map_or(0, char::len_utf8);
        (&text[..len], len)
    }

    /// The byte length of the longest user-defined piece `text` starts with.
    fn user_defined_prefix(&self, text: &str) -> Option<usize> {
        let longest = self.user_defined_max_len.min(text.len());
        (1..=longest).rev().find(|&len| {
            text.get(..len)
                .is_some_and(|p| self.user_defined.contains(p))
        })
    }

    /// The id of a segment: any piece with that text, else unknown.
    fn id_of(&self, text: &str) -> u32 {
        self.vocab
            .get(text)
            .or_else(|| self.reserved.get(text))
            .copied()
            .unwrap_or(self.unk_id)
    }

    /// BPE segmentation as (start, end, id) of the normalized text.
    fn bpe(&self, text: &str) -> Vec<(usize, usize, u32)> {
        // Symbols are a doubly linked list over the text; a merge grows the left symbol
        // and empties the right one, so indices (and thus left-to-right order) stay put.
        struct Symbol {
            start: usize,
            end: usize,
            prev: Option<usize>,
            next: Option<usize>,
            frozen: bool,
        }
        let mut symbols: Vec<Symbol> = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let (len, frozen) = match self.user_defined_prefix(&text[pos..]) {
                Some(len) => (len, true),
                None => (text[pos..].chars().next().map_or(1, char::len_utf8), false),
            };
            let i = symbols.len();
            symbols.push(Symbol {
                start: pos,
                end: pos + len,
                prev: i.checked_sub(1),
                next: Some(i + 1),
                frozen,
            });
            pos += len;
        }
        if let Some(last) = symbols.last_mut() {
            last.next = None;
        }

        // Candidate merges, best first: highest score, then leftmost. A candidate goes
        // stale when either side merges elsewhere; its recorded span tells.
        #[derive(PartialEq)]
        struct Candidate {
            score: f32,
            left: usize,
            right: usize,
            end: usize,
        }
        impl Eq for Candidate {}
        impl Ord for Candidate {
            fn cmp(&self, other: &Self) -> Ordering {
                self.score
                    .total_cmp(&other.score)
                    .then_with(|| Reverse(self.left).cmp(&Reverse(other.left)))
            }
        }
        impl PartialOrd for Candidate {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        let mut agenda = BinaryHeap::new();
        let consider = |agenda: &mut BinaryHeap<Candidate>, symbols: &[Symbol], left: usize| {
            let Some(right) = symbols[left].next else {
                return;
            };
            let (l, r) = (&symbols[left], &symbols[right]);
            if l.frozen || r.frozen {
                return;
            }
            if let Some(&id) = self.vocab.get(&text[l.start..r.end]) {
                let score = self.pieces[id as usize].score;
                agenda.push(Candidate {
                    score,
                    left,
                    right,
                    end: r.end,
                });
            }
        };
        for i in 0..symbols.len() {
            consider(&mut agenda, &symbols, i);
        }
        while let Some(c) = agenda.pop() {
            let (l, r) = (&symbols[c.left], &symbols[c.right]);
            if l.next != Some(c.right) || r.end != c.end || l.start == l.end || r.start == r.end {
                continue;
            }
            let next = r.next;
            symbols[c.left].end = c.end;
            symbols[c.left].next = next;
            symbols[c.right].start = c.end; // empty: merged away
            if let Some(n) = next {
                symbols[n].prev = Some(c.left);
            }
            if let Some(p) = symbols[c.left].prev {
                consider(&mut agenda, &symbols, p);
            }
            consider(&mut agenda, &symbols, c.left);
        }
        let mut out = Vec::new();
        let mut at = if symbols.is_empty() { None } else { Some(0) };
        while let Some(i) = at {
            let s = &symbols[i];
            out.push((s.start, s.end, self.id_of(&text[s.start..s.end])));
            at = s.next;
        }
        out
    }

    /// Unigram segmentation as (start, end, id): the path of highest total score.
    fn viterbi(&self, text: &str) -> Vec<(usize, usize, u32)> {
        // best[end] = (score of the best path to `end`, start of its last piece, id).
        let mut best: Vec<Option<(f32, usize, u32)>> = vec![None; text.len() + 1];
        best[0] = Some((0.0, 0, self.unk_id));
        let unk_score = self.min_score - UNK_PENALTY;
        for (start, ch) in text.char_indices() {
            let Some((base, _, _)) = best[start] else {
                continue;
            };
            let offer = |best: &mut [Option<(f32, usize, u32)>], end: usize, score: f32, id| {
                let total = score + base;
                // Strictly better only: the first offer wins ties, as in sentencepiece.
                if best[end].is_none_or(|(s, _, _)| total > s) {
                    best[end] = Some((total, start, id));
                }
            };
            let mut single = false;
            let longest = self.vocab_max_len.min(text.len() - start);
            for len in 1..=longest {
                let Some(candidate) = text.get(start..start + len) else {
                    continue;
                };
                let Some(&id) = self.vocab.get(candidate) else {
                    continue;
                };
                let piece = &self.pieces[id as usize];
                let score = match piece.kind {
                    PieceType::Unused => continue,
                    // A user-defined piece must win over any split of it.
                    PieceType::UserDefined => (len as f64 * f64::from(self.max_score) - 0.1) as f32,
                    _ => piece.score,
                };
                offer(&mut best, start + len, score, id);
                single |= len == ch.len_utf8();
            }
            if !single {
                offer(&mut best, start + ch.len_utf8(), unk_score, self.unk_id);
            }
        }
        let mut out = Vec::new();
        let mut end = text.len();
        while end > 0 {
            // Every character boundary is reached (an unknown piece covers any character).
            let Some((_, start, id)) = best[end] else {
                break;
            };
            out.push((start, end, id));
            end = start;
        }
        out.reverse();
        out
    }
}

/// The byte of a `<0xAB>` piece.
fn parse_byte_piece(text: &str) -> Option<u8> {
    let hex = text.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}
