//! `drivers/md/dm.c`, request-based (2.6.31+): `dm_request_fn`, clones and their completion;
//! over blk-mq (4.0), the `kdmwork` thread's `map_tio_request`; and bio-based dm's `__map_bio`.

use crate::block::Request;
use crate::calib::{
    ADD_REQUEST_NS, BIO_CLONE_NS, DISPATCH_NS, DM_MAP_REQUEST_NS, DM_REQUEST_DELAY_NS, GET_REQUEST_NS, QUEUE_LOCK_FINISH_NS,
    QUEUE_LOCK_START_NS,
};
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, ThreadKind, Wait};
use crate::kernel::trace::blktrace::Action;

/// Request-based dm over blk-mq: the device's `kdmwork` thread and the requests queued to it.
#[derive(Clone, Debug)]
pub struct KdmWork {
    pub thread: ThreadId,
    pub queue: std::collections::VecDeque<ReqId>,
}

impl Sim {
    /// `dm_request_fn` (2.6.31+, cec47e3d): while the path is not busy, take the next request
    /// off the dm elevator, clone it (one clone bio per original bio) and insert the clone into
    /// the path's queue (`blk_insert_cloned_request`), then run that queue. A busy path leaves
    /// the requests in the dm elevator, where later bios still merge into them; a clone's
    /// completion runs the dm queue again.
    pub(crate) fn dm_request_fn(&mut self, dev: DevId) {
        let now = self.now();
        let di = dev.idx();
        if self.devs[dev].kdm.is_some() {
            // Over blk-mq (4.0): no busy check (blk-mq has no lld_busy); every request is
            // handed to the device's kdmwork thread, which maps it.
            while let Some(rq) = self.devs[di].queue.elevator.next(now) {
                self.devs[di].queue.elevator.dispatched(rq);
                let r = self.reqs.get(rq.0);
                let (write, sector, bytes) = (r.write, r.sector, r.bytes);
                let ctx = self.context();
                self.charge(DISPATCH_NS);
                // dm_request_fn runs under dm's queue_lock throughout (4.0): blk_peek_request
                // (dm_prep_fn's prep_tio, no clone over blk-mq), dm_start_request and the
                // queue_kthread_work.
                self.spin_lock_queue(dev, QUEUE_LOCK_START_NS);
                self.emit(dev, Action::D, write, sector, bytes as u32, ctx, rq.0, 0);
                self.devs[dev].kdm.as_mut().expect("checked").queue.push_back(rq);
            }
            // delay_and_out: the queue is empty, so its next run is armed HZ/10 from now.
            self.delay_queue_ns(dev, DM_REQUEST_DELAY_NS);
            let kdm = self.devs[dev].kdm.as_ref().expect("checked");
            let worker = kdm.thread;
            if !kdm.queue.is_empty() && self.threads[worker].is_idle_kthread() {
                self.wake(worker, Step::KdmWork);
            }
            return;
        }
        while let Some(rq) = self.devs[di].queue.elevator.next(now) {
            // multipath_busy: busy only when every usable path is; then the selector's choice.
            let Some(path) = self.select_path(dev, true) else { break };
            self.devs[di].queue.elevator.dispatched(rq);
            let r = self.reqs.get(rq.0);
            let (write, sector, bytes, nbios) = (r.write, r.sector, r.bytes, r.nr_bios);
            let ctx = self.context();
            self.charge(DISPATCH_NS);
            // Under dm's queue_lock: blk_peek_request, whose dm_prep_fn clones the request and
            // its bios (clone_rq, GFP_ATOMIC: the clone's BIO_CLONE_NS per bio), and
            // dm_start_request; dm_request_fn drops the lock for map_request.
            self.spin_lock_queue(dev, QUEUE_LOCK_START_NS + BIO_CLONE_NS * nbios as u64);
            self.emit(dev, Action::D, write, sector, bytes as u32, ctx, rq.0, 0);
            self.insert_clone(rq, path, None, 0, ctx);
            self.run_queue(path);
        }
    }

    /// `blk_rq_prep_clone` + `blk_insert_cloned_request`: a clone of the dm request `rq` (one
    /// clone bio per bio) goes into `path`'s queue, with a tag already if blk-mq gave it one.
    /// `by` is the thread doing it, for the trace.
    pub(crate) fn insert_clone(&mut self, rq: ReqId, path: DevId, tag: Option<u16>, hctx: u16, by: ThreadId) -> ReqId {
        let now = self.now();
        let r = self.reqs.get(rq.0);
        let (write, sector, bytes, submitter, nbios, sync, ioprio) = (r.write, r.sector, r.bytes, r.submitter, r.nr_bios, r.sync, r.ioprio);
        // `__blk_rq_prep_clone` (2.6.31+): `dst->cpu = src->cpu`, so the clone completes where
        // rq_affinity places the original's submitter. Over blk-mq (4.0) the completion CPU is
        // the clone's software queue's, not this.
        let cpu = if self.devs[path].queue.mq.is_some() { None } else { r.cpu };
        let at = self.stamp_now(path);
        let clone = ReqId(self.reqs.insert(Request {
            dev: path,
            write,
            sector,
            bytes,
            bios: Vec::new(),
            nr_bios: 0,
            alloc_at: at,
            tag,
            hctx,
            submitter,
            sync,
            ioprio,
            clone_of: Some(rq),
            nr_clone_bios: nbios,
            host_freed: false,
            cpu,
            fua: false,
        }));
        self.acct.totals.clones.made += 1;
        self.acct.totals.clones.bios_made += nbios as u64;
        self.devs[path].stats.start(at);
        let from = Some((self.reqs.get(rq.0).dev, sector));
        // blk_rq_prep_clone: a clone bio per bio.
        self.charge(BIO_CLONE_NS * nbios as u64);
        self.emit_from(path, Action::A, write, sector, bytes as u32, by, clone.0, rq.0, from);
        if self.devs[path].queue.mq.is_some() {
            self.blk_mq_insert(path, clone);
        } else {
            // blk_insert_cloned_request: the insert under the path's queue lock.
            self.spin_lock_queue(path, ADD_REQUEST_NS);
            let owner = self.owner(clone);
            self.devs[path].queue.elevator.add_nomerge(clone, write, sector, sector + bytes / 512, now, owner);
        }
        self.emit(path, Action::I, write, sector, bytes as u32, by, clone.0, 0);
        clone
    }

    /// The original request of a finished clone completes: its bios end, its slot goes back to
    /// the dm device's pool, and the dm queue runs again (`rq_completed` → `blk_run_queue`).
    pub(crate) fn dm_end_request(&mut self, rq: ReqId) {
        let now = self.now();
        let r = self.reqs.remove(rq.0);
        let dev = r.dev;
        let ctx = self.context();
        self.emit(dev, Action::C, r.write, r.sector, r.bytes as u32, ctx, rq.0, 0);
        // blk_end_request_all: the bios end unlocked, then blk_finish_request under dm's
        // queue_lock.
        self.spin_lock_queue(dev, QUEUE_LOCK_FINISH_NS);
        let at = self.stamp_now(dev);
        self.devs[dev].stats.done(at, r.write, r.bytes / 512, at - r.alloc_at);
        self.acct.totals.requests_completed += 1;
        let owner = Self::owner_of(&r);
        self.devs[dev].queue.elevator.completed(owner, now);
        for &bio in &r.bios {
            self.end_bio(bio);
        }
        self.recycle_bio_list(r.bios);
        self.freed_request(dev, r.write);
        self.run_queue(dev);
    }

    /// `map_tio_request` on the `kdmwork` thread: clone the next request onto the path, the way
    /// `dm.clone_alloc` says, and insert the clone (`blk_insert_cloned_request`, which runs the
    /// blk-mq queue asynchronously, through kblockd).
    /// - `sleep` (e5863d9a): `blk_get_request(GFP_KERNEL)` on the path, from the hardware queue
    ///   of the CPU kdmwork runs on (`bt_get`: run that queue, try again, sleep on its tag
    ///   map; woken, the same again from wherever it was woken). Every other dm request waits
    ///   behind it.
    /// - `mempool`: a clone from dm's own pool; the path's tag is taken at dispatch (over
    ///   blk-mq, in `scsi_queue_rq`).
    /// - `nowait` (the fix): `GFP_ATOMIC`; with no tag, `DM_MAPIO_REQUEUE`: the original goes
    ///   back to the front of the dm queue, run again by the next clone's completion.
    pub(crate) fn kdm_map(&mut self, tid: ThreadId) -> Next {
        use crate::scenario::CloneAlloc;
        let now = self.now();
        let ThreadKind::KdmWork(dm) = self.threads[tid].kind else { unreachable!("not kdmwork") };
        let Some(&rq) = self.devs[dm].kdm.as_ref().expect("kdmwork has a queue").queue.front() else { return Next::Idle };
        let path = self.select_path(dm, false).expect("a dm device has a path");
        // map_tio_request, then the clone's request from the path's hardware queue.
        self.charge(DM_MAP_REQUEST_NS + GET_REQUEST_NS);
        let (write, sector, bytes) = {
            let r = self.reqs.get(rq.0);
            (r.write, r.sector, r.bytes)
        };
        // kdmwork is unbound: the hardware queue is the one of the CPU it runs on now.
        let cpu = self.threads[tid].home;
        let h = self.mq(path).hctx_of(cpu);
        let tag = match self.cfg.scenario.dm.clone_alloc {
            CloneAlloc::Mempool => None,
            CloneAlloc::Nowait => match self.blk_mq_alloc_driver_tag(path, h) {
                Some(t) => Some(t),
                None => {
                    self.devs[dm].kdm.as_mut().expect("checked").queue.pop_front();
                    // dm_requeue_unmapped_request: blk_requeue_request under dm's queue_lock.
                    self.spin_lock_queue(dm, ADD_REQUEST_NS);
                    let owner = self.owner(rq);
                    self.devs[dm].queue.elevator.requeue(rq, write, sector, sector + bytes / 512, now, owner);
                    return self.kdm_next(dm);
                }
            },
            CloneAlloc::Sleep => match self.bt_get(path, h, tid) {
                Some(t) => Some(t),
                None => {
                    self.emit(path, Action::S, write, sector, bytes as u32, tid, rq.0, 0);
                    return Next::Sleep(Wait::Tag { dev: path });
                }
            },
        };
        self.devs[dm].kdm.as_mut().expect("checked").queue.pop_front();
        self.insert_clone(rq, path, tag, h, tid);
        // blk_mq_insert_request(rq, false, true, true): the run is asynchronous.
        self.blk_mq_run_hw_queue(path, h, true);
        self.kdm_next(dm)
    }

    pub(crate) fn kdm_next(&self, dm: DevId) -> Next {
        if self.devs[dm].kdm.as_ref().expect("kdmwork has a queue").queue.is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::KdmWork)
        }
    }
}

impl Sim {
    /// `__map_bio` (bio-based dm: dm-linear, and dm-multipath up to 2.6.30): the target mapped
    /// the bio to `lower` at `sector`; its clone goes there next, in this submitter's context
    /// (it may sleep there in `get_request_wait`). The bio counts in dm-N's diskstats from now.
    pub(crate) fn dm_map_bio(&mut self, bio_id: BioId, lower: DevId, sector: u64, tid: ThreadId) -> Result<(), Wait> {
        let bio = *self.bios.get(bio_id.0);
        let at = self.stamp_now(bio.dev);
        self.devs[bio.dev].stats.start(at);
        let b = self.bios.get_mut(bio_id.0);
        b.mapped = bio.bytes;
        b.started = at;
        let id = self.child_bio(bio_id, lower, sector, bio.bytes, tid, false, bio.sector);
        self.threads[tid].pending.push_front(id);
        Ok(())
    }
}

impl Sim {
    /// Request-based dm over blk-mq maps in one kthread per device (4.0: kdmwork-MAJ:MIN).
    pub(crate) fn dm_start_kdmwork(&mut self) {
        let mut kdm_cpu = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB - 3);
        for i in 0..self.devs.len() {
            let d = &self.devs[i];
            let over_mq =
                matches!(&d.kind, crate::block::DevKind::DmMpath { paths, bio_based: false } if self.devs[paths[0]].queue.mq.is_some());
            if !over_mq {
                continue;
            }
            let thread = ThreadId(self.threads.len() as u32);
            // Where the scheduler left the unbound kthread before the run (its history is not
            // modelled), drawn from the seed as multipathd's checker CPU is: when woken it
            // stays on that CPU while it is idle (select_idle_sibling).
            let home = CoreId(kdm_cpu.below(self.cores.len() as u64) as u16);
            let name = format!("kdmwork-{}:{}", d.major, d.minor);
            self.threads.push(crate::kernel::sched::Thread::kernel(name, ThreadKind::KdmWork(DevId(i as u16)), home, 600 + i as u32));
            self.devs[i].kdm = Some(KdmWork { thread, queue: Default::default() });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::block::Request;
    use crate::engine::ids::*;
    use crate::engine::time::SimTime;
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    #[test]
    fn a_clone_inherits_its_originals_cpu() {
        let mut s = Scenario::default();
        for (k, v) in [("stack", "dm"), ("disks", "1"), ("cpu.cores", "8"), ("cpu.sockets", "2")] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        let (dm, path) = (DevId(1), DevId(0));
        let orig = |cpu| Request { nr_bios: 1, cpu, ..Request::for_test(dm, ThreadId(0), SimTime::ZERO) };
        for cpu in [Some(CoreId(5)), Some(CoreId(2)), None] {
            let rq = ReqId(sim.reqs.insert(orig(cpu)));
            let clone = sim.insert_clone(rq, path, None, 0, ThreadId(0));
            assert_eq!(sim.reqs.get(clone.0).cpu, cpu);
            // With the interrupt on CPU 0 and rq_affinity 1, a clone from CPU 5 completes on
            // its socket's leader, CPU 4, as the original would.
            if cpu == Some(CoreId(5)) {
                assert_eq!(sim.completion_cpu(CoreId(0), sim.reqs.get(clone.0).cpu), CoreId(4));
            }
        }
    }
}
