//! `drivers/md/dm-mpath.c` and its path selector (`dm-round-robin.c`): which path a request
//! goes to (request-based, 2.6.31+) or a bio (bio-based, up to 2.6.30: `multipath_map`); and
//! multipathd's path checker (userspace, multipath-tools `check_path()`), the I/O it sends
//! down each path now and then.

use crate::block::{DevKind, Request};
use crate::calib::{BIO_CLONE_NS, MULTIPATH_MAX_CHECKINT_FACTOR};
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::NS_PER_S;
use crate::engine::Sim;
use crate::kernel::trace::blktrace::Action;

/// dm-multipath: per device the round-robin selector's next path, bio-based dm's current path
/// and the bios left on it (`m->current_pgpath`, `m->repeat_count`), and multipathd
/// (`dm.polling_interval` > 0 over blk-mq paths): its thread, the stream its checks' timing is
/// drawn from, and per path the checker's current interval (ns).
#[derive(Clone, Debug)]
pub(crate) struct Multipath {
    pub rr_next: IdVec<DevId, u16>,
    pub current: IdVec<DevId, Option<DevId>>,
    pub repeat_count: IdVec<DevId, u32>,
    pub multipathd: Option<ThreadId>,
    pub rng: crate::engine::rng::Stream,
    pub checkint: IdVec<DevId, u64>,
}

impl Sim {
    /// The path selector: `failover` uses the first path of its only group; `multibus` takes
    /// the paths in turn, `rr_min_io_rq` requests each (1, multipath-tools' default for
    /// request-based dm), skipping busy ones when `skip_busy`. None: every path is busy.
    pub(crate) fn select_path(&mut self, dm: DevId, skip_busy: bool) -> Option<DevId> {
        let DevKind::DmMpath { paths, .. } = &self.devs[dm].kind else { unreachable!("not a dm device") };
        let n = paths.len();
        let (start, tries) = match self.cfg.scenario.dm.path_grouping {
            crate::scenario::PathPolicy::Failover => (0, 1),
            crate::scenario::PathPolicy::Multibus => (self.mpath.rr_next[dm] as usize, n),
        };
        let i = (0..tries).map(|k| (start + k) % n).find(|&i| !skip_busy || !self.lld_busy(paths[i]))?;
        let pick = paths[i];
        self.mpath.rr_next[dm] = ((i + 1) % n) as u16;
        Some(pick)
    }

    /// `multipath_map` → `map_io` (bio-based dm, up to 2.6.30): the path for the next bio of
    /// `dm`, in the submitter's context. A path is chosen when there is none yet or the repeat
    /// count runs out (`m->repeat_count && --m->repeat_count == 0`): failover's priority group
    /// has one path, so the first path again; multibus's round-robin selector takes the next
    /// path (`rr_select_path`) with the table's repeat count, `dm.rr_min_io` bios. The bio's
    /// clone then goes to that path's own queue (`__map_bio` → `generic_make_request`), where
    /// it merges only with what went down the same path.
    pub(crate) fn multipath_map(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(), crate::kernel::sched::Wait> {
        let dm = self.bios.get(bio_id.0).dev;
        let repeat = &mut self.mpath.repeat_count[dm];
        let ran_out = *repeat > 0 && {
            *repeat -= 1;
            *repeat == 0
        };
        let path = match self.mpath.current[dm] {
            Some(p) if !ran_out => p,
            _ => self.choose_pgpath(dm),
        };
        // clone_bio: one bio from dm's bioset for each bio mapped.
        self.charge(BIO_CLONE_NS);
        let sector = self.bios.get(bio_id.0).sector;
        self.dm_map_bio(bio_id, path, sector, tid)
    }

    /// `__choose_pgpath` with the round-robin selector: the path and its repeat count.
    fn choose_pgpath(&mut self, dm: DevId) -> DevId {
        let DevKind::DmMpath { paths, .. } = &self.devs[dm].kind else { unreachable!("not a dm device") };
        let i = match self.cfg.scenario.dm.path_grouping {
            crate::scenario::PathPolicy::Failover => 0,
            crate::scenario::PathPolicy::Multibus => self.mpath.rr_next[dm] as usize % paths.len(),
        };
        let pick = paths[i];
        self.mpath.rr_next[dm] = ((i + 1) % paths.len()) as u16;
        self.mpath.current[dm] = Some(pick);
        self.mpath.repeat_count[dm] = self.cfg.scenario.dm.rr_min_io;
        pick
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
        let int = self.mpath.checkint[dev];
        self.mpath.checkint[dev] = (2 * int).min(MULTIPATH_MAX_CHECKINT_FACTOR * poll);
        self.events.schedule(now + int, Event::PathCheck { dev });
        let cores = self.cores.len() as u64;
        let cpu = CoreId(self.mpath.rng.below(cores) as u16);
        let tid = self.mpath.multipathd.expect("multipathd runs when paths are checked");
        let saved = (self.current.cpu, self.current.thread);
        self.current.cpu = cpu.0;
        self.current.thread = Some(tid);
        self.threads[tid].home = cpu;
        let h = self.mq(dev).hctx_of(cpu);
        let mut tag = self.blk_mq_alloc_driver_tag(dev, h);
        if tag.is_none() {
            self.blk_mq_run_hw_queue(dev, h, false);
            tag = self.blk_mq_alloc_driver_tag(dev, h);
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
                ioprio: self.threads[tid.0 as usize].ioprio,
                clone_of: None,
                nr_clone_bios: 0,
                host_freed: false,
                // multipathd's read is made on the CPU it runs on (req->cpu).
                cpu: Some(cpu),
                fua: false,
            }));
            self.devs[dev].stats.start(at);
            self.acct.totals.path_check_bytes += 4096;
            self.emit(dev, Action::G, false, 0, 4096, tid, rq.0, 0);
            self.blk_mq_insert(dev, rq);
            self.emit(dev, Action::I, false, 0, 4096, tid, rq.0, 0);
            // blk_mq_insert_request(rq, at_head, true, false): run from this CPU.
            self.blk_mq_run_hw_queue(dev, h, false);
        }
        (self.current.cpu, self.current.thread) = saved;
    }
}

impl Multipath {
    pub(crate) fn new(seed: u64) -> Multipath {
        Multipath {
            rr_next: IdVec::default(),
            current: IdVec::default(),
            repeat_count: IdVec::default(),
            multipathd: None,
            rng: crate::engine::rng::Stream::new(seed, crate::engine::rng::STREAM_JOB - 2),
            checkint: IdVec::default(),
        }
    }
}

impl Sim {
    /// The path selectors, and multipathd, which checks each blk-mq path of a dm-multipath
    /// device (`dm.polling_interval` > 0). Returns the paths it checks.
    pub(crate) fn multipathd_init(&mut self) -> Vec<DevId> {
        let n = self.devs.len();
        self.mpath.rr_next = vec![0; n].into();
        self.mpath.current = vec![None; n].into();
        self.mpath.repeat_count = vec![0; n].into();
        self.mpath.checkint = vec![0; n].into();
        if self.cfg.scenario.dm.polling_interval == 0 {
            return Vec::new();
        }
        let checked: Vec<DevId> = self
            .devs
            .iter()
            .filter_map(|d| match &d.kind {
                DevKind::DmMpath { paths, .. } => Some(paths.clone()),
                _ => None,
            })
            .flatten()
            .filter(|p| self.devs[*p].queue.mq.is_some())
            .collect();
        if !checked.is_empty() {
            let kind = crate::kernel::sched::ThreadKind::Multipathd;
            self.threads.push(crate::kernel::sched::Thread::kernel("multipathd".into(), kind, CoreId(0), 900));
            self.mpath.multipathd = Some(ThreadId(self.threads.len() as u32 - 1));
        }
        checked
    }

    /// multipathd's first check of each path comes within one polling interval.
    pub(crate) fn multipathd_start(&mut self, checked: &[DevId]) {
        let poll = self.cfg.scenario.dm.polling_interval as u64 * NS_PER_S;
        for &p in checked {
            self.mpath.checkint[p] = 2 * poll;
            self.events.schedule(crate::engine::time::SimTime(self.mpath.rng.below(poll)), Event::PathCheck { dev: p });
        }
    }
}
