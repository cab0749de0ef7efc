//! `fs/bio.c` (`block/bio.c` since 4.2): the bio, the bios a stacking driver makes from one,
//! and `bio_endio`.

use crate::engine::ids::*;
use crate::engine::time::SimTime;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;

#[derive(Clone, Copy, Debug)]
pub struct Bio {
    pub io: IoId,
    pub dev: DevId,
    pub sector: u64,
    pub bytes: u32,
    pub write: bool,
    /// A bio a stacking driver made from another (md's aligned read, a split): it ends its
    /// parent's piece instead of an I/O.
    pub parent: Option<BioId>,
    /// Pieces still outstanding on a bio a stacking driver took apart (md's
    /// `bi_phys_segments` counter), and how many bytes of it were mapped so far.
    pub remaining: u32,
    pub mapped: u32,
    /// When it was submitted (a bio-based device's diskstats count from here).
    pub started: SimTime,
    /// How many bios of `bytes / pages` each this entry stands for: 1, or a run of a
    /// readahead window's page bios (see `Sim::submit_readahead`), which is submitted, merged
    /// and ended exactly as that many bios one after another would be.
    pub pages: u32,
    /// Whether `generic_make_request` has taken it (and traced its Q) yet.
    pub queued: bool,
    /// For a piece of a direct I/O cut at the queue's `max_sectors`: the bytes from this
    /// piece's start to the I/O's end, what `generic_make_request` takes before
    /// `blk_queue_split` cuts this piece off (traced as its Q, then X). 0: not cut.
    pub split_rest: u32,
    /// A run's rest, split off after its first bios (`Sim::split_run`): its first bio's
    /// submission is still to be charged, as one-by-one submission charges each bio's just
    /// before its `__make_request`.
    pub charge_first: bool,
}

impl Bio {
    pub fn new(io: IoId, dev: DevId, sector: u64, bytes: u32, write: bool, now: SimTime) -> Bio {
        Bio {
            io,
            dev,
            sector,
            bytes,
            write,
            parent: None,
            remaining: 0,
            mapped: 0,
            started: now,
            pages: 1,
            queued: false,
            split_rest: 0,
            charge_first: false,
        }
    }

    /// The size of each bio it stands for.
    pub fn page_bytes(&self) -> u32 {
        self.bytes / self.pages
    }
}

impl Sim {
    /// A bio made by a stacking driver from `parent`, for `dev` at `sector`. The caller puts it
    /// at the front of the submitter's pending list, so it is submitted next.
    /// `from_sector` is where the piece starts on the parent's device (the remap's origin).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn child_bio(
        &mut self,
        parent: BioId,
        dev: DevId,
        sector: u64,
        bytes: u32,
        tid: ThreadId,
        split: bool,
        from_sector: u64,
    ) -> BioId {
        let now = self.now();
        let p = self.bios.get_mut(parent.0);
        p.remaining += 1;
        let (io, write, psector, pdev) = (p.io, p.write, p.sector, p.dev);
        let child = Bio { parent: Some(parent), ..Bio::new(io, dev, sector, bytes, write, now) };
        let id = BioId(self.bios.insert(child));
        self.acct.totals.bios_submitted += 1;
        if split {
            // The parent, split where this piece starts on the parent's device.
            self.emit_from(pdev, Action::X, write, psector, bytes, tid, id.0, parent.0, Some((pdev, from_sector)));
        }
        self.emit_from(dev, Action::A, write, sector, bytes, tid, id.0, parent.0, Some((pdev, from_sector)));
        id
    }

    /// One piece of a bio a stacking driver took apart is done; the last one ends the bio.
    pub(crate) fn bio_piece_done(&mut self, bio: BioId) {
        let b = self.bios.get_mut(bio.0);
        b.remaining -= 1;
        if b.remaining == 0 {
            self.end_bio(bio);
        }
    }

    /// `bio_endio`: every bio completes exactly once (the slab panics on a second free).
    pub(crate) fn end_bio(&mut self, bio_id: BioId) {
        let bio = self.bios.remove(bio_id.0);
        self.acct.totals.bios_completed += bio.pages as u64;
        assert!(self.acct.totals.bios_completed <= self.acct.totals.bios_submitted, "more bios completed than submitted");
        if let Some(parent) = bio.parent {
            return self.bio_piece_done(parent);
        }
        if self.devs[bio.dev].is_bio_based() {
            let ctx = self.context();
            self.emit(bio.dev, Action::C, bio.write, bio.sector, bio.bytes, ctx, bio_id.0, 0);
            let at = self.stamp_now(bio.dev);
            self.devs[bio.dev].stats.done(at, bio.write, bio.bytes as u64 / 512, at - bio.started);
        }
        if let crate::fio::job::IoOwner::Readahead(j) = self.ios.get(bio.io.0).owner {
            if self.cfg.scenario.vm.readahead == crate::scenario::Readahead::V2_6_20 {
                self.readahead_bio_done(j, bio.io, bio.sector * 512, bio.bytes as u64);
            }
        }
        let io = self.ios.get_mut(bio.io.0);
        io.bios_left -= bio.pages;
        if io.bios_left == 0 {
            let io = self.ios.remove(bio.io.0);
            self.io_done(bio.io, io);
        }
    }
}
