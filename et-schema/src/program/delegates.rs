//! Where a method's delegates keep their payloads: in the flatbuffer, or in a segment
//! after it. Shared by the runtime (which loads segments through its data loader) and
//! host tools that hold the whole file (selection, the CLI).

use crate::error::Error;
use crate::fields as fb;
use crate::header::ExtendedHeader;
use crate::meta::MethodMeta;
use crate::reader::{Table, Vector};

use super::ProgramView;

/// Where a delegate's processed payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadLocation<'d> {
    /// In the program's `backend_delegate_data`: the bytes themselves.
    Inline(&'d [u8]),
    /// In segment `n` of the file (see [`ProgramView::segment_range`]).
    Segment(usize),
}

/// One entry of a method's `delegates` list.
#[derive(Clone, Copy, Debug)]
pub struct DelegateEntry<'d> {
    /// The backend's id (`XnnpackBackend`); empty when the file leaves it out.
    pub backend_id: &'d str,
    /// Where its payload is.
    pub payload: PayloadLocation<'d>,
}

impl<'d> ProgramView<'d> {
    /// The delegates of `method`, in the order its DelegateCalls index them.
    pub fn delegates(
        &self,
        method: &MethodMeta<'d>,
    ) -> impl Iterator<Item = Result<DelegateEntry<'d>, Error>> + 'd {
        let view = *self;
        let list = method
            .plan()
            .vector(fb::ExecutionPlan::VT_DELEGATES)
            .unwrap_or(Vector::EMPTY);
        (0..list.len()).map(move |i| {
            type D<'x> = fb::BackendDelegate<'x>;
            let table = list.table(i).ok_or(Error::InvalidProgram)?;
            let processed = table.table(D::VT_PROCESSED).ok_or(Error::InvalidProgram)?;
            Ok(DelegateEntry {
                backend_id: table.string(D::VT_ID).unwrap_or(""),
                payload: view.payload_location(processed)?,
            })
        })
    }

    /// Where the payload a `BackendDelegateDataReference` table names is stored.
    pub fn payload_location(&self, reference: Table<'d>) -> Result<PayloadLocation<'d>, Error> {
        type R<'x> = fb::BackendDelegateDataReference<'x>;
        let index = reference.uint(R::VT_INDEX, 4) as usize;
        match fb::DataLocation(reference.uint(R::VT_LOCATION, 1) as u8 as i8) {
            fb::DataLocation::INLINE => {
                let inline = self
                    .root()
                    .vector(fb::Program::VT_BACKEND_DELEGATE_DATA)
                    .and_then(|d| d.table(index))
                    .ok_or(Error::InvalidProgram)?;
                Ok(PayloadLocation::Inline(
                    inline
                        .bytes(fb::BackendDelegateInlineData::VT_DATA)
                        .unwrap_or(&[]),
                ))
            }
            fb::DataLocation::SEGMENT => Ok(PayloadLocation::Segment(index)),
            _ => Err(Error::InvalidProgram),
        }
    }

    /// The file offset and length of segment `index`, for a file whose extended header
    /// gives `segment_base_offset` `base`: `NotFound` when the program has no such
    /// segment (or no segments: `base` 0), `InvalidProgram` when the offset overflows.
    /// Whether the range lies inside the file is the caller's check (the runtime's data
    /// loader makes it; [`segment`](Self::segment) does for a whole file).
    pub fn segment_range(&self, base: u64, index: usize) -> Result<(usize, usize), Error> {
        if base == 0 {
            return Err(Error::NotFound);
        }
        let seg = self
            .root()
            .vector(fb::Program::VT_SEGMENTS)
            .and_then(|s| s.table(index))
            .ok_or(Error::NotFound)?;
        let start = base
            .checked_add(seg.uint(fb::DataSegment::VT_OFFSET, 8))
            .and_then(|s| usize::try_from(s).ok())
            .ok_or(Error::InvalidProgram)?;
        let len = usize::try_from(seg.uint(fb::DataSegment::VT_SIZE, 8))
            .map_err(|_| Error::InvalidProgram)?;
        Ok((start, len))
    }

    /// Segment `index` of `file`, the whole `.pte` this view was parsed from
    /// (`InvalidProgram` when it lies outside the file).
    pub fn segment(&self, file: &'d [u8], index: usize) -> Result<&'d [u8], Error> {
        let base = ExtendedHeader::parse(file)?.map_or(0, |h| h.segment_base_offset);
        let (start, len) = self.segment_range(base, index)?;
        start
            .checked_add(len)
            .and_then(|end| file.get(start..end))
            .ok_or(Error::InvalidProgram)
    }

    /// A delegate's payload bytes in `file`, the whole `.pte` this view was parsed from.
    pub fn payload(
        &self,
        file: &'d [u8],
        location: PayloadLocation<'d>,
    ) -> Result<&'d [u8], Error> {
        match location {
            PayloadLocation::Inline(bytes) => Ok(bytes),
            PayloadLocation::Segment(index) => self.segment(file, index),
        }
    }
}
