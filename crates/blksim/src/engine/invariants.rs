//! What must hold between any two events (`Sim::check_invariants`, run by the tests after
//! every step): pools within their limits, every bio and clone accounted for, the page cache
//! and diskstats consistent.

use crate::engine::ids::*;
use crate::engine::Sim;
use crate::kernel::sched::ThreadState;

impl Sim {
    /// Invariants that must hold between any two events. Checked by tests after every step.
    pub fn check_invariants(&self) {
        self.check_threads();
        self.check_queues();
        for h in &self.hosts {
            assert!(h.busy() <= h.busy_max(), "host_busy over can_queue (over the set's tags on 5.x)");
        }
        self.check_tag_sets();
        for d in &self.disks {
            d.check_invariants();
        }
        let bios_live: u64 = self.bios.iter().map(|b| b.pages as u64).sum();
        assert_eq!(self.acct.totals.bios_submitted - self.acct.totals.bios_completed, bios_live, "bio accounting");
        assert!(self.acct.totals.clones.completed <= self.acct.totals.clones.made, "more dm clones completed than made");
        assert!(self.acct.totals.clones.bios_completed <= self.acct.totals.clones.bios_made, "more clone bios completed than made");
        for c in &self.cores {
            assert!(!c.softirq_deferred || !c.softirq.is_empty() || c.busy, "softirq deferred to ksoftirqd with nothing pending");
        }
        self.check_readahead();
        let dirty: u64 = self.jobs.iter().map(|j| j.pages.dirty_bytes).sum();
        let writeback: u64 = self.jobs.iter().map(|j| j.pages.writeback_bytes).sum();
        assert_eq!((dirty, writeback), (self.vm.dirty_total, self.vm.writeback_total), "page cache accounting");

        // Request-based devices count requests in flight; bio-based md counts bios.
        let in_flight: u64 = self.devs.iter().filter(|d| !d.is_bio_based()).map(|d| d.stats.in_flight).sum();
        for r in &self.md.raid5 {
            assert!(r.active <= r.max_stripes, "md: active stripes over stripe_cache_size");
            assert_eq!(r.active as usize + r.free_heads(), r.max_stripes as usize, "md: stripe heads lost");
        }
        assert_eq!(in_flight, self.reqs.live() as u64, "diskstats in_flight vs live requests");
    }

    /// A running thread runs on one core: its own, with its context installed there; a
    /// waiting thread waits on its own core's run queue only.
    fn check_threads(&self) {
        for (i, t) in self.threads.iter().enumerate() {
            let on: Vec<usize> = (0..self.cores.len()).filter(|&c| self.cores[c].current == Some(ThreadId(i as u32))).collect();
            assert!(on.len() <= 1, "{} is the current thread of cores {on:?}", t.name);
            if t.state == ThreadState::Running {
                assert_eq!(on, [t.home.idx()], "{} runs, but not as its core's current thread", t.name);
            }
            // A waiting thread waits on its own core's run queue only (the load balancer moves
            // it whole: `pull_task`).
            let queued: Vec<usize> = (0..self.cores.len())
                .flat_map(|c| self.cores[c].runq.iter().filter(move |&&q| q == ThreadId(i as u32)).map(move |_| c))
                .collect();
            if t.state == ThreadState::Runnable {
                assert_eq!(queued, [t.home.idx()], "{} is runnable, but queued on cores {queued:?}", t.name);
            } else {
                assert!(queued.is_empty(), "{} is not runnable, but queued on cores {queued:?}", t.name);
            }
        }
    }

    /// The request pools, tags and blk-mq hardware queues within their limits.
    fn check_queues(&self) {
        for i in 0..self.devs.len() {
            self.check_mq_sched(DevId(i as _));
        }
        for (di, d) in self.devs.iter().enumerate() {
            let q = &d.queue;
            for dir in 0..2 {
                assert!(
                    q.pool_count[dir] <= q.pool_max(self.threads.len()) || q.draining,
                    "{}: {} requests allocated, nr_requests {}",
                    d.name,
                    q.pool_count[dir],
                    q.nr_requests
                );
            }
            assert!(q.tags.busy() <= q.tags.depth(), "{}: tags over queue_depth", d.name);
            if let Some(m) = &q.mq {
                // blk-mq: the LUN's admission across its hardware queues, each queue's tags, and
                // every request of a hardware queue in one place only.
                assert!(m.device_busy <= m.device_depth, "{}: device_busy over queue_depth", d.name);
                for (i, h) in m.hctx.iter().enumerate() {
                    assert!(
                        h.tags_held <= self.hctx_tags(crate::engine::ids::DevId(di as u16), i as u16).map.depth(),
                        "{} hctx {i}: tags over depth",
                        d.name
                    );
                    assert!(h.splicing.len() <= self.cores.len(), "{} hctx {i}: more BUSY runs than CPUs", d.name);
                    let waiting = h.queued.len() + h.dispatch.len() + h.splicing.iter().map(|(_, l)| l.len()).sum::<usize>();
                    let tagged = h.queued.iter().chain(&h.dispatch).filter(|r| self.reqs.get(r.0).tag.is_some()).count();
                    assert!(tagged <= h.tags_held as usize, "{} hctx {i}: waiting requests without their tags", d.name);
                    assert!(waiting <= self.reqs.live(), "{} hctx {i}: more waiting than live requests", d.name);
                }
            }
        }
    }

    /// A readahead window whose pages are not all read yet belongs to a live read of its
    /// job, its own.
    fn check_readahead(&self) {
        // A readahead window whose pages are not all read yet belongs to a live read of its
        // job, its own: ids are reused once a read ends, and a window done long ago keeps its
        // id (soak long, raid5-chunk at 7 simulated minutes: a new read's bios were taken for
        // an old window's).
        for (j, job) in self.jobs.iter().enumerate() {
            let pending: Vec<IoId> = job.read.ra.iter().filter(|w| !w.done).map(|w| w.io).collect();
            for (k, io) in pending.iter().enumerate() {
                assert!(
                    self.ios.is_live(io.0) && matches!(self.ios.get(io.0).owner, crate::fio::job::IoOwner::Readahead(o) if o.idx() == j),
                    "job {j}: readahead window on {io:?}, which is not one of its reads in flight"
                );
                assert!(!pending[..k].contains(io), "job {j}: two readahead windows on {io:?}");
            }
        }
    }

    pub fn bios_live(&self) -> usize {
        self.bios.iter().map(|b| b.pages as usize).sum()
    }
}
