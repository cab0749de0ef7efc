//! `block/blk-merge.c`: a bio joins a waiting request at its back or front, and a run of
//! readahead page bios is cut where one-by-one submission would part it.

use crate::calib::{BIO_ALLOC_SUBMIT_NS, ELV_MERGE_NS};
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;

impl Sim {
    /// The first `n` bios of `bio_id` (the rest are submitted next) merge into `rq`: at its
    /// back (M), or, one bio, at its front (F).
    pub(crate) fn merge_bios(&mut self, rq: ReqId, bio_id: BioId, n: u32, front: bool, tid: ThreadId) {
        self.split_run(bio_id, n, tid);
        // The run's other bios are submitted and merged here, each as one by one would be
        // (its first was charged by `submit_bios`): charged before the merge's trace, so that
        // every stamp after it (a request's G, diskstats' start) is one-by-one's.
        self.charge((BIO_ALLOC_SUBMIT_NS + ELV_MERGE_NS) * (n.max(1) as u64 - 1));
        // Each of them looks for its merge under the queue lock, as `submit_bios` takes it for
        // a bio submitted alone: the run's work holds the lock as often as one by one's does.
        if n > 1 {
            let dev = self.bios.get(bio_id.0).dev;
            self.spin_lock_queue_times(dev, ELV_MERGE_NS, n as u64 - 1);
        }
        self.merge(rq, bio_id, front);
        let b = *self.bios.get(bio_id.0);
        self.emit(b.dev, if front { Action::F } else { Action::M }, b.write, b.sector, b.bytes, tid, bio_id.0, rq.0);
    }

    /// A bio (or a run: each of its bios counts as a merge, as iostat's rrqm/s and wrqm/s
    /// count them) joins `rq` at the back or the front. A request on the plug is not in the
    /// elevator yet.
    pub(crate) fn merge(&mut self, rq: ReqId, bio_id: BioId, front: bool) {
        let bio = *self.bios.get(bio_id.0);
        let on_plug = self.blk.plug.contains(&rq);
        let r = self.reqs.get_mut(rq.0);
        let (old_start, old_end) = (r.sector, r.sector + r.bytes / 512);
        if front {
            r.sector = bio.sector;
            r.bios.insert(0, bio_id);
        } else {
            r.bios.push(bio_id);
        }
        r.bytes += bio.bytes as u64;
        r.nr_bios += bio.pages;
        let (new_start, new_end) = (r.sector, r.sector + r.bytes / 512);
        let write = r.write;
        let dev = r.dev.idx();
        if !on_plug {
            self.devs[dev].queue.elevator.remerged(rq, write, (old_start, old_end), (new_start, new_end));
        }
        self.devs[dev].stats.merges[write as usize] += bio.pages as u64;
    }

    /// How many of run `bio`'s bios would back-merge into `rq` one after another: while `rq`
    /// has room, and until one of them would meet another candidate first. Submitted one by
    /// one, bio k goes to a newer plugged request (from `plug_from` on) that it extends at
    /// either end, or, when `rq` is in the elevator, to any plugged request that way or to
    /// another waiting request that ends where it starts (only overlapping I/O does that).
    pub(crate) fn run_fit(&self, bio_id: BioId, rq: ReqId, plug_from: usize, in_elevator: bool, max: u64) -> u32 {
        let bio = self.bios.get(bio_id.0);
        let r = self.reqs.get(rq.0);
        let page = bio.page_bytes() as u64;
        let ps = page / 512;
        let mut fit = (bio.pages as u64).min((max - r.bytes) / page);
        if fit <= 1 {
            return fit as u32;
        }
        // Bio k (0-based) starts at sector + k·ps; which k would another request take?
        let k_at = |start: u64| (start > bio.sector && (start - bio.sector) % ps == 0).then(|| (start - bio.sector) / ps);
        let plug = if in_elevator { &self.blk.plug[..] } else { &self.blk.plug[plug_from..] };
        for &other in plug {
            let y = self.reqs.get(other.0);
            if other == rq || y.dev != bio.dev || y.write != bio.write || y.bytes + page > max {
                continue;
            }
            // It ends where bio k starts (back), or starts where bio k ends (front).
            let back = k_at(y.sector + y.bytes / 512);
            let front = k_at(y.sector).and_then(|k| k.checked_sub(1));
            for k in [back, front].into_iter().flatten() {
                if k >= 1 && k < fit {
                    fit = k;
                }
            }
        }
        if in_elevator {
            let lo = bio.sector + ps;
            let hi = bio.sector + (fit - 1) * ps;
            if let Some(start) = self.devs[bio.dev].queue.elevator.other_end_in(bio.write, lo, hi, rq, ps, bio.sector) {
                fit = fit.min(k_at(start).expect("aligned"));
            }
        }
        fit as u32
    }

    /// Splits a run after its first `keep` bios; the rest becomes a run of its own, first in
    /// the submitter's pending list (where one-by-one submission would take it up next).
    pub(crate) fn split_run(&mut self, bio_id: BioId, keep: u32, tid: ThreadId) {
        let b = self.bios.get_mut(bio_id.0);
        if b.pages <= keep {
            return;
        }
        let page = b.page_bytes();
        let mut rest = *b;
        b.pages = keep;
        b.bytes = keep * page;
        rest.pages -= keep;
        rest.bytes = rest.pages * page;
        rest.sector += (keep * page / 512) as u64;
        rest.charge_first = true;
        let id = BioId(self.bios.insert(rest));
        self.threads[tid].pending.push_front(id);
    }
}
