//! `block/blk-softirq.c`: the completion softirq's work for one request (`blk_done_softirq` →
//! the driver's `softirq_done_fn`), and what it costs.

use crate::calib::*;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::sched::Step;
use crate::kernel::trace::blktrace::Action;

impl Sim {
    /// The CPU time of completing one request in softirq context.
    /// - A plain request: the interrupt, the request, and `bio_endio` per bio.
    /// - A request-based dm clone: per clone bio, `end_clone_bio` ends it and calls
    ///   `blk_update_request` on the original, which ends the original's bio; with
    ///   `dm.partial_completion` the original is still unfinished after each of those calls, so
    ///   `blk_recalc_rq_segments` walks every bio still on it: N-1, N-2, … 0 visits, N(N-1)/2
    ///   in all. Then the original completes (`dm_softirq_done`, `dm_end_request`).
    /// - A page a reader sleeps on costs its wakeup (`page_waiters_ns`).
    pub(crate) fn softirq_cost(&mut self, rq: ReqId) -> u64 {
        let r = self.reqs.get(rq.0);
        let base = match r.clone_of {
            None => self.request_end_ns(r.dev) + SOFTIRQ_BIO_NS * r.nr_bios as u64,
            Some(_) => HARDIRQ_NS + 2 * SOFTIRQ_REQUEST_NS + self.clone_bios_end_ns(r.nr_clone_bios as u64),
        };
        base + self.page_waiters_ns(rq)
    }

    /// The interrupt and the request's own completion work, without its bios: an HBA's
    /// interrupt and the SCSI softirq's, or NVMe's `nvme_irq` and `blk_mq_complete_request` run
    /// in it on the submitting CPU.
    fn request_end_ns(&self, dev: DevId) -> u64 {
        if self.devs[dev].is_nvme() {
            NVME_IRQ_NS + NVME_COMPLETE_RQ_NS
        } else {
            HARDIRQ_NS + SOFTIRQ_REQUEST_NS
        }
    }

    /// A clone's `n` clone bios ending: `end_clone_bio` and the original's bio per clone bio,
    /// and with `dm.partial_completion` the recounts' walk over the bios still on it.
    fn clone_bios_end_ns(&self, n: u64) -> u64 {
        let walk = if self.cfg.scenario.dm.partial_completion { SEGMENT_WALK_NS * n * n.saturating_sub(1) / 2 } else { 0 };
        2 * SOFTIRQ_BIO_NS * n + walk
    }

    /// The wakeups `unlock_page` → `wake_up_page` does while this request's pages end, one per
    /// page a reader sleeps on. A reader asleep at page `p` of the request (`reader_waits_at`)
    /// wakes when `p` ends, and `READER_RETURN_NS` later (it is switched in and copies the
    /// page) sleeps on the next page if that page has not ended yet, and so on: it chases the
    /// completion while a page takes longer to end than a page takes it to copy, and falls
    /// behind (no waiter, no wakeup) once pages end faster. When a page ends depends on the
    /// completion's order: with `dm.partial_completion` each clone bio ends its page after its
    /// `blk_update_request`, whose recount walks the bios still on the original; without it,
    /// and for a plain request, the pages end back to back (`bio_endio` per bio). Nothing is
    /// switched on: how many pages have a waiter follows from those times. The reader's own
    /// context switches are not counted (INFERRED simplification: the model wakes it once).
    pub(crate) fn page_waiters_ns(&mut self, rq: ReqId) -> u64 {
        let Some(first) = self.reader_waits_at(rq) else { return 0 };
        let r = self.reqs.get(rq.0);
        let partial = r.clone_of.is_some() && self.cfg.scenario.dm.partial_completion;
        let pages = (r.bytes / 4096).max(1);
        let n = r.nr_clone_bios.max(r.nr_bios).max(1) as u64;
        // Each page in turn: how long after the previous page ends this one does (the
        // recount walks the bios left behind it).
        let gaps = if partial {
            PageGaps { base: 2 * SOFTIRQ_BIO_NS, walk: SEGMENT_WALK_NS, n }
        } else {
            PageGaps { base: SOFTIRQ_BIO_NS, walk: 0, n }
        };
        self.page_wakeups_memo.get(first, pages, gaps) * TTWU_REMOTE_NS
    }

    /// The completion softirq for one request, at the end of its work: end its bios, free its
    /// tag and request, wake a waiter for the pool, and run the starved queues and this one
    /// (`scsi_next_command` → `scsi_run_queue`). The host slot went back when the work started
    /// (`scsi_device_unbusy`).
    pub(crate) fn softirq_complete(&mut self, rq: ReqId) {
        let now = self.now();
        let r = self.reqs.remove(rq.0);
        let dev = r.dev;
        let di = dev.idx();
        let ctx = self.context();
        // The interrupt, then blk_update_request's trace of the request's completion.
        self.charge(self.request_end_ns(dev));
        self.emit(dev, Action::C, r.write, r.sector, r.bytes as u32, ctx, rq.0, 0);
        let tag = r.tag.expect("completed request had a tag");
        if let Some(mq) = self.devs[di].queue.mq.as_mut() {
            // The tag set's map of its hardware queue; bt_clear_tag charges the free to one of
            // that map's wait queues, which may wake its sleepers (another LUN's, on a shared
            // set).
            mq.device_busy -= 1;
            for w in self.blk_mq_put_driver_tag(dev, r.hctx, tag) {
                self.wake(w, Step::RetryTag);
            }
            if self.devs[di].queue.mq_sched.is_some() {
                self.blk_mq_sched_free_request(dev, rq, &r);
            }
        } else {
            self.devs[di].queue.tags.put(tag);
        }
        if !r.host_freed && !self.devs[di].is_nvme() {
            let (_, h) = self.devs[di].sd();
            self.hosts[h].put();
        }
        let at = self.stamp_now(dev);
        self.devs[di].stats.done(at, r.write, r.bytes / 512, at - r.alloc_at);
        self.acct.totals.requests_completed += 1;
        // blk_finish_request under a legacy queue's lock; bfq's completion hook under its own.
        self.spin_lock_queue(dev, QUEUE_LOCK_FINISH_NS);
        let owner = Self::owner_of(&r);
        // A request blk_insert_flush took past the elevator has no RQF_ELVPRIV: the elevator's
        // finish_request is not called for it (blk_mq_free_request, 5.10).
        if !r.fua {
            self.devs[di].queue.elevator.completed(owner, now);
            self.bfq_finish_request(dev, owner);
        }
        if let Some(orig) = r.clone_of {
            // A dm clone: its clone bios end (end_clone_bio), and with them the original.
            // A clone came from dm's mempool, not from this queue's request pool.
            self.acct.totals.clones.completed += 1;
            self.acct.totals.clones.bios_completed += r.nr_clone_bios as u64;
            // end_clone_bio per clone bio (with its recount), then the original completes.
            self.charge(SOFTIRQ_REQUEST_NS + self.clone_bios_end_ns(r.nr_clone_bios as u64));
            self.dm_end_request(orig);
            self.scsi_run_queue(dev);
            return;
        }
        for &bio in &r.bios {
            // Per page bio, a run's too (one by one, each is charged before it ends; ending
            // stamps nothing on a request-based queue), so that what this softirq stamps next
            // (a dispatch's D, diskstats) is the same with runs and without.
            self.charge(SOFTIRQ_BIO_NS * self.bios.get(bio.0).pages as u64);
            self.end_bio(bio);
        }
        self.recycle_bio_list(r.bios);
        if self.devs[di].queue.mq.is_none() {
            self.freed_request(dev, r.write);
        }
        // SCSI runs its queues from the completion (`scsi_end_request`); NVMe's completion
        // runs none (`nvme_pci_complete_rq` → `blk_mq_end_request`: a restart, if one was
        // marked, comes with the freed tag).
        if !self.devs[di].is_nvme() {
            self.scsi_run_queue(dev);
        }
    }
}

/// When each page of a request ends after the one before it: page `i` takes `base`, plus
/// `walk` for each of the request's `n` bios still behind it (the recount's walk, which only
/// shortens as pages end; none from the last bio on).
#[derive(Clone, Copy, Debug)]
pub struct PageGaps {
    pub base: u64,
    pub walk: u64,
    pub n: u64,
}

impl PageGaps {
    /// Page `i`'s gap.
    pub fn at(&self, i: u64) -> u64 {
        self.base + self.walk * (self.n - 1 - i.min(self.n - 1))
    }
}

/// How many of a request's pages `first..pages` have a waiter when they end, for a reader asleep
/// on page `first`: page `i` ends `gaps.at(i)` after the one before it (plus the wakeup, when
/// it has a waiter); a woken reader is back `READER_RETURN_NS` later, and a reader that finds
/// its page up to date copies it and goes on to the next. The gap never grows with `i`, which
/// is what lets the count stop early.
pub fn page_wakeups(first: u64, pages: u64, gaps: PageGaps) -> u64 {
    let (mut now, mut reader_at, mut woken) = (0u64, 0u64, 0u64);
    // The gap is kept from page to page rather than computed afresh: it shrinks by `walk` a
    // page up to the last bio, then stays (this loop runs for every completion with a reader).
    let mut gap = gaps.at(first);
    for i in first..pages {
        now += gap;
        if i + 1 < gaps.n {
            gap -= gaps.walk;
        }
        debug_assert_eq!(gap, gaps.at(i + 1));
        if reader_at <= now {
            // The reader sleeps on this page: ending it wakes the reader.
            now += TTWU_REMOTE_NS;
            woken += 1;
            reader_at = now + READER_RETURN_NS;
        } else {
            reader_at += PAGE_COPY_NS;
            // The reader is behind, and from here pages end at least as fast as it copies
            // them: it stays behind (no more waiters), so the rest need not be counted.
            if i + 1 < pages && gap <= PAGE_COPY_NS {
                break;
            }
        }
    }
    woken
}

/// Slots of `PageWakeupMemo`.
const PAGE_WAKEUP_MEMO_SLOTS: usize = 256;

/// `page_wakeups`' counts, remembered by the request's shape (where the reader sleeps, its
/// pages, its gaps). The count is a pure function of that shape, and a run's completions
/// repeat a few dozen shapes (128 KiB clones of 32 bios, the reader asleep on one of their
/// pages), so the page loop runs once a shape instead of once a completion. Direct-mapped
/// and of fixed size: a shape whose slot holds another is counted afresh and takes the slot.
#[derive(Clone, Debug)]
pub(crate) struct PageWakeupMemo {
    /// (shape, gaps, count): `shape` packs `first`, `pages` and `n`, `gaps` packs `base` and
    /// `walk`; a zero shape is an empty slot (a request has at least one page).
    slots: Box<[(u64, u64, u64)]>,
}

impl Default for PageWakeupMemo {
    fn default() -> Self {
        PageWakeupMemo { slots: vec![(0, 0, 0); PAGE_WAKEUP_MEMO_SLOTS].into_boxed_slice() }
    }
}

impl PageWakeupMemo {
    /// `page_wakeups(first, pages, gaps)`, from the slot of its shape when that holds it.
    pub(crate) fn get(&mut self, first: u64, pages: u64, gaps: PageGaps) -> u64 {
        const F: u64 = 1 << 21;
        if first >= F || pages >= F || gaps.n >= F || gaps.base >= 1 << 32 || gaps.walk >= 1 << 32 {
            return page_wakeups(first, pages, gaps);
        }
        let shape = first | pages << 21 | gaps.n << 42;
        let g = gaps.base | gaps.walk << 32;
        let i = (shape ^ g.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
        let slot = &mut self.slots[i as usize];
        if slot.0 == shape && slot.1 == g {
            debug_assert_eq!(slot.2, page_wakeups(first, pages, gaps));
            return slot.2;
        }
        let woken = page_wakeups(first, pages, gaps);
        *slot = (shape, g, woken);
        woken
    }
}

#[cfg(test)]
mod tests {
    use super::{page_wakeups, PageGaps};
    use crate::calib::*;

    #[test]
    fn a_page_with_a_waiter_costs_a_wakeup_and_one_without_does_not() {
        // Pages that end slower than the reader copies them: it waits on every one, from the
        // page it sleeps on.
        let slow = PageGaps { base: READER_RETURN_NS + 1, walk: 0, n: 1 };
        assert_eq!(page_wakeups(0, 128, slow), 128);
        assert_eq!(page_wakeups(100, 128, slow), 28);
        // Pages ending back to back (the fix: the original updated once): only the first has
        // a waiter; the reader comes back to pages already up to date.
        let back_to_back = PageGaps { base: SOFTIRQ_BIO_NS, walk: 0, n: 1 };
        assert_eq!(page_wakeups(0, 128, back_to_back), 1);
        // No page left behind the reader: no wakeup.
        assert_eq!(page_wakeups(128, 128, back_to_back), 0);
        // The 2.6.32 recount: early pages end slowly (many bios left to walk), late ones fast,
        // so the reader chases the first pages and falls behind near the end.
        let walk = |n: u64| PageGaps { base: 2 * SOFTIRQ_BIO_NS, walk: SEGMENT_WALK_NS, n };
        let (long, short) = (page_wakeups(0, 128, walk(128)), page_wakeups(0, 32, walk(32)));
        assert!(long > 64 && long < 128, "{long}");
        assert!(short * 4 < long, "{short} of 32 against {long} of 128");
    }

    #[test]
    fn the_memo_answers_what_the_count_does_for_every_shape_even_when_slots_collide() {
        let mut memo = super::PageWakeupMemo::default();
        // Three passes over more shapes than slots: hits, misses and evictions all happen.
        for _ in 0..3 {
            for pages in [1u64, 8, 32, 33, 128] {
                for n in [1, pages / 2 + 1, pages] {
                    for gaps in
                        [PageGaps { base: SOFTIRQ_BIO_NS, walk: 0, n }, PageGaps { base: 2 * SOFTIRQ_BIO_NS, walk: SEGMENT_WALK_NS, n }]
                    {
                        for first in 0..pages {
                            assert_eq!(memo.get(first, pages, gaps), page_wakeups(first, pages, gaps), "{first} of {pages}, {gaps:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn stopping_once_the_reader_stays_behind_counts_what_every_page_counts() {
        // The count without the early stop: every page looked at.
        let every_page = |first: u64, pages: u64, gap: &dyn Fn(u64) -> u64| {
            let (mut now, mut reader_at, mut woken) = (0u64, 0u64, 0u64);
            for i in first..pages {
                now += gap(i);
                if reader_at <= now {
                    now += TTWU_REMOTE_NS;
                    woken += 1;
                    reader_at = now + READER_RETURN_NS;
                } else {
                    reader_at += PAGE_COPY_NS;
                }
            }
            woken
        };
        let mut checked = 0;
        for pages in [1u64, 2, 31, 32, 127, 128] {
            for walk_ns in [0, 3, 15, 70, 300, 2_000] {
                for base_ns in [0, SOFTIRQ_BIO_NS, 2 * SOFTIRQ_BIO_NS, PAGE_COPY_NS, PAGE_COPY_NS + 1, READER_RETURN_NS + 1] {
                    // As many bios as pages, fewer (bios of several pages), or more.
                    for n in [pages, pages.div_ceil(4), pages + 3] {
                        let gaps = PageGaps { base: base_ns, walk: walk_ns, n };
                        let gap = move |i: u64| base_ns + walk_ns * (n - 1 - i.min(n - 1));
                        for first in 0..=pages {
                            assert_eq!(
                                page_wakeups(first, pages, gaps),
                                every_page(first, pages, &gap),
                                "{pages} pages of {n} bios from {first}, {base_ns} + {walk_ns} ns"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 3 * 36 * (2 + 3 + 32 + 33 + 128 + 129));
    }
}
