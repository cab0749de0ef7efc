//! `include/linux/blkdev.h` and `block/blk-settings.c`: the request, the request queue with its
//! pool, limits and congestion thresholds, and the tag depth a leaf queue gets.

use crate::block::{elevator_kind, Elevator, TagMap};
use crate::engine::ids::{BioId, CoreId, DevId, ReqId, ThreadId};
use crate::engine::time::{OneShotTimer, SimTime};
use crate::scenario::Scenario;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct Request {
    pub dev: DevId,
    pub write: bool,
    pub sector: u64,
    pub bytes: u64,
    pub bios: Vec<BioId>,
    /// How many bios it holds (a run in `bios` counts as its `pages`).
    pub nr_bios: u32,
    /// `rq->start_time`: diskstats count a request in flight from allocation.
    pub alloc_at: SimTime,
    pub tag: Option<u16>,
    /// The blk-mq hardware queue whose tag it holds (0 on a legacy queue).
    pub hctx: u16,
    pub submitter: ThreadId,
    /// `REQ_SYNC` (from its first bio's I/O): cfq keeps synchronous requests in the
    /// submitter's own queue and asynchronous ones in the shared async queue.
    pub sync: bool,
    /// The submitter's I/O priority when the request was allocated (cfq makes and finds the
    /// queue by `current->ioprio` in `cfq_set_request`).
    pub ioprio: crate::fs::ioprio::IoPrio,
    /// A clone made by request-based dm (`blk_rq_prep_clone`): the original request on the dm
    /// device. A clone carries one clone bio per original bio; they are not separate `Bio`s
    /// because they are freed with the clone (`nr_clone_bios` counts them).
    pub clone_of: Option<ReqId>,
    pub nr_clone_bios: u32,
    /// `scsi_device_unbusy` ran: the host slot was given back when the completion's softirq
    /// work started, before the request's bios end.
    pub host_freed: bool,
    /// `req->cpu`: the CPU that made it (for `rq_affinity`); None for dm clones.
    pub cpu: Option<CoreId>,
    /// `REQ_FUA` that `blk_insert_flush` took past the elevator (`Sim::blk_rq_fua`).
    pub fua: bool,
}

#[cfg(test)]
impl Request {
    /// A 4 KiB synchronous read by `submitter` at sector 0 of `dev`, allocated at `at` on CPU 0,
    /// with no tag and no bios: what a unit test changes the fields of.
    pub(crate) fn for_test(dev: DevId, submitter: ThreadId, at: SimTime) -> Request {
        Request {
            dev,
            write: false,
            sector: 0,
            bytes: 4096,
            bios: Vec::new(),
            nr_bios: 0,
            alloc_at: at,
            tag: None,
            hctx: 0,
            submitter,
            sync: true,
            ioprio: crate::fs::ioprio::IoPrio::NORM,
            clone_of: None,
            nr_clone_bios: 0,
            host_freed: false,
            cpu: Some(CoreId(0)),
            fua: false,
        }
    }
}

/// A request queue: pool, elevator and tags, with the queue limits.
#[derive(Clone, Debug)]
pub struct RequestQueue {
    pub nr_requests: u32,
    /// `get_request` refuses past 3/2 of `nr_requests`, batchers too (2.6.13+; see the knob
    /// `queue.batch_hard_limit`). Without it a batcher takes its whole batch.
    pub batch_hard_limit: bool,
    pub max_sectors_bytes: u64,
    pub max_segments: u32,
    /// Requests allocated per direction (`rl->count[READ|WRITE]`).
    pub pool_count: [u32; 2],
    /// Set when a live write lowered `nr_requests` below what is allocated: the pool may hold
    /// more than `nr_requests` until it drains (as in the kernel); no allocation happens then.
    pub draining: bool,
    /// `blk_queue_full` per direction: set when an allocation fills the pool, cleared when a
    /// freed request brings it back below `nr_requests`.
    pub full: [bool; 2],
    /// The backing device's congestion bit per direction: set when an allocation reaches
    /// `congestion_on()`, cleared when a free brings the count below `congestion_off()`.
    pub congested: [bool; 2],
    /// Threads sleeping in `get_request_wait`, per direction, in FIFO order.
    pub waiters: [VecDeque<ThreadId>; 2],
    pub elevator: Elevator,
    pub tags: TagMap,
    /// blk-mq (`none`, `mq-deadline`): a request is a tag, allocated at submission; who waits
    /// for one sleeps in `bt_get` by these rules. None: the legacy request pool.
    pub mq: Option<crate::block::blk_mq::BlkMq>,
    /// blk-mq's 5.x scheduling (`blk_mq.dispatch = 5.0`): scheduler tags, software queues.
    pub mq_sched: Option<crate::block::blk_mq_sched::MqSched>,
    /// `QUEUE_FLAG_PLUGGED` (queue plugging, `queue.plugging = 2.6.20`): the request_fn is not
    /// run until the queue is unplugged.
    pub plugged: bool,
    /// `q->unplug_timer`: a plugged queue unplugs itself `unplug_delay` after plugging.
    pub unplug_timer: OneShotTimer,
    /// `q->delay_work`'s timer (`blk_delay_queue`), and whether the work is on a kblockd list
    /// (queueing it twice is a no-op).
    pub delay_work: OneShotTimer,
    pub run_queued: bool,
    /// When cfq's `idle_slice_timer` is armed for.
    pub idle_slice_timer: Option<SimTime>,
    /// `q->backing_dev_info`.
    pub bdi: crate::mm::backing_dev::BackingDevInfo,
    /// `q->queue_lock`, which a legacy (request_fn) queue's submission, dispatch and completion
    /// take; and the elevator's own queue-wide lock on blk-mq (`bfqd->lock`, `dd->lock`, in the
    /// elevator's data in the kernel).
    pub queue_lock: crate::kernel::spinlock::SpinLock,
    pub elevator_lock: crate::kernel::spinlock::SpinLock,
}

impl RequestQueue {
    /// The events a queue can have queued at once: its cfq idle timer, its `delay_work` and
    /// its unplug timer.
    pub(crate) const EVENTS_MAX: usize = 3;

    /// The most a request (or a bio built for this queue) may carry: `max_sectors_kb`, and
    /// `max_segments` page-sized segments (page-cache and user pages are not contiguous), in
    /// whole pages (`bio_add_page` adds a page whole or not at all: under md's 255 sectors a
    /// bio holds 31 pages).
    pub fn max_request_bytes(&self) -> u64 {
        (self.max_sectors_bytes.min(self.max_segments as u64 * 4096) / 4096 * 4096).max(4096)
    }

    /// `queue_congestion_on_threshold`: nr − nr/8 + 1, at most nr (`blk_queue_congestion_threshold`).
    pub fn congestion_on(&self) -> u32 {
        (self.nr_requests - self.nr_requests / 8 + 1).min(self.nr_requests)
    }

    /// `queue_congestion_off_threshold`: nr − nr/8 − 1, at least 1 (2.6.2-2.6.6; later kernels
    /// also subtract nr/16).
    pub fn congestion_off(&self) -> u32 {
        (self.nr_requests - self.nr_requests / 8).saturating_sub(1).max(1)
    }

    /// The most requests a direction may have allocated: 3/2 of `nr_requests` with the hard
    /// limit; without it, every thread a whole batch over `nr_requests` (`threads` of them).
    pub fn pool_max(&self, threads: usize) -> u32 {
        if self.batch_hard_limit {
            3 * self.nr_requests / 2
        } else {
            self.nr_requests + crate::calib::BLK_BATCH_REQ * threads as u32
        }
    }

    pub(crate) fn new(s: &Scenario, max_sectors_kb: u32, depth: u32) -> RequestQueue {
        RequestQueue {
            nr_requests: s.queue.nr_requests,
            batch_hard_limit: s.queue.batch_hard_limit,
            max_sectors_bytes: max_sectors_kb as u64 * 1024,
            max_segments: s.queue.max_segments,
            pool_count: [0, 0],
            draining: false,
            full: [false, false],
            congested: [false, false],
            waiters: Default::default(),
            elevator: {
                let mut e = Elevator::new(elevator_kind(s.queue.scheduler));
                e.set_cfq_2620(s.queue.cfq == crate::scenario::CfqRules::V2620);
                e.set_tunables(crate::block::elevator::tunables(&s.queue.iosched));
                e.set_nonrot(!s.disk.kind.rotational());
                e
            },
            tags: TagMap::new(depth),
            mq: None,
            mq_sched: None,
            plugged: false,
            unplug_timer: Default::default(),
            delay_work: Default::default(),
            run_queued: false,
            idle_slice_timer: None,
            bdi: Default::default(),
            queue_lock: Default::default(),
            elevator_lock: Default::default(),
        }
    }
}

/// `SAFE_MAX_SECTORS`: the `max_sectors` `blk_queue_make_request` gives a bio-based queue
/// (include/linux/blkdev.h, 2.6.x). md RAID5 keeps it: before 2.6.31 nothing stacks the
/// members' limits onto md's queue.
pub const SAFE_MAX_SECTORS: u64 = 255;

/// The tag depth a leaf queue gets: `queue_depth`, capped at 2 × `nr_requests` by
/// `init_tag_map` when the driver uses the generic block tagging (legacy queues only).
pub fn tag_depth(s: &Scenario) -> u32 {
    if s.queue.generic_tagging && !is_mq(s.queue.scheduler) {
        s.queue.depth.min(2 * s.queue.nr_requests)
    } else {
        s.queue.depth
    }
}

/// Whether leaf queues run blk-mq: its schedulers are `none`, `mq-deadline`, `kyber` and `bfq`.
pub fn is_mq(s: crate::scenario::Scheduler) -> bool {
    use crate::scenario::Scheduler;
    matches!(s, Scheduler::None | Scheduler::MqDeadline | Scheduler::Kyber | Scheduler::Bfq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_tag_map_caps_the_depth_at_twice_nr_requests_for_generic_tagging_only() {
        let mut s = Scenario::default();
        s.queue.depth = 254;
        s.queue.nr_requests = 64;
        assert_eq!(tag_depth(&s), 254);
        s.queue.generic_tagging = true;
        assert_eq!(tag_depth(&s), 128);
        s.queue.nr_requests = 512;
        assert_eq!(tag_depth(&s), 254, "it caps, it never raises");
    }
}
