//! `block/blk-core.c` (2.6.24+; `ll_rw_blk.c` before): `generic_make_request`,
//! `__make_request`, `get_request` with 2.6's batching, plugging, `__blk_run_queue`,
//! `blk_run_queue_async`, `blk_delay_queue` and `freed_request`.

use crate::block::{DevKind, Owner, Request, RequestQueue};
use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{Fired, OneShotTimer};
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, ThreadKind, Wait};
use crate::kernel::trace::blktrace::Action;

/// `BLK_MAX_REQUEST_COUNT` (include/linux/blkdev.h): blk-mq requests a plug holds before
/// `blk_mq_submit_bio` flushes it, twice that over several queues (`blk_plug_max_rq_count`);
/// 16 in 5.10, 32 from 5.16 ("block: bump max plugged deferred size from 16 to 32", by its
/// patch; INFERRED at `blk_mq.plug = 5.16`).
pub const BLK_MAX_REQUEST_COUNT: [u32; 2] = [16, 32];

/// `BLK_PLUG_FLUSH_SIZE`: a plugged request this large flushes the plug before the next.
pub const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;

/// blk-core's state: the running thread's plug (`blk_start_plug` .. `blk_finish_plug` around
/// one step: requests made during the step wait here, where later bios merge into them, and go
/// to their elevators when the step ends), and emptied bio lists of completed requests for
/// new requests (`recycle_bio_list`).
#[derive(Clone, Debug, Default)]
pub(crate) struct BlkCore {
    pub plugging: bool,
    pub plug: Vec<ReqId>,
    /// The step's plug also holds blk-mq requests (`blk_mq.plug`: the path it runs starts a
    /// plug, `Sim::blk_mq_task_plugs`).
    pub mq_plugging: bool,
    /// `plug->rq_count` and `plug->multiple_queues`: the blk-mq requests on the plug, and
    /// whether they are for more than one queue.
    pub mq_rq_count: u32,
    pub multiple_queues: bool,
    /// Scratch for `blk_mq_flush_plug_list`: the plug's blk-mq requests.
    pub mq_list: Vec<ReqId>,
    /// Scratch for `flush_plug`: the devices the plug held requests for.
    pub plug_devs: Vec<DevId>,
    pub bio_lists: Vec<Vec<BioId>>,
    /// How many request queues are plugged: with none, an `unplug_fn` walk over a device's
    /// slaves (md's `unplug_slaves`, run on every turn of the stripe waiters' loop) would
    /// unplug nothing, so it is skipped.
    pub nr_plugged: u32,
}

impl Sim {
    /// Submits the thread's pending bios; sleeps in `get_request_wait` if the pool is full.
    pub(crate) fn submit_pending(&mut self, tid: ThreadId) -> Next {
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        match self.threads[tid].kind {
            ThreadKind::User(j) => {
                let job = &self.jobs[j];
                if !job.buffered && !job.buffered_read {
                    self.dio_all_issued(j);
                }
                self.after_submit(tid)
            }
            ThreadKind::Flusher(_) => Next::Continue(Step::FlushWork),
            ThreadKind::Raid5d(_) => Next::Continue(Step::Raid5d),
            k => unreachable!("{k:?} submits no bios"),
        }
    }

    /// `generic_make_request` for each of the thread's pending bios, in order. A stacking
    /// driver may put the bios it makes at the front of the list (they go next, as with
    /// `current->bio_list`). Err: the thread must sleep; the bio stays first in line.
    pub(crate) fn submit_bios(&mut self, tid: ThreadId) -> Result<(), Wait> {
        while let Some(bio) = self.threads[tid].pending.pop_front() {
            // Q is traced when generic_make_request takes the bio (once, though it may sleep
            // and come back), so each bio's Q comes just before its G or M, as in blkparse.
            // A run of page bios is charged bio by bio where one-by-one submission would
            // charge them: its first here, the others as they merge (`merge_bios`) or, split
            // off, when they come up next (`charge_first`).
            let b = self.bios.get_mut(bio.0);
            if b.charge_first {
                b.charge_first = false;
                let dev = b.dev;
                self.charge(BIO_ALLOC_SUBMIT_NS + ELV_MERGE_NS);
                self.spin_lock_queue(dev, ELV_MERGE_NS);
            } else if !b.queued {
                b.queued = true;
                let b = *b;
                self.charge(BIO_ALLOC_SUBMIT_NS);
                self.emit(b.dev, Action::Q, b.write, b.sector, b.split_rest.max(b.bytes), tid, bio.0, 0);
                if b.split_rest > b.bytes {
                    // blkparse's `X R 0 / 256`: where the bio was, and where the rest now starts.
                    let rest_at = Some((b.dev, b.sector + b.bytes as u64 / 512));
                    self.emit_from(b.dev, Action::X, b.write, b.sector, b.bytes, tid, bio.0, 0, rest_at);
                }
                // __make_request's look for a merge.
                self.charge(ELV_MERGE_NS);
                self.spin_lock_queue(b.dev, ELV_MERGE_NS);
            }
            if let Err(wait) = self.make_request(bio, tid) {
                self.threads[tid].pending.push_front(bio);
                return Err(wait);
            }
        }
        Ok(())
    }

    /// `__make_request`: merge the bio into a waiting request, or allocate a new request and
    /// insert it. Err: the request pool is full and the caller must sleep.
    pub(crate) fn make_request(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let dev = self.bios.get(bio_id.0).dev;
        match self.devs[dev].kind {
            DevKind::Md { .. } => return self.md_make_request(bio_id, tid),
            DevKind::DmLinear { lower } => return self.dm_linear_map(bio_id, lower, tid),
            DevKind::DmMpath { bio_based: true, .. } => return self.multipath_map(bio_id, tid),
            _ => {}
        }
        let max = self.devs[dev].queue.max_request_bytes();
        if self.attempt_merge(bio_id, tid, max) {
            return Ok(());
        }
        let (tag, hctx) = self.get_request_or_tag(bio_id, tid)?;
        // A run's first bio makes the request; the rest try to merge next, one by one's way.
        self.split_run(bio_id, 1, tid);
        let rq = self.init_request_from_bio(bio_id, tid, tag, hctx, max);
        self.add_request(rq, bio_id, tid);
        Ok(())
    }

    /// `attempt_plug_merge`, then `elv_merge`: whether the bio merged into a request of this
    /// step still on the plug (newest first), or into one waiting in the elevator, at its back
    /// or front. A run (`Bio::pages`) goes where its first bio would go; as many of the rest
    /// follow it there as would one by one (`run_fit`), and the others are submitted next.
    fn attempt_merge(&mut self, bio_id: BioId, tid: ThreadId, max: u64) -> bool {
        let bio = *self.bios.get(bio_id.0);
        let dev = bio.dev;
        if self.blk_rq_fua(&bio) {
            // REQ_NOMERGE_FLAGS: blk_mq_submit_bio tries no merge for a flush or FUA bio.
            return false;
        }
        let page = bio.page_bytes() as u64;
        let first_end = bio.sector + page / 512;
        if self.blk.plugging || self.blk.mq_plugging {
            for i in (0..self.blk.plug.len()).rev() {
                let rq = self.blk.plug[i];
                let r = self.reqs.get(rq.0);
                if r.dev != dev || r.write != bio.write || r.bytes + page > max {
                    continue;
                }
                if r.sector + r.bytes / 512 == bio.sector {
                    let fit = self.run_fit(bio_id, rq, i + 1, false, max);
                    self.merge_bios(rq, bio_id, fit, false, tid);
                    return true;
                }
                if first_end == r.sector {
                    self.merge_bios(rq, bio_id, 1, true, tid);
                    return true;
                }
            }
        }
        // Back merge: a waiting request that ends where this bio starts.
        if let Some(rq) = self.devs[dev].queue.elevator.back_candidate(bio.write, bio.sector) {
            if self.reqs.get(rq.0).bytes + page <= max {
                let fit = self.run_fit(bio_id, rq, 0, true, max);
                self.merge_bios(rq, bio_id, fit, false, tid);
                return true;
            }
        }
        if let Some(rq) = self.devs[dev].queue.elevator.front_candidate(bio.write, first_end) {
            if self.reqs.get(rq.0).bytes + page <= max {
                self.merge_bios(rq, bio_id, 1, true, tid);
                return true;
            }
        }
        false
    }

    /// A request for the bio: on blk-mq a tag of the submitting CPU's hardware queue (the
    /// submitter sleeps in `bt_get` without one), else one from the queue's pool
    /// (`get_request`). Returns the tag and hardware queue.
    fn get_request_or_tag(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(Option<u16>, u16), Wait> {
        let bio = *self.bios.get(bio_id.0);
        let dev = bio.dev;
        if self.devs[dev].queue.mq.is_none() {
            self.get_request(dev, bio_id, tid)?;
            return Ok((None, 0));
        }
        let cpu = self.threads[tid].home;
        let hctx = self.mq(dev).hctx_of(cpu);
        let got =
            if self.devs[dev].queue.mq_sched.is_some() { self.blk_mq_get_request(dev, hctx, tid) } else { self.bt_get(dev, hctx, tid) };
        match got {
            Some(t) => Ok((Some(t), hctx)),
            None => {
                self.emit(dev, Action::S, bio.write, bio.sector, bio.bytes, tid, bio_id.0, 0);
                Err(Wait::Tag { dev })
            }
        }
    }

    /// `init_request_from_bio`: the request the bio makes, counted in flight from now.
    fn init_request_from_bio(&mut self, bio_id: BioId, tid: ThreadId, tag: Option<u16>, hctx: u16, max: u64) -> ReqId {
        let bio = *self.bios.get(bio_id.0);
        let dev = bio.dev;
        // Room for every bio that can merge in up to max_sectors (a 512 KiB request of page
        // bios holds 128): growing the list one bio at a time was an eighth of the run time.
        let mut bios = self.blk.bio_lists.pop().unwrap_or_default();
        bios.reserve((max / bio.bytes.max(512) as u64).clamp(1, 256) as usize);
        bios.push(bio_id);
        let at = self.stamp_now(dev);
        let rq = ReqId(self.reqs.insert(Request {
            dev,
            write: bio.write,
            sector: bio.sector,
            bytes: bio.bytes as u64,
            bios,
            nr_bios: 1,
            alloc_at: at,
            tag,
            hctx,
            submitter: tid,
            sync: self.ios.get(bio.io.0).sync,
            ioprio: self.threads[tid.0 as usize].ioprio,
            clone_of: None,
            nr_clone_bios: 0,
            host_freed: false,
            cpu: Some(CoreId(self.current.cpu)),
            fua: self.blk_rq_fua(&bio),
        }));
        self.devs[dev].stats.start(at);
        self.charge(GET_REQUEST_NS);
        self.emit(dev, Action::G, bio.write, bio.sector, bio.bytes, tid, rq.0, bio_id.0);
        rq
    }

    /// The running work holds `dev`'s `queue_lock` for `ns` of its charged time, if `dev` is
    /// a legacy (request_fn) queue: a SCSI disk's, or request-based dm's own (2.6.31-4.x,
    /// `dm_request_fn`'s: `dm_request` hands its bios to `blk_queue_bio`). A bio-based driver
    /// (md, dm-linear, bio-based dm) takes no queue lock; blk-mq has none in the request path.
    pub(crate) fn spin_lock_queue(&mut self, dev: DevId, ns: u64) {
        self.spin_lock_queue_times(dev, ns, 1);
    }

    /// `spin_lock_queue` `times` times over (a run of bios, each taking the lock).
    pub(crate) fn spin_lock_queue_times(&mut self, dev: DevId, ns: u64, times: u64) {
        if times == 0 {
            return;
        }
        let d = &self.devs[dev];
        let request_fn = matches!(d.kind, DevKind::Sd { .. } | DevKind::DmMpath { bio_based: false, .. });
        if request_fn && d.queue.mq.is_none() {
            self.spin_lock_times(crate::kernel::spinlock::LockId::Queue(dev), ns, times);
        }
    }

    /// `add_request`'s insert, or the plug's list: a blk-mq request goes to its hardware
    /// queue, which runs; a legacy one to the elevator, which plugs or runs the queue.
    fn add_request(&mut self, rq: ReqId, bio_id: BioId, tid: ThreadId) {
        let now = self.now();
        let bio = *self.bios.get(bio_id.0);
        let dev = bio.dev;
        let sector_end = bio.sector + bio.bytes as u64 / 512;
        self.charge(ADD_REQUEST_NS);
        self.spin_lock_queue(dev, ADD_REQUEST_NS);
        let r = self.reqs.get(rq.0);
        if self.devs[dev].queue.mq_sched.is_some() {
            if !r.fua && self.blk.mq_plugging && self.blk_mq_plug_request(dev, rq, tid) {
                return;
            }
            self.emit(dev, Action::I, bio.write, bio.sector, bio.bytes, tid, rq.0, 0);
            if self.reqs.get(rq.0).fua {
                self.blk_insert_flush(dev, rq);
                return;
            }
            self.blk_mq_sched_insert_request(dev, rq);
        } else if self.devs[dev].queue.mq.is_some() {
            // blk_mq_make_request (4.0), a sync request over several hardware queues: no plug;
            // insert and run the queue from this CPU.
            let hctx = r.hctx;
            self.blk_mq_insert(dev, rq);
            self.emit(dev, Action::I, bio.write, bio.sector, bio.bytes, tid, rq.0, 0);
            self.blk_mq_run_hw_queue(dev, hctx, false);
        } else if self.blk.plugging {
            if !self.blk.plug.iter().any(|r| self.reqs.get(r.0).dev == dev) {
                self.emit(dev, Action::P, bio.write, bio.sector, 0, tid, rq.0, 0);
            }
            self.blk.plug.push(rq);
        } else {
            let owner = self.owner(rq);
            let was_empty = self.devs[dev].queue.elevator.is_empty();
            self.devs[dev].queue.elevator.add(rq, bio.write, bio.sector, sector_end, now, owner);
            self.emit(dev, Action::I, bio.write, bio.sector, bio.bytes, tid, rq.0, 0);
            if !self.queue_plugging(dev) {
                self.run_queue(dev);
                return;
            }
            // 2.6.20 __make_request: a request added to an empty queue plugs it; then
            // __elv_add_request unplugs it once unplug_thresh requests wait unissued.
            if was_empty {
                self.plug_device(dev, tid);
            }
            let q = &self.devs[dev].queue;
            let waiting = q.pool_count[0] + q.pool_count[1] - q.tags.busy();
            if !q.plugged || waiting >= UNPLUG_THRESH {
                self.unplug_device(dev);
            }
        }
    }

    /// Whether `dev`'s queue plugs itself (`queue.plugging = 2.6.20`): leaf request queues of
    /// the legacy block layer.
    pub(crate) fn queue_plugging(&self, dev: DevId) -> bool {
        self.cfg.scenario.queue.plugging == crate::scenario::Plugging::Queue
            && self.devs[dev].is_leaf()
            && self.devs[dev].queue.mq.is_none()
    }

    /// `blk_plug_device`: plug the queue and arm its unplug timer (`q->unplug_delay`).
    pub(crate) fn plug_device(&mut self, dev: DevId, tid: ThreadId) {
        let q = &mut self.devs[dev].queue;
        if q.plugged {
            return;
        }
        q.plugged = true;
        self.blk.nr_plugged += 1;
        self.emit(dev, Action::P, false, 0, 0, tid, 0, 0);
        let due = self.now() + UNPLUG_DELAY_NS;
        if self.devs[dev].queue.unplug_timer.arm(due, CoreId(self.current.cpu)) {
            self.events.schedule(due, Event::UnplugTimer { dev });
        }
    }

    /// `blk_remove_plug`: clear the plug and its timer. Returns whether the queue was plugged.
    pub(crate) fn remove_plug(&mut self, dev: DevId) -> bool {
        let q = &mut self.devs[dev].queue;
        if !q.plugged {
            return false;
        }
        q.plugged = false;
        q.unplug_timer.cancel();
        self.blk.nr_plugged -= 1;
        true
    }

    /// `generic_unplug_device` (the queue's `unplug_fn`): a plugged queue is unplugged and its
    /// request_fn run (U in the trace, with the requests waiting); an unplugged one is left be.
    pub(crate) fn unplug_device(&mut self, dev: DevId) {
        if !self.remove_plug(dev) {
            return;
        }
        let waiting = self.devs[dev].queue.elevator.len() as u32;
        let ctx = self.context();
        self.emit(dev, Action::U, false, 0, 0, ctx, 0, waiting);
        self.run_queue(dev);
    }

    /// `get_request` (2.6): the allocation that fills the pool marks it full and makes its
    /// process a batcher; while full, only batchers allocate (2.6.13+: never past 3/2 of
    /// nr_requests, `queue.batch_hard_limit`). Everyone else sleeps in get_request_wait.
    pub(crate) fn get_request(&mut self, dev: DevId, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let now = self.now();
        let bio = *self.bios.get(bio_id.0);
        let pool_max = self.devs[dev].queue.pool_max(self.threads.len());
        let q = &mut self.devs[dev].queue;
        let dir = bio.write as usize;
        let th = &mut self.threads[tid];
        let mut refuse = q.draining;
        if q.pool_count[dir] + 1 >= q.nr_requests {
            if !q.full[dir] {
                th.set_batching(now);
                q.full[dir] = true;
            } else if !th.is_batching(now) {
                refuse = true;
            }
        }
        if refuse || (q.batch_hard_limit && q.pool_count[dir] >= pool_max) {
            q.waiters[dir].push_back(tid);
            self.emit(dev, Action::S, bio.write, bio.sector, bio.bytes, tid, bio_id.0, 0);
            // get_request_wait unplugs the queue before it sleeps (2.6.20 plugging).
            self.unplug_device(dev);
            return Err(Wait::GetRequest { dev, write: bio.write });
        }
        if th.is_batching(now) {
            th.batch_left -= 1;
        }
        q.pool_count[dir] += 1;
        if q.pool_count[dir] >= q.congestion_on() {
            q.congested[dir] = true;
        }
        assert!(q.pool_count[dir] <= pool_max, "request pool over its limit");
        Ok(())
    }

    /// `blk_finish_plug`, or the flush `sched_submit_work` makes when the task sleeps with its
    /// plug held (`blk_schedule_flush_plug`): here, a step that ends with bios still to submit.
    pub(crate) fn flush_plug(&mut self, tid: ThreadId) {
        let from_schedule = !self.threads[tid].pending.is_empty();
        self.blk_flush_plug_list(tid, from_schedule);
        self.blk.multiple_queues = false;
    }

    /// `blk_start_plug` on blk-mq (`blk_mq.plug` not off): whether the thread's step runs on a
    /// path that plugs in 5.x: O_DIRECT through `__blkdev_direct_IO` (`blkdev_direct_io_plugs`),
    /// buffered reads (mm/readahead.c `read_pages`), writeback from a writer, fsync or the
    /// flusher (`generic_writepages`, fs/fs-writeback.c `wb_writeback`) and raid5d
    /// (drivers/md/raid5.c). The flusher's plug spans its whole `wb_writeback` loop; here it is
    /// flushed at each step's end (INFERRED nearest).
    pub(crate) fn blk_mq_task_plugs(&self, tid: ThreadId) -> bool {
        if self.cfg.scenario.blk_mq.plug == crate::scenario::MqPlug::Off {
            return false;
        }
        match self.threads[tid].kind {
            ThreadKind::User(j) => {
                let job = &self.jobs[j];
                job.buffered || job.buffered_read || self.blkdev_direct_io_plugs(j)
            }
            ThreadKind::Flusher(_) | ThreadKind::Raid5d(_) => true,
            _ => false,
        }
    }

    /// `blk_flush_plug_list`: the plug's blk-mq requests go to `blk_mq_flush_plug_list`; the
    /// legacy ones into their elevators in the order they were made, then each queue they went
    /// to is unplugged and run.
    pub(crate) fn blk_flush_plug_list(&mut self, tid: ThreadId, from_schedule: bool) {
        if self.blk.plug.is_empty() {
            return;
        }
        if self.blk.mq_rq_count > 0 {
            self.blk_mq_flush_plug_list(tid, from_schedule);
            if self.blk.plug.is_empty() {
                return;
            }
        }
        let now = self.now();
        let mut plug = std::mem::take(&mut self.blk.plug);
        // A scratch list kept between calls: a flush per step must not allocate.
        let mut devs = std::mem::take(&mut self.blk.plug_devs);
        for &rq in &plug {
            let r = self.reqs.get(rq.0);
            let (dev, write, sector, bytes) = (r.dev, r.write, r.sector, r.bytes);
            let owner = self.owner(rq);
            self.devs[dev].queue.elevator.add(rq, write, sector, sector + bytes / 512, now, owner);
            self.emit(dev, Action::I, write, sector, bytes as u32, tid, rq.0, 0);
            if !devs.contains(&dev) {
                devs.push(dev);
            }
        }
        // blkparse prints how many requests each unplug let go.
        let unplugged: Vec<u32> = if self.trace.enabled() {
            devs.iter().map(|&dev| plug.iter().filter(|r| self.reqs.get(r.0).dev == dev).count() as u32).collect()
        } else {
            Vec::new()
        };
        plug.clear();
        self.blk.plug = plug;
        for (i, &dev) in devs.iter().enumerate() {
            self.emit(dev, Action::U, false, 0, 0, tid, 0, unplugged.get(i).copied().unwrap_or(0));
            self.run_queue(dev);
        }
        devs.clear();
        self.blk.plug_devs = devs;
    }

    /// The queue's request_fn (`scsi_request_fn`): dispatch while the device has tags and the
    /// host has room; a device stopped by a busy host joins the host's starved list.
    pub(crate) fn run_queue(&mut self, dev: DevId) {
        // A plugged queue's request_fn runs when it is unplugged.
        if self.devs[dev].queue.plugged {
            return;
        }
        match self.devs[dev].kind {
            DevKind::Sd { .. } if self.devs[dev].queue.mq.is_some() => self.blk_mq_run_hw_queues(dev),
            DevKind::Nvme { .. } => self.blk_mq_run_hw_queues(dev),
            DevKind::Sd { .. } => self.scsi_request_fn(dev),
            DevKind::DmMpath { .. } => self.dm_request_fn(dev),
            // Bio-based: md and dm-linear have no request queue to run.
            DevKind::Md { .. } | DevKind::DmLinear { .. } => {}
        }
        // cfq idling: run the queue again when the idle window closes (one timer per queue,
        // as `cfqd->idle_slice_timer`; one armed for an earlier window re-arms when it fires).
        if let Some(t) = self.devs[dev].queue.elevator.idle_until() {
            if self.devs[dev].queue.idle_slice_timer.is_none() && t > self.now() {
                self.devs[dev].queue.idle_slice_timer = Some(t);
                self.events.schedule(t, Event::ElevatorTimer { dev });
            }
        }
    }

    /// `freed_request`: give a request's slot back to its pool and wake one waiter.
    pub(crate) fn freed_request(&mut self, dev: DevId, write: bool) {
        let q = &mut self.devs[dev].queue;
        let dir = write as usize;
        q.pool_count[dir] -= 1;
        // clear_queue_congested: below the off threshold, and it wakes blk_congestion_wait.
        if q.pool_count[dir] < q.congestion_off() {
            q.congested[dir] = false;
            if write {
                for t in std::mem::take(&mut self.vm.congestion_waiters) {
                    self.threads[t].congestion_until = None;
                    self.wake(t, Step::FlushWork);
                }
            }
        }
        let q = &mut self.devs[dev].queue;
        if q.draining && q.pool_count.iter().all(|&c| c <= q.nr_requests) {
            q.draining = false;
        }
        // __freed_request: below nr_requests again, the queue is no longer full; wake one sleeper.
        if q.pool_count[dir] < q.nr_requests {
            q.full[dir] = false;
            if let Some(w) = q.waiters[dir].pop_front() {
                self.wake(w, Step::RetryGetRequest);
            }
        }
    }

    /// `blk_run_queue_async`: queue the device's run on this CPU's kblockd worker (once), as
    /// `queue_delayed_work(kblockd, &q->delay_work, 0)` on the work `blk_delay_queue` arms.
    /// - 3.0-rc on ("block: don't delay blk_run_queue_async"): it cancels an armed timer first
    ///   (`__cancel_delayed_work`): the run happens now.
    /// - 2.6.39-rc (`queue.async_run_cancels_delay` false; inferred from that fix): with the
    ///   timer armed the work is pending, so nothing is queued: the run waits for the timer.
    pub(crate) fn run_queue_async(&mut self, dev: DevId, cpu: CoreId) {
        let q = &mut self.devs[dev].queue;
        if q.delay_work.is_armed() && !self.cfg.scenario.queue.async_run_cancels_delay {
            return;
        }
        q.delay_work.cancel();
        if q.run_queued {
            return;
        }
        q.run_queued = true;
        self.kblockd_queue_work(crate::kernel::workqueue::Work::Queue(dev), cpu);
    }

    /// `blk_delay_queue(q, SCSI_QUEUE_DELAY)`: run the queue from kblockd after a delay, on the
    /// same `delay_work` as `blk_run_queue_async`: nothing happens if that work is pending
    /// (its timer armed, or queued on kblockd).
    pub(crate) fn delay_queue(&mut self, dev: DevId) {
        self.delay_queue_ns(dev, SCSI_QUEUE_DELAY_NS);
    }

    /// `blk_delay_queue(q, msecs)`.
    pub(crate) fn delay_queue_ns(&mut self, dev: DevId, delay: u64) {
        let due = self.now() + delay;
        let q = &mut self.devs[dev].queue;
        if q.run_queued || q.delay_work.is_armed() {
            return;
        }
        if q.delay_work.arm(due, CoreId(self.current.cpu)) {
            self.events.schedule(due, Event::DelayWork { dev });
        }
    }

    /// A queue's `delay_work` or `unplug_timer` event has come: when due, the work is queued
    /// on kblockd of the CPU that armed it (`blk_unplug_timeout` queues `q->unplug_work`, whose
    /// `blk_unplug_work` calls the queue's `unplug_fn`).
    pub(crate) fn on_queue_timer(&mut self, dev: DevId, timer: fn(&mut RequestQueue) -> &mut OneShotTimer, again: Event) {
        let now = self.now();
        match timer(&mut self.devs[dev].queue).fire(now) {
            Fired::Lapsed => {}
            Fired::Later(due) => self.events.schedule(due, again),
            Fired::Due(cpu) => self.run_queue_async(dev, cpu),
        }
    }

    /// A completed request's bio list goes back for the next request to reuse (allocating
    /// one per request was a few percent of the run time); at most `BIO_LISTS_KEPT` wait.
    pub(crate) fn recycle_bio_list(&mut self, mut bios: Vec<BioId>) {
        const BIO_LISTS_KEPT: usize = 1024;
        if self.blk.bio_lists.len() < BIO_LISTS_KEPT {
            bios.clear();
            self.blk.bio_lists.push(bios);
        }
    }

    /// Whose I/O a request is, for cfq: its submitter, and whether it is synchronous
    /// (`rq_is_sync`: reads, O_DIRECT and fsync writes; writeback of dirty pages is not).
    pub(crate) fn owner(&self, rq: ReqId) -> Owner {
        Self::owner_of(self.reqs.get(rq.0))
    }

    pub(crate) fn owner_of(r: &Request) -> Owner {
        Owner { id: r.submitter.0, sync: !r.write || r.sync, ioprio: r.ioprio }
    }
}

#[cfg(test)]
mod tests {
    use crate::block::DevKind;
    use crate::engine::ids::{CoreId, DevId};
    use crate::engine::Sim;
    use crate::scenario::{set_knob, Scenario};

    /// libaio at iodepth 32 on a SATA SSD under 5.10's mq-deadline for 20 ms: kblockd's
    /// context switches per I/O, fio's, and the I/Os done.
    fn mq_plug_run(plug: &str) -> (f64, f64, u64) {
        let mut s = Scenario::default();
        for (k, v) in [
            ("kernel", "5.10"),
            ("disk.kind", "ssd"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "32"),
            ("workload.direct", "true"),
            ("blk_mq.plug", plug),
        ] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        sim.run_until(crate::engine::time::SimTime(20 * crate::engine::time::NS_PER_MS));
        let ios = sim.acct.totals.ios_completed;
        let cs = |prefix: &str| sim.threads.iter().filter(|t| t.name.starts_with(prefix)).map(|t| t.cs).sum::<u64>() as f64 / ios as f64;
        (cs("kblockd"), cs("fio"), ios)
    }

    #[test]
    fn under_the_5x_plug_the_submitter_runs_the_queue_and_kblockd_only_the_completions_runs() {
        // 5.10 plugs a single-queue disk's requests: blk_finish_plug, at the end of io_submit,
        // inserts the request and runs the queue from fio. kblockd still takes the run each
        // completion asks for (scsi_end_request's blk_mq_run_hw_queues(q, true)).
        let (kblockd, fio, ios) = mq_plug_run("5.5");
        // Without the plug each insert's run goes to kblockd as well: twice the switches.
        let (kblockd_off, fio_off, ios_off) = mq_plug_run("off");
        assert!(ios > 400 && ios_off > 400, "{ios} {ios_off}");
        assert!(kblockd < 1.2 && kblockd_off > 1.8, "kblockd switches per I/O: plug {kblockd:.2}, off {kblockd_off:.2}");
        assert!((fio - fio_off).abs() < 0.2, "fio sleeps once an I/O either way: {fio:.2} {fio_off:.2}");
    }

    #[test]
    fn the_regressed_async_run_leaves_a_pending_delayed_run_and_the_later_one_cancels_it() {
        for (cancels, runs_now) in [("false", false), ("true", true)] {
            let mut s = Scenario::default();
            set_knob(&mut s, "queue.async_run_cancels_delay", cancels).unwrap();
            let mut sim = Sim::new(&s.validate().unwrap(), 1);
            let sd = (0..sim.devs.len()).find(|&i| matches!(sim.devs[i].kind, DevKind::Sd { .. })).expect("a disk");
            let dev = DevId(sd as _);
            // The host was busy with nothing of the device's in flight: blk_delay_queue armed.
            sim.delay_queue(dev);
            let due = sim.devs[dev].queue.delay_work.due().expect("armed");
            // A completion punts a run of the device (scsi_run_queue, c21e6beb).
            sim.run_queue_async(dev, CoreId(0));
            assert_eq!(sim.devs[dev].queue.run_queued, runs_now, "cancels {cancels}: queued on kblockd now");
            assert_eq!(sim.devs[dev].queue.delay_work.due(), (!runs_now).then_some(due), "cancels {cancels}: the timer");
        }
    }
}
