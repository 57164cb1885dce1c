//! The `XH00` header at the start of an XNNPACK payload: where the graph flatbuffer and
//! the constant data lie inside the payload.
//!
//! Layout (little-endian), at payload offset 4 so that it overlaps the bytes where a bare
//! flatbuffer would carry its identifier:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 4 | 4 | magic `XH00` |
//! | 8 | 2 | header length (30 or more; later fields may follow) |
//! | 10 | 4 | flatbuffer offset |
//! | 14 | 4 | flatbuffer size |
//! | 18 | 4 | constant data offset |
//! | 22 | 8 | constant data size |

use et_schema::Error;

/// The magic at payload bytes 4..8.
pub const MAGIC: &[u8; 4] = b"XH00";
/// The identifier of the graph flatbuffer (at its bytes 4..8).
pub const GRAPH_IDENTIFIER: &[u8; 4] = b"XN01";
/// The smallest header: every field above.
const MIN_LEN: usize = 30;

/// Where the parts of a payload are, each range checked to lie inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadLayout {
    /// Byte range of the graph flatbuffer.
    pub graph: core::ops::Range<usize>,
    /// Byte range of the constant data that offset-addressed constants index into.
    pub constants: core::ops::Range<usize>,
}

/// Why a payload's framing or graph was refused: the error code and what was wrong, as
/// for a whole program.
pub type HeaderError = et_schema::ProgramError;

fn bad(reason: &'static str) -> HeaderError {
    HeaderError::new(Error::InvalidProgram, reason)
}

fn le(payload: &[u8], at: usize, n: usize) -> u64 {
    payload[at..at + n]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Locates the graph and the constant data in `payload`. A payload without the header
/// is a bare graph flatbuffer (older exporters) with no constant data.
pub fn locate(payload: &[u8]) -> Result<PayloadLayout, HeaderError> {
    if payload.get(4..8) != Some(&MAGIC[..]) {
        if payload.get(4..8) == Some(&GRAPH_IDENTIFIER[..]) {
            return Ok(PayloadLayout {
                graph: 0..payload.len(),
                constants: payload.len()..payload.len(),
            });
        }
        return Err(bad(
            "the payload has neither the XH00 header nor the XN01 graph identifier",
        ));
    }
    if payload.len() < MIN_LEN {
        return Err(bad("the payload is shorter than its XH00 header"));
    }
    let header_len = le(payload, 8, 2) as usize;
    if header_len < MIN_LEN || header_len > payload.len() {
        return Err(bad("the XH00 header length is out of range"));
    }
    let range = |offset: u64, size: u64, what| {
        let end = offset.checked_add(size).ok_or(bad(what))?;
        if end > payload.len() as u64 {
            return Err(bad(what));
        }
        Ok(offset as usize..end as usize)
    };
    let graph = range(
        le(payload, 10, 4),
        le(payload, 14, 4),
        "the graph flatbuffer lies outside the payload",
    )?;
    let constants = range(
        le(payload, 18, 4),
        le(payload, 22, 8),
        "the constant data lies outside the payload",
    )?;
    if payload.get(graph.start + 4..graph.start + 8) != Some(&GRAPH_IDENTIFIER[..]) {
        return Err(bad(
            "the graph flatbuffer does not carry the XN01 identifier",
        ));
    }
    Ok(PayloadLayout { graph, constants })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(graph: (u32, u32), constants: (u32, u64), total: usize) -> [u8; 64] {
        let mut p = [0u8; 64];
        p[4..8].copy_from_slice(MAGIC);
        p[8..10].copy_from_slice(&30u16.to_le_bytes());
        p[10..14].copy_from_slice(&graph.0.to_le_bytes());
        p[14..18].copy_from_slice(&graph.1.to_le_bytes());
        p[18..22].copy_from_slice(&constants.0.to_le_bytes());
        p[22..30].copy_from_slice(&constants.1.to_le_bytes());
        let g = graph.0 as usize;
        if g + 8 <= total {
            p[g + 4..g + 8].copy_from_slice(GRAPH_IDENTIFIER);
        }
        p
    }

    #[test]
    fn parses_the_ranges() {
        let p = header((32, 16), (48, 16), 64);
        let l = locate(&p).unwrap();
        assert_eq!((l.graph, l.constants), (32..48, 48..64));
    }

    #[test]
    fn refuses_ranges_outside_the_payload() {
        // Reasons are kept only with the feature `messages`.
        let has =
            |e: HeaderError, what: &str| !cfg!(feature = "messages") || e.reason().contains(what);
        let p = header((32, 40), (48, 16), 64);
        assert!(has(locate(&p).unwrap_err(), "graph"));
        let p = header((32, 16), (48, u64::MAX), 64);
        assert!(has(locate(&p).unwrap_err(), "constant"));
        assert!(locate(&header((32, 16), (48, 16), 64)[..20]).is_err());
        assert!(locate(&[0u8; 3]).is_err());
    }

    #[test]
    fn a_bare_graph_has_no_constants() {
        let mut p = [0u8; 16];
        p[4..8].copy_from_slice(GRAPH_IDENTIFIER);
        assert_eq!(locate(&p).unwrap().constants, 16..16);
    }
}
