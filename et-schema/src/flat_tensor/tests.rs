//! The `.ptd` reader on the fixtures, their truncations, random mutations and hand-made
//! hostile headers: every input is accepted or refused with a reason, never a panic, and
//! whatever is accepted reads only inside the file.

extern crate std;

use super::*;
use crate::generated::checked_flat_tensor_root;
use crate::verify_flat_tensor;
use core::fmt::Write as _;
use std::string::String;
use std::vec::Vec;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");

/// Whether `e` carries the code `error` and, with the feature `messages` (which alone
/// keeps explanations), says `phrase`. The code is checked in both configurations.
fn says(e: &DataFileError, error: Error, phrase: &str) -> bool {
    e.error == error && (cfg!(not(feature = "messages")) || e.reason.contains(phrase))
}

/// A malformed-file refusal saying `phrase` (see [`says`]).
fn refused_saying(e: &DataFileError, phrase: &str) -> bool {
    says(e, Error::InvalidExternalData, phrase)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(std::format!("{FIXTURES}/{name}")).unwrap()
}

/// Parses `file` at both verification levels (they must agree on accepted files'
/// entries), checks every accepted entry lies inside the file, and, when the structural
/// check passes, that the crate's own verifier agrees and flatc's accessors read the
/// whole tree.
fn check(file: &[u8]) -> Result<usize, DataFileError> {
    let minimal = DataFileView::parse(file, Verification::Minimal);
    let full = DataFileView::parse(file, Verification::InternalConsistency);
    if let Ok(layout) = DataFileHeader::locate(file, file.len()) {
        let region = &file[..layout.flatbuffer_end];
        if verify_flat_tensor(region).is_ok() {
            let root = checked_flat_tensor_root(region).unwrap();
            let mut text = String::new();
            write!(text, "{root:?}").unwrap();
            assert!(
                flatbuffers::root::<crate::generated::ft::FlatTensor>(region).is_ok(),
                "accepted here, rejected by the flatbuffers crate"
            );
        }
    }
    for view in [&minimal, &full].into_iter().flatten() {
        for e in view.entries() {
            assert!(e.offset + e.size <= file.len());
            if let Some(l) = e.layout {
                let _ = l.nbytes();
                assert_eq!(l.sizes().len(), l.rank());
            }
        }
    }
    if let (Ok(a), Ok(b)) = (&minimal, &full) {
        assert_eq!(a.len(), b.len());
    }
    full.map(|v| v.len())
}

#[test]
fn mlp_ptd_names_its_four_weights_with_layouts() {
    let file = read("mlp_ptd.ptd");
    let view = DataFileView::parse(&file, Verification::InternalConsistency).unwrap();
    let keys: Vec<&str> = view.entries().map(|e| e.key).collect();
    assert_eq!(keys.len(), 4);
    for key in ["l1.weight", "l1.bias", "l2.weight", "l2.bias"] {
        let e = view.find(key).unwrap_or_else(|| panic!("{key} missing"));
        let layout = e.layout.expect("a tensor layout");
        assert_eq!(layout.dtype(), ScalarType::Float);
        assert_eq!(layout.nbytes(), e.size, "{key}");
        let rank = if key.ends_with("weight") { 2 } else { 1 };
        assert_eq!(layout.rank(), rank, "{key}");
        assert_eq!(layout.dim_order(), &[0u8, 1][..rank]);
    }
    assert!(view.find("l3.weight").is_none());
    assert_eq!(check(&file), Ok(4));
}

#[test]
fn mv2_xnnpack_ptd_holds_106_opaque_blobs_keyed_by_sha256() {
    let file = read("mv2_xnnpack_ptd.ptd");
    let view = DataFileView::parse(&file, Verification::InternalConsistency).unwrap();
    assert_eq!(view.len(), 106);
    for e in view.entries() {
        assert_eq!(e.key.len(), 64, "{}", e.key);
        assert!(e.key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(e.layout.is_none());
        assert!(e.size > 0);
    }
}

#[test]
fn every_truncation_is_refused() {
    let file = read("mlp_ptd.ptd");
    for len in 0..file.len() {
        let err = check(&file[..len]).expect_err("a truncated file was accepted");
        assert_eq!(err.error, Error::InvalidExternalData, "at {len}: {err}");
    }
}

#[test]
fn hostile_headers_are_refused_with_a_reason() {
    let file = read("mlp_ptd.ptd");
    let with = |at: usize, bytes: &[u8]| {
        let mut f = file.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        DataFileView::parse(&f, Verification::Minimal).unwrap_err()
    };
    assert!(refused_saying(&with(4, b"ET12"), "FT01"));
    assert_eq!(with(4, b"FT02").error, Error::NotSupported);
    assert!(refused_saying(&with(8, b"eh00"), "FH01"));
    assert!(refused_saying(&with(12, &39u32.to_le_bytes()), "40 bytes"));
    for field in 0..4 {
        let at = HEADER_OFFSET + 8 + 8 * field;
        let e = with(at, &u64::MAX.to_le_bytes());
        assert_eq!(e.error, Error::InvalidExternalData, "field {field}: {e}");
    }
    // The segment area moved onto the flatbuffer.
    assert!(refused_saying(&with(32, &8u64.to_le_bytes()), "overlaps"));
}

/// A small xorshift generator: reproducible mutations without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn random_mutations_are_handled() {
    let file = read("mlp_ptd.ptd");
    let region = DataFileHeader::locate(&file, file.len())
        .unwrap()
        .flatbuffer_end;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..20_000 {
        let mut f = file.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(region);
            match rng.below(4) {
                0 => f[at] ^= 1 << rng.below(8),
                1 => f[at] = rng.below(256) as u8,
                _ => {
                    let at = at & !3;
                    let word = [0, u32::MAX, 0x8000_0000, rng.below(4096) as u32][rng.below(4)];
                    if at + 4 <= region {
                        f[at..at + 4].copy_from_slice(&word.to_le_bytes());
                    }
                }
            }
        }
        match check(&f) {
            Ok(_) => accepted += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} accepted, {refused} refused"
    );
}

/// One entry for [`build`]: key, segment index, layout (dtype code, sizes, dim order).
type Spec<'a> = (Option<&'a str>, u32, Option<(i8, &'a [i32], &'a [u8])>);

/// A `.ptd` with one 64-byte segment and the given entries, laid out as the exporter
/// does (header inserted after the first 8 bytes of the flatbuffer), `version` and the
/// segment's (offset, size).
fn build(entries: &[Spec<'_>], version: u32, segment: (u64, u64)) -> Vec<u8> {
    use crate::generated::ft;
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let seg = ft::DataSegment::create(
        &mut b,
        &ft::DataSegmentArgs {
            offset: segment.0,
            size: segment.1,
        },
    );
    let mut named = Vec::new();
    for &(key, segment_index, layout) in entries {
        let tensor_layout = layout.map(|(dtype, sizes, order)| {
            let args = ft::TensorLayoutArgs {
                scalar_type: ft::ScalarType(dtype),
                sizes: Some(b.create_vector(sizes)),
                dim_order: Some(b.create_vector(order)),
            };
            ft::TensorLayout::create(&mut b, &args)
        });
        let key = key.map(|k| b.create_string(k));
        let args = ft::NamedDataArgs {
            key,
            segment_index,
            tensor_layout,
        };
        named.push(ft::NamedData::create(&mut b, &args));
    }
    let args = ft::FlatTensorArgs {
        version,
        segments: Some(b.create_vector(&[seg])),
        named_data: Some(b.create_vector(&named)),
    };
    let root = ft::FlatTensor::create(&mut b, &args);
    b.finish(root, Some("FT01"));
    let payload = b.finished_data();
    let base = (payload.len() + 48).div_ceil(128) * 128;
    let mut file = Vec::new();
    let root_offset = u32::from_le_bytes(payload[..4].try_into().unwrap()) + 48;
    file.extend_from_slice(&root_offset.to_le_bytes());
    file.extend_from_slice(b"FT01FH01");
    file.extend_from_slice(&40u32.to_le_bytes());
    for v in [48, payload.len() as u64, base as u64, 64] {
        file.extend_from_slice(&v.to_le_bytes());
    }
    file.resize(56, 0);
    file.extend_from_slice(&payload[8..]);
    file.resize(base + 64, 0);
    file
}

#[test]
fn hostile_entries_are_refused_with_a_reason() {
    let ok: Spec<'_> = (Some("w"), 0, Some((6, &[4, 4], &[0, 1])));
    let fine = build(&[ok], 0, (0, 64));
    let view = DataFileView::parse(&fine, Verification::InternalConsistency).unwrap();
    let w = view.find("w").unwrap();
    assert_eq!((w.size, w.layout.unwrap().nbytes()), (64, 64));
    let refused = |entries: &[Spec<'_>], version: u32, segment: (u64, u64), phrase: &str| {
        let file = build(entries, version, segment);
        for level in [Verification::Minimal, Verification::InternalConsistency] {
            let e = DataFileView::parse(&file, level).unwrap_err();
            let error = if version > MAX_SUPPORTED_VERSION {
                Error::NotSupported
            } else {
                Error::InvalidExternalData
            };
            assert!(says(&e, error, phrase), "{phrase}: {e}");
        }
    };
    refused(&[(None, 0, None)], 0, (0, 64), "no key");
    refused(
        &[(Some("w"), 1, None)],
        0,
        (0, 64),
        "segment that does not exist",
    );
    refused(&[ok], 0, (8, 64), "outside the segment area");
    refused(&[ok], 0, (u64::MAX, 2), "outside the segment area");
    refused(&[ok], 1, (0, 64), "version");
    for (dtype, sizes, order) in [
        (99i8, &[4, 4][..], &[0u8, 1][..]), // unknown dtype
        (6, &[4, -4], &[0, 1]),             // negative size
        (6, &[4, 4], &[0, 0]),              // dim order not a permutation
        (6, &[4, 4], &[0, 2]),              // dim order out of range
        (6, &[4, 4], &[0]),                 // ranks disagree
        (
            6,
            &[i32::MAX; 16],
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        ), // overflow
        (6, &[1; 17], &[0; 17]),            // rank above MAX_DIM
    ] {
        refused(
            &[(Some("w"), 0, Some((dtype, sizes, order)))],
            0,
            (0, 64),
            "layout",
        );
    }
}
