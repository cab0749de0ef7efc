//! `drivers/md/dm-mpath.c` and its path selector (`dm-round-robin.c`): which path a request
//! goes to; and multipathd's path checker (userspace, multipath-tools `check_path()`), the
//! I/O it sends down each path now and then.

use crate::block::{DevKind, Request};
use crate::calib::MULTIPATH_MAX_CHECKINT_FACTOR;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::NS_PER_S;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;

impl Sim {
    /// The path selector: `failover` uses the first path of its only group; `multibus` takes
    /// the paths in turn, `rr_min_io_rq` requests each (1, multipath-tools' default for
    /// request-based dm), skipping busy ones when `skip_busy`. None: every path is busy.
    pub(crate) fn select_path(&mut self, dm: DevId, skip_busy: bool) -> Option<DevId> {
        let DevKind::DmMpath { paths } = &self.devs[dm].kind else { unreachable!("not a dm device") };
        let n = paths.len();
        let (start, tries) = match self.cfg.scenario.dm.path_grouping {
            crate::scenario::PathPolicy::Failover => (0, 1),
            crate::scenario::PathPolicy::Multibus => (self.rr_next[dm.idx()] as usize, n),
        };
        let i = (0..tries).map(|k| (start + k) % n).find(|&i| !skip_busy || !self.lld_busy(paths[i]))?;
        let pick = paths[i];
        self.rr_next[dm.idx()] = ((i + 1) % n) as u16;
        Some(pick)
    }

    /// multipathd's checker on path `dev` (the `directio` checker: one 4 KiB O_DIRECT read),
    /// from a CPU drawn from the seed (multipathd's checker thread runs wherever the scheduler
    /// puts it). The read takes a tag of that CPU's hardware queue and runs that queue, as any
    /// submitter does: if that is a queue with parked requests, they go now (its role in
    /// ending the 2015 stalls is INFERRED). The next check comes after the interval, which
    /// doubles after each good check up to `MAX_CHECKINT`. With no free tag, the checker
    /// would sleep in `bt_get` after running the queue; it is not modelled past that run.
    pub(crate) fn path_check(&mut self, dev: DevId) {
        let now = self.now();
        let poll = self.cfg.scenario.dm.polling_interval as u64 * NS_PER_S;
        let int = self.path_checkint[dev.idx()];
        self.path_checkint[dev.idx()] = (2 * int).min(MULTIPATH_MAX_CHECKINT_FACTOR * poll);
        self.events.schedule(now + int, Event::PathCheck { dev });
        let cores = self.cores.len() as u64;
        let cpu = CoreId(self.multipathd_rng.below(cores) as u16);
        let tid = self.multipathd.expect("multipathd runs when paths are checked");
        let saved = (self.cur_cpu, self.cur_thread);
        self.cur_cpu = cpu.0;
        self.cur_thread = Some(tid);
        self.threads[tid].home = cpu;
        let h = self.mq(dev).hctx_of(cpu);
        let mut tag = self.mq_mut(dev).hctx[h as usize].tags.get();
        if tag.is_none() {
            self.blk_mq_run_hw_queue(dev, h, false);
            tag = self.mq_mut(dev).hctx[h as usize].tags.get();
        }
        if let Some(tag) = tag {
            let at = self.stamp_now(dev);
            let rq = ReqId(self.reqs.insert(Request {
                dev,
                write: false,
                sector: 0,
                bytes: 4096,
                bios: Vec::new(),
                nr_bios: 0,
                alloc_at: at,
                tag: Some(tag),
                hctx: h,
                submitter: tid,
                sync: true,
                clone_of: None,
                nr_clone_bios: 0,
                host_freed: false,
                // multipathd's read is made on the CPU it runs on (req->cpu).
                cpu: Some(cpu),
            }));
            self.devs[dev].stats.start(at);
            self.totals.path_check_bytes += 4096;
            self.emit(dev, Action::G, false, 0, 4096, tid, rq.0, 0);
            self.blk_mq_insert(dev, rq);
            self.emit(dev, Action::I, false, 0, 4096, tid, rq.0, 0);
            // blk_mq_insert_request(rq, at_head, true, false): run from this CPU.
            self.blk_mq_run_hw_queue(dev, h, false);
        }
        (self.cur_cpu, self.cur_thread) = saved;
    }
}
