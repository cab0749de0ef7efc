//! The engine: `Sim` owns every component, pops events in (time, seq) order and hands each to
//! the kernel path it starts (the one `match` on `Event`), and runs a thread's next step.
//!
//! The kernel paths themselves are `impl Sim` blocks in the files named after the kernel's
//! (`block/blk_core.rs`, `drivers/md/dm.rs`, `mm/page_writeback.rs`, ...); the components are
//! plain structs beside them. This file builds the machine (`Sim::new`) and drives it.

pub mod event;
pub mod ids;
pub mod invariants;
pub mod profile;
pub mod rng;
pub mod run;
pub mod time;

pub use run::run_one;

use crate::block::blk_core::BlkCore;
use crate::block::{Bio, BlockDev, Request, RequestQueue};
use crate::calib::*;
use crate::drivers::md::dm_mpath::Multipath;
use crate::drivers::md::raid5::Md;
use crate::drivers::scsi::hosts::{scsi_init_hosts, Host};
use crate::engine::event::{Event, EventQueue};
use crate::engine::ids::*;
use crate::engine::time::{SimTime, NS_PER_S};
use crate::fio::job::{Io, Job};
use crate::hw::Disk;
use crate::kernel::sched::Current;
use crate::kernel::sched::{Core, Step, Thread, ThreadKind, Wait};
use crate::kernel::trace::blktrace::TraceRing;
use crate::kernel::workqueue::Kblockd;
use crate::mm::page_writeback::PageWriteback;
use crate::scenario::{limits, Config};
use crate::tools::snapshot::{Accounting, Interval};

/// The default trace ring size: enough for several frames of the busiest lesson.
pub const TRACE_RING_DEFAULT: usize = 1 << 16;
/// Per-second samples kept for charts (an hour of simulated time).
pub const HISTORY_MAX: usize = 3600;

/// What a thread step led to.
pub(crate) enum Next {
    Continue(Step),
    Sleep(Wait),
    /// A kernel thread with nothing to do: asleep, but not in D state (no iowait).
    Idle,
    Exit,
}

/// Totals over the whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    pub events: u64,
    /// The events still queued after each pop, summed: ÷ `events` is the event queue's mean
    /// length, at which the speed bench runs its bare BinaryHeap yardstick.
    pub events_pending_sum: u64,
    pub context_switches: u64,
    pub interrupts: u64,
    pub bios_submitted: u64,
    pub bios_completed: u64,
    pub requests_completed: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ios_completed: u64,
    /// Request-based dm clones made and completed, and the clone bios they carried.
    pub clones: CloneTotals,
    /// /proc/vmstat `pgpgin`/`pgpgout` in bytes: what `submit_bio` took from the page cache,
    /// direct I/O and writeback (stacking drivers resubmit below it, uncounted): vmstat bi/bo.
    pub pgpgin_bytes: u64,
    pub pgpgout_bytes: u64,
    /// Buffered reads: bytes read() copied out of the page cache, and bytes readahead brought in.
    pub buffered_read_bytes: u64,
    pub readahead_bytes: u64,
    /// md: bytes raid5d read from members into stripe heads (on completion), and bytes it returned to bios
    /// from them (more when a page already in the cache serves another bio).
    pub stripe_read_bytes: u64,
    pub stripe_returned_bytes: u64,
    /// Readahead pages reclaimed before the reader got to them, and read again (thrashing).
    pub readahead_thrashed_bytes: u64,
    /// Bytes ever added to the page cache for reads (readahead windows), the reclaim clock.
    pub page_cache_read_added_bytes: u64,
    /// multipathd's path-checker reads (4 KiB each): on the disks' diskstats, but no job's
    /// bytes, so the books (iostat = the jobs' bytes) leave them out.
    pub path_check_bytes: u64,
    /// The jobs' progress (`Sim::job_progressed`).
    pub progress: JobProgress,
    /// Calls of traced kernel functions, as bcc's funccount counts them.
    #[serde(default)]
    pub funccount: FuncCount,
}

/// Calls of kernel functions, counted at each entry (bcc's `funccount`, ftrace's function
/// profiler): each field is named after its function.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FuncCount {
    pub blk_mq_delay_run_hw_queues: u64,
}

impl FuncCount {
    /// Each function's calls, by its name.
    pub fn by_name(&self) -> [(&'static str, u64); 1] {
        [("blk_mq_delay_run_hw_queues", self.blk_mq_delay_run_hw_queues)]
    }
}

/// Request-based dm clones made and completed, and the clone bios they carried.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CloneTotals {
    pub made: u64,
    pub completed: u64,
    pub bios_made: u64,
    pub bios_completed: u64,
}

/// The jobs' progress: when a job last completed a read or a write or finished, and the
/// longest span so far without that (a stall) and when it began.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobProgress {
    pub at_ns: u64,
    pub stall_ns_max: u64,
    pub stall_from_ns: u64,
}

/// The machine: its configuration, the event queue, the objects the kernel keeps (CPUs, threads,
/// block devices with their queues, disks, hosts, fio's jobs, the bio, request and I/O slabs),
/// and the subsystems' state, each a struct declared in its kernel file.
#[derive(Clone)]
pub struct Sim {
    pub(crate) cfg: Config,
    pub(crate) seed: u64,
    pub(crate) events: EventQueue,
    /// blktrace's ring and clock.
    pub(crate) trace: TraceRing,
    pub(crate) cores: IdVec<CoreId, Core>,
    pub(crate) threads: IdVec<ThreadId, Thread>,
    pub(crate) devs: IdVec<DevId, BlockDev>,
    pub(crate) disks: IdVec<DiskId, Disk>,
    pub(crate) hosts: IdVec<HostId, Host>,
    /// blk-mq's tag sets: each SCSI host's and each NVMe controller's
    /// (`block/blk_mq_tag.rs`, made by `blk_mq_share_tag_sets`).
    pub(crate) tag_sets: Vec<crate::block::blk_mq_tag::BlkMqTagSet>,
    pub(crate) jobs: IdVec<JobId, Job>,
    pub(crate) bios: Slab<Bio>,
    pub(crate) reqs: Slab<Request>,
    pub(crate) ios: Slab<Io>,
    /// The run's totals, latency histogram and per-second snapshots.
    pub(crate) acct: Accounting,
    /// `smp_processor_id()` and `current`: whose work is being applied now.
    pub(crate) current: Current,
    pub(crate) kblockd: Kblockd,
    /// The running task's plug and blk-core's recycled bio lists.
    pub(crate) blk: BlkCore,
    /// The page cache's dirty accounting and limits (`mm/page-writeback.c`).
    pub(crate) vm: PageWriteback,
    pub(crate) md: Md,
    pub(crate) mpath: Multipath,
    /// The lock sections of the work applying its effects now (`kernel/spinlock.rs`).
    pub(crate) locking: crate::kernel::spinlock::Locking,
    /// The completion softirq's count of page waiters, remembered by request shape.
    pub(crate) page_wakeups_memo: crate::block::blk_softirq::PageWakeupMemo,
}

impl Sim {
    /// Brings the machine up, as `start_kernel` and the drivers' probes do: the threads take
    /// their ids (and pids) in this order, and the first events go in the order at the end.
    pub fn new(cfg: &Config, seed: u64) -> Sim {
        let s = &cfg.scenario;
        let mut sim = Sim {
            cfg: cfg.clone(),
            seed,
            // Its limit is set once every subsystem is up (`event_capacity`).
            events: EventQueue::new(0),
            trace: TraceRing::new(TRACE_RING_DEFAULT),
            cores: (0..s.cpu.cores).map(|_| Core::default()).collect(),
            threads: IdVec::default(),
            devs: IdVec::default(),
            disks: IdVec::default(),
            hosts: scsi_init_hosts(s),
            tag_sets: Vec::new(),
            jobs: IdVec::default(),
            bios: Slab::new("bio", limits::BIOS_LIVE_MAX),
            reqs: Slab::new("request", limits::BIOS_LIVE_MAX),
            ios: Slab::new("io", limits::BIOS_LIVE_MAX),
            acct: Accounting::new(0, 0),
            current: Current::default(),
            kblockd: Kblockd::new(s.cpu.cores),
            blk: BlkCore::default(),
            vm: PageWriteback::new(s),
            md: Md::default(),
            mpath: Multipath::new(seed),
            locking: Default::default(),
            page_wakeups_memo: Default::default(),
        };
        sim.spawn_percpu_kthreads();
        let top = sim.add_disks();
        sim.md_run();
        sim.dm_start_kdmwork();
        sim.blk_mq_share_tag_sets();
        let checked = sim.multipathd_init();
        sim.bdi_start_flushers(&top);
        sim.fio_add_jobs(&top);
        sim.vm.bdi_writers = sim.bdi_writers();
        sim.acct = Accounting::new(sim.devs.len(), sim.cores.len());
        sim.events.set_limit(sim.event_capacity());
        sim.multipathd_start(&checked);
        sim.fio_fork_jobs();
        sim.events.schedule(SimTime(NS_PER_S), Event::StatsTick);
        sim.sched_init_smp();
        sim
    }

    /// The most events that can be queued at once: each subsystem's share, and the engine's
    /// own (the stats and scheduler ticks, with room to spare).
    fn event_capacity(&self) -> usize {
        const ENGINE_EVENTS: usize = 17;
        let per_dev = RequestQueue::EVENTS_MAX + crate::block::blk_mq::blk_mq_events_max(&self.cfg.scenario);
        ENGINE_EVENTS
            + Job::EVENTS_MAX * self.jobs.len()
            + Core::EVENTS_MAX * self.cores.len()
            + per_dev * self.devs.len()
            + Host::EVENTS_MAX * self.hosts.len()
            + self.disks.iter().map(Disk::events_max).sum::<usize>()
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn now(&self) -> SimTime {
        self.events.now()
    }

    pub fn totals(&self) -> &Totals {
        &self.acct.totals
    }

    pub fn trace(&self) -> &TraceRing {
        &self.trace
    }

    /// Turns trace recording on or off (the CLI runs without it; the UI with it).
    pub fn set_trace(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    /// A copy of the whole simulation at this instant, for a timeline to rewind to: run on, it
    /// gives exactly the run this one gives (one seed, one run). The copy's trace ring starts
    /// empty at the same `seq`: the records are the viewer's, and a copy of them per snapshot
    /// would cost megabytes.
    pub fn checkpoint(&mut self) -> Sim {
        let empty = self.trace.empty_copy();
        let ring = std::mem::replace(&mut self.trace, empty);
        let copy = self.clone();
        self.trace = ring;
        copy
    }

    /// When every finite job had finished, if they all have.
    pub fn finished_at(&self) -> Option<SimTime> {
        self.acct.finished_at
    }

    /// Whether the run has nothing more to do: every job is finite and done.
    pub fn is_finished(&self) -> bool {
        self.acct.finished_at.is_some()
    }

    /// The snapshots taken at each simulated second, and a last, partial one if the jobs
    /// finished between ticks (the most recent `HISTORY_MAX`).
    pub fn history(&self) -> impl ExactSizeIterator<Item = &Interval> {
        self.acct.history.iter()
    }

    /// The snapshots that end after `end` (all of them for None): what a viewer holding the
    /// history up to `end` lacks. Found by bisection, not a walk of the whole history.
    pub fn history_after(&self, end: Option<SimTime>) -> impl ExactSizeIterator<Item = &Interval> {
        let from = end.map_or(0, |end| self.acct.history.partition_point(|iv| iv.end <= end));
        self.acct.history.range(from..)
    }

    /// When the next event comes, if one is queued (a caller that must stop at a given event
    /// within an instant, as the page's replay of a live knob does, looks before it steps).
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.events.peek_time()
    }

    /// Processes one event. Returns false when there is none or the run is finished.
    pub fn step(&mut self) -> bool {
        if self.is_finished() {
            return false;
        }
        let Some((_, ev)) = self.events.pop() else {
            return false;
        };
        self.acct.totals.events += 1;
        self.acct.totals.events_pending_sum += self.events.len() as u64;
        self.handle(ev);
        true
    }

    /// Runs every event up to and including `t`, then moves the clock to `t` (or stops early
    /// when every job has finished).
    pub fn run_until(&mut self, t: SimTime) {
        while let Some(next) = self.events.peek_time() {
            if next > t || self.is_finished() {
                break;
            }
            self.step();
        }
        if !self.is_finished() && t > self.now() {
            self.events.advance_to(t);
        }
    }

    /// Runs at most `max_events` events up to `t`; returns how many ran (the UI's frame budget).
    /// A budget that runs out mid-instant still finishes that instant, so the clock always
    /// means "every event up to now has run": a link carrying it replays to the same state.
    pub fn run_until_bounded(&mut self, t: SimTime, max_events: u64) -> u64 {
        let mut n = 0;
        loop {
            match self.events.peek_time() {
                Some(next) if next <= t && !self.is_finished() && (n < max_events || next == self.now()) => {
                    self.step();
                    n += 1;
                }
                Some(next) if next <= t && !self.is_finished() => break,
                _ => {
                    if !self.is_finished() && t > self.now() {
                        self.events.advance_to(t);
                    }
                    break;
                }
            }
        }
        n
    }

    pub(crate) fn handle(&mut self, ev: Event) {
        match ev {
            Event::CoreDone { core } => self.on_core_done(core),
            Event::DiskDone { disk, slot } => self.on_disk_done(disk, slot),
            Event::JobStart { job } => self.fio_job_start(job),
            Event::StatsTick => self.on_stats_tick(),
            Event::SchedTick => self.on_sched_tick(),
            Event::ElevatorTimer { dev } if self.devs[dev].queue.elevator.kind() == crate::block::ElevatorKind::Bfq => {
                self.bfq_idle_slice_timer(dev)
            }
            Event::ElevatorTimer { dev } => {
                self.devs[dev].queue.idle_slice_timer = None;
                // The timer function punts the queue run to kblockd; if the queue idles again
                // (a later window), that run arms the timer again.
                self.run_queue_async(dev, CoreId(0));
            }
            Event::DelayWork { dev } => self.on_queue_timer(dev, |q| &mut q.delay_work, ev),
            Event::MqSplice { dev, hctx, cpu } => self.mq_splice_due(dev, hctx, cpu),
            Event::MqDelayRun { dev, hctx } => self.on_mq_delay_run(dev, hctx),
            Event::MqTimer { dev } => self.on_mq_timer(dev),
            Event::KyberTimer { dev } => self.on_kyber_timer(dev),
            Event::PathCheck { dev } => self.path_check(dev),
            Event::HostLink { host } => self.host_link_through(host),
            Event::UnplugTimer { dev } => self.on_queue_timer(dev, |q| &mut q.unplug_timer, ev),
            Event::Timeout { thread } => {
                let now = self.now();
                let th = &mut self.threads[thread];
                if let ThreadKind::Flusher(_) = th.kind {
                    // A flusher's timer is its congestion wait's.
                    th.congestion_timer_armed = false;
                    match th.congestion_until {
                        Some(until) if until > now => {
                            th.congestion_timer_armed = true;
                            self.events.schedule(until, Event::Timeout { thread });
                        }
                        Some(_) if th.wait == Some(Wait::Congestion) => {
                            th.congestion_until = None;
                            self.vm.congestion_waiters.retain(|&t| t != thread);
                            self.wake(thread, Step::FlushWork);
                        }
                        _ => {}
                    }
                } else if th.wait == Some(Wait::DirtyThrottle) {
                    self.wake(thread, Step::DirtyRecheck);
                } else if th.wait == Some(Wait::Think) {
                    self.wake(thread, Step::Next);
                }
            }
        }
    }

    pub(crate) fn step_cost(&mut self, tid: ThreadId, step: Step) -> u64 {
        match step {
            Step::Next => {
                let job = &self.jobs[self.job_of(tid)];
                if self.job_paced_until(job.id).is_some() {
                    0
                } else if job.buffered_read {
                    self.buffered_read_cost(job)
                } else if !job.has_more_to_issue() {
                    SYSCALL_NS
                } else if job.buffered {
                    // write() into the page cache: copy the pages in up to the next
                    // balance_dirty_pages check; there, over its device's share of the dirty
                    // limit, also build and submit the writeback chunk.
                    let j = self.job_of(tid);
                    let (seg, checks) = self.write_segment(j);
                    let enter = if job.write.write_left == 0 { SYSCALL_NS } else { 0 };
                    enter + PAGE_COPY_NS * seg.div_ceil(4096) + if checks { self.dirty_writeback_ns(j, seg) } else { 0 }
                } else {
                    // One system call submits the I/O, or io_uring's batch of them.
                    let bios = job.bios_per_io(self.devs[job.dev].queue.max_request_bytes());
                    let ios = u64::from(self.uring_batch(job.id));
                    SYSCALL_NS + (BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS) * bios * ios
                }
            }
            Step::RetryGetRequest => GET_REQUEST_NS + DISPATCH_NS,
            Step::KblockdWork => KBLOCKD_WORK_NS + DISPATCH_NS,
            // Woken in balance_dirty_pages: the checks, and the chunk it may write back now.
            Step::DirtyRecheck => SYSCALL_NS + self.dirty_writeback_ns(self.job_of(tid), 0),
            Step::FlushWork | Step::FsyncWrite => {
                // The step writes back one bio of up to max_sectors_kb (a page for XFS of 2.6.2).
                let dev = match self.threads[tid].kind {
                    ThreadKind::Flusher(dev) => dev,
                    _ => self.jobs[self.job_of(tid)].dev,
                };
                let bytes = self.writeback_bio_bytes(self.devs[dev].queue.max_request_bytes());
                WRITEBACK_PAGE_NS * bytes.div_ceil(4096) + BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS
            }
            Step::Softirq => {
                let c = self.threads[tid].home.idx();
                self.cores[c].softirq.front().copied().map_or(0, |rq| self.softirq_cost(rq))
            }
            Step::Raid5d => self.raid5d_cost(tid),
            Step::RetryStripe => self.retry_stripe_cost(tid),
            Step::KdmWork => {
                let ThreadKind::KdmWork(dm) = self.threads[tid].kind else { unreachable!("not kdmwork") };
                let q = &self.devs[dm].kdm.as_ref().expect("a dm device over blk-mq").queue;
                q.front().map_or(0, |rq| DM_MAP_REQUEST_NS + GET_REQUEST_NS + BIO_CLONE_NS * self.reqs.get(rq.0).nr_bios as u64)
            }
            Step::RetryTag => GET_REQUEST_NS,
            // The check of the CQ ring's count in the woken task's wait loop: its cost is the
            // switch in.
            Step::CqWait => 0,
        }
    }

    /// What `balance_dirty_pages`' writeback costs a writer now (`dirty_writeback_bytes`):
    /// `write_cache_pages` for each page, and each bio's submission, request and dispatch.
    fn dirty_writeback_ns(&self, j: JobId, extra: u64) -> u64 {
        let bytes = self.dirty_writeback_bytes(j, extra);
        if bytes == 0 {
            return 0;
        }
        let dev = self.jobs[j].dev;
        let bio_bytes = self.writeback_bio_bytes(self.devs[dev].queue.max_request_bytes());
        WRITEBACK_PAGE_NS * bytes.div_ceil(4096) + bytes.div_ceil(bio_bytes) * (BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS)
    }

    pub(crate) fn run_step(&mut self, tid: ThreadId, step: Step) -> Next {
        match step {
            Step::Next => {
                let j = self.job_of(tid);
                if let Some(next) = self.job_pace(j) {
                    return next;
                }
                // Entering the system call (a read() or write() that goes on with its pages has
                // entered it).
                let job = &self.jobs[j];
                if (!job.buffered_read || job.read.read_left == 0) && job.write.write_left == 0 {
                    self.charge(SYSCALL_NS);
                }
                if self.jobs[j].buffered_read {
                    self.buffered_read(j)
                } else if !self.jobs[j].has_more_to_issue() {
                    self.after_submit(tid)
                } else if self.jobs[j].buffered {
                    self.buffered_write(j)
                } else {
                    if self.jobs[j].ring.is_some() {
                        self.uring_submit(j);
                    } else {
                        self.issue_io(j);
                    }
                    self.submit_pending(tid)
                }
            }
            Step::RetryGetRequest => {
                // After sleeping in get_request_wait a process becomes a batcher.
                let now = self.now();
                self.threads[tid].set_batching(now);
                self.submit_pending(tid)
            }
            Step::KblockdWork => {
                self.charge(KBLOCKD_WORK_NS);
                self.kblockd_work(tid)
            }
            Step::DirtyRecheck => {
                let j = self.job_of(tid);
                self.balance_dirty_pages(j)
            }
            Step::FlushWork => self.flush_work(tid),
            Step::FsyncWrite => self.fsync_write(tid),
            Step::Raid5d => self.raid5d_step(tid),
            Step::RetryStripe => self.retry_stripe(tid),
            Step::KdmWork => self.kdm_map(tid),
            Step::RetryTag => match self.threads[tid].kind {
                ThreadKind::KdmWork(_) => self.kdm_map(tid),
                _ => self.submit_pending(tid),
            },
            Step::Softirq => self.ksoftirqd_step(tid),
            Step::CqWait => self.uring_cq_recheck(self.job_of(tid)),
        }
    }

    /// What the scenario asks for that this model does not simulate yet. The CLI and the UI
    /// show this list, so that nobody mistakes a missing mechanism for a measured effect.
    pub fn model_gaps(&self) -> Vec<String> {
        model_gaps(&self.cfg)
    }
}

/// See `Sim::model_gaps`.
pub fn model_gaps(cfg: &Config) -> Vec<String> {
    let s = &cfg.scenario;
    let mut gaps = Vec::new();
    // Buffered random writes only: a buffered random read is the pages it asks for (see
    // `buffered_read`).
    for (i, w) in s.all_jobs().enumerate() {
        if !w.direct && w.rw == crate::scenario::Rw::Randwrite {
            gaps.push(format!(
                "{}=randwrite buffered: writeback writes the dirty pages in the order they were written, without sorting",
                crate::scenario::jobs::job_knob_key(s, i, &crate::scenario::knob_table::WORKLOAD_RW)
            ));
        }
    }
    // fio's batching options act on the io_uring engine's direct I/O only.
    let d = crate::scenario::jobs::JobOptions::default();
    for (i, w) in s.all_jobs().enumerate() {
        let o = &w.fio;
        let batched = (o.iodepth_batch_submit, o.iodepth_batch_complete_min, o.iodepth_batch_complete_max)
            != (d.iodepth_batch_submit, d.iodepth_batch_complete_min, d.iodepth_batch_complete_max);
        if batched && !(w.ioengine == crate::scenario::IoEngine::IoUring && w.direct) {
            gaps.push(format!(
                "{}: iodepth_batch_* act on ioengine=io_uring with direct=1 only; this job submits and reaps each I/O alone",
                crate::scenario::jobs::job_knob_key(s, i, &crate::scenario::knob_table::WORKLOAD_IODEPTH_BATCH_SUBMIT)
            ));
        }
    }
    // What `kernel` chose in place of a rule the model lacks (an elevator it does not have).
    gaps.extend(crate::scenario::era::notes(s));
    gaps
}
