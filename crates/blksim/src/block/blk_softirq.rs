//! `block/blk-softirq.c`: the completion softirq's work for one request (`blk_done_softirq` →
//! the driver's `softirq_done_fn`), and what it costs.

use crate::calib::*;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::sched::Step;
use crate::tools::trace::Action;

impl Sim {
    /// The CPU time of completing one request in softirq context.
    /// - A plain request: the interrupt, the request, and `bio_endio` per bio.
    /// - A request-based dm clone: per clone bio, `end_clone_bio` ends it and calls
    ///   `blk_update_request` on the original, which ends the original's bio; with
    ///   `dm.partial_completion` the original is still unfinished after each of those calls, so
    ///   `blk_recalc_rq_segments` walks every bio still on it: N-1, N-2, … 0 visits, N(N-1)/2
    ///   in all. Then the original completes (`dm_softirq_done`, `dm_end_request`).
    pub(crate) fn softirq_cost(&self, rq: ReqId) -> u64 {
        let r = self.reqs.get(rq.0);
        match r.clone_of {
            None => HARDIRQ_NS + SOFTIRQ_REQUEST_NS + SOFTIRQ_BIO_NS * r.nr_bios as u64,
            Some(_) => {
                let n = r.nr_clone_bios as u64;
                let walk = if self.cfg.scenario.dm.partial_completion { SEGMENT_WALK_NS * n * n.saturating_sub(1) / 2 } else { 0 };
                HARDIRQ_NS + 2 * SOFTIRQ_REQUEST_NS + 2 * SOFTIRQ_BIO_NS * n + walk
            }
        }
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
        self.emit(dev, Action::C, r.write, r.sector, r.bytes as u32, ctx, rq.0, 0);
        let tag = r.tag.expect("completed request had a tag");
        if let Some(mq) = self.devs[di].queue.mq.as_mut() {
            // Its own hardware queue's tag map; bt_clear_tag charges the free to one of that
            // map's wait queues, which may wake its sleepers.
            mq.device_busy -= 1;
            let q = &mut mq.hctx[r.hctx as usize];
            q.tags.put(tag);
            for w in q.wait.tag_freed() {
                self.wake(w, Step::RetryTag);
            }
        } else {
            self.devs[di].queue.tags.put(tag);
        }
        if !r.host_freed {
            let (_, h) = self.devs[di].sd();
            self.hosts[h.idx()].put();
        }
        self.devs[di].stats.done(now, r.write, r.bytes / 512, now - r.alloc_at);
        self.totals.requests_completed += 1;
        let owner = Self::owner_of(&r);
        self.devs[di].queue.elevator.completed(owner, now);
        if let Some(orig) = r.clone_of {
            // A dm clone: its clone bios end (end_clone_bio), and with them the original.
            // A clone came from dm's mempool, not from this queue's request pool.
            self.totals.clones_completed += 1;
            self.totals.clone_bios_completed += r.nr_clone_bios as u64;
            self.dm_end_request(orig);
            self.scsi_run_queue(dev);
            return;
        }
        for &bio in &r.bios {
            self.end_bio(bio);
        }
        self.recycle_bio_list(r.bios);
        if self.devs[di].queue.mq.is_none() {
            self.freed_request(dev, r.write);
        }
        self.scsi_run_queue(dev);
    }
}
