//! The HDD's buffer in segments (not kernel code: the drive's firmware, as product manuals
//! describe it; figures in `calib.rs`). Each segment holds one run of sectors the drive read
//! (and read ahead) or was given to write, as a circular buffer of `HDD_SEGMENT_BYTES`: SCSI
//! mode page 08h's "number of cache segments", and Seagate's manuals: "each cache segment is
//! actually a self-contained circular buffer". A miss takes the least recently used segment.

use crate::calib::*;

/// One segment: the sectors `start..end` are in the buffer; `host_end` is where the last
/// command served from it ended (its read-ahead may not run more than a segment past it:
/// the circular buffer must not overwrite what the host has not yet read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) host_end: u64,
    /// Least recently used goes first: a stamp from `Segments::clock`.
    used: u64,
}

pub(crate) const SEGMENT_SECTORS: u64 = HDD_SEGMENT_BYTES / 512;

/// The drive's segments, at most `HDD_BUFFER_SEGMENTS`, fewer while cached writes not yet on
/// the media hold some of the buffer (the same buffer and segmentation serves writes: Seagate's
/// manuals, "the same buffer space and segmentation is used as set up for read functions").
#[derive(Clone, Debug, Default)]
pub(crate) struct Segments {
    segs: Vec<Segment>,
    clock: u64,
    /// The segment the head reads ahead into while the media is idle, if any.
    pub(crate) active: Option<usize>,
    /// The active segment's read-ahead follows a detected stream: the read that started it
    /// continued the segment's run (Seagate's ARLA keeps prefetch on "as long as sequential
    /// read operations request contiguous blocks of data"; Fujitsu's MPG manuals start it for a
    /// read "that targets the sequential address to the previous read command").
    pub(crate) active_stream: bool,
}

impl Segments {
    pub(crate) fn get(&self, i: usize) -> Segment {
        self.segs[i]
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> &mut Segment {
        &mut self.segs[i]
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.segs.len()
    }

    /// The segment holding all of `start..end`.
    pub(crate) fn hit(&self, start: u64, end: u64) -> Option<usize> {
        self.segs.iter().position(|s| s.start <= start && end <= s.end)
    }

    /// A segment (not the active one) whose run the command continues: it starts inside or at
    /// the end of what the segment holds and goes past it.
    pub(crate) fn continued(&self, start: u64, end: u64) -> Option<usize> {
        (0..self.segs.len())
            .find(|&i| Some(i) != self.active && self.segs[i].start <= start && start <= self.segs[i].end && end > self.segs[i].end)
    }

    pub(crate) fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.segs[i].used = self.clock;
    }

    /// Grows segment `i` to hold up to `end`, forgetting its oldest sectors beyond a segment.
    pub(crate) fn extend(&mut self, i: usize, end: u64) {
        let s = &mut self.segs[i];
        s.end = s.end.max(end);
        s.start = s.start.max(s.end.saturating_sub(SEGMENT_SECTORS));
    }

    /// Takes a segment for `start..end`: the least recently used one goes when all the
    /// segments the cached writes leave free (`dirty_bytes`) are in use.
    pub(crate) fn take(&mut self, start: u64, end: u64, dirty_bytes: u64) -> usize {
        let held_by_writes = dirty_bytes.div_ceil(HDD_SEGMENT_BYTES) as usize;
        let limit = (HDD_BUFFER_SEGMENTS as usize).saturating_sub(held_by_writes).max(1);
        while self.segs.len() >= limit {
            let lru = (0..self.segs.len()).min_by_key(|&i| self.segs[i].used).expect("at least one segment");
            self.remove(lru);
        }
        self.segs.push(Segment { start: start.max(end.saturating_sub(SEGMENT_SECTORS)), end, host_end: end, used: 0 });
        assert!(self.segs.len() <= HDD_BUFFER_SEGMENTS as usize, "more segments than the buffer has");
        let i = self.segs.len() - 1;
        self.touch(i);
        i
    }

    fn remove(&mut self, i: usize) {
        self.segs.remove(i);
        self.active = match self.active {
            Some(a) if a == i => None,
            Some(a) if a > i => Some(a - 1),
            a => a,
        };
    }

    /// A write of `start..end` clears what any segment held of those sectors (Seagate: "the
    /// respective cache segments are cleared"); the written data is then held as a segment
    /// of its own, or continues the segment the previous write went into.
    pub(crate) fn write(&mut self, start: u64, end: u64, dirty_bytes: u64) {
        let mut i = 0;
        while i < self.segs.len() {
            let s = &mut self.segs[i];
            if s.end <= start || end <= s.start {
                i += 1;
            } else if start <= s.start && s.end <= end {
                self.remove(i);
            } else {
                // Keep the part before the write, or else the part after it.
                if s.start < start {
                    s.end = start;
                } else {
                    s.start = end;
                }
                s.host_end = s.host_end.clamp(s.start, s.end);
                i += 1;
            }
        }
        match (0..self.segs.len()).find(|&i| self.segs[i].end == start) {
            Some(i) => {
                self.extend(i, end);
                self.segs[i].host_end = end;
                self.touch(i);
            }
            None => {
                self.take(start, end, dirty_bytes);
            }
        }
    }
}
