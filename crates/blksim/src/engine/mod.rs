//! The engine: `Sim` owns every component, pops events in (time, seq) order and hands each to
//! the kernel path it starts (the one `match` on `Event`), and runs a thread's next step.
//!
//! The kernel paths themselves are `impl Sim` blocks in the files named after the kernel's
//! (`block/blk_core.rs`, `drivers/md/dm.rs`, `mm/page_writeback.rs`, ...); the components are
//! plain structs beside them. This file builds the machine (`Sim::new`) and drives it.

pub mod event;
pub mod ids;
pub mod invariants;
pub mod rng;
pub mod run;
pub mod time;

pub use run::run_one;

use crate::block::genhd::dev_capacity_sectors;
use crate::block::{Bio, BlockDev, DevKind, Request};
use crate::calib::*;
use crate::drivers::md::raid5::Raid5;
use crate::drivers::scsi::hosts::Host;
use crate::engine::event::{Event, EventQueue};
use crate::engine::ids::*;
use crate::engine::rng::{Stream, STREAM_DISK, STREAM_JOB};
use crate::engine::time::{SimTime, NS_PER_S};
use crate::fio::job::{Io, Job};
use crate::hw::Disk;
use crate::kernel::sched::{Core, Step, Thread, ThreadKind, Wait};
use crate::kernel::trace::blktrace::TraceRing;
use crate::scenario::{limits, Config, StackKind, Writeback};
use crate::tools::snapshot::Interval;
use crate::tools::stats::LatencyHist;

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
    pub clones_made: u64,
    pub clones_completed: u64,
    pub clone_bios_made: u64,
    pub clone_bios_completed: u64,
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
    /// The jobs' progress (`Sim::job_progressed`): when a job last completed a read or a write
    /// or finished, and the longest span so far without that (a stall) and when it began.
    pub job_progress_at_ns: u64,
    pub stall_ns_max: u64,
    pub stall_from_ns: u64,
}

#[derive(Clone)]
pub struct Sim {
    pub(crate) cfg: Config,
    pub(crate) seed: u64,
    pub(crate) events: EventQueue,
    pub(crate) trace: TraceRing,
    pub(crate) trace_clock: crate::kernel::trace::blktrace::TraceClock,
    pub(crate) cores: IdVec<CoreId, Core>,
    pub(crate) threads: IdVec<ThreadId, Thread>,
    pub(crate) devs: IdVec<DevId, BlockDev>,
    pub(crate) disks: IdVec<DiskId, Disk>,
    pub(crate) hosts: IdVec<HostId, Host>,
    pub(crate) jobs: IdVec<JobId, Job>,
    pub(crate) bios: Slab<Bio>,
    pub(crate) reqs: Slab<Request>,
    pub(crate) ios: Slab<Io>,
    pub(crate) totals: Totals,
    pub(crate) latency: LatencyHist,
    pub(crate) history: std::collections::VecDeque<Interval>,
    pub(crate) last_tick: Interval,
    /// When every job with a finite size had finished.
    pub(crate) finished_at: Option<SimTime>,
    /// The core whose work is being applied now, and the thread whose step it is (None in
    /// interrupt context): the CPU and process a trace record names, as blktrace takes them
    /// from the CPU it runs on and its `current`.
    pub(crate) cur_cpu: u16,
    pub(crate) cur_thread: Option<ThreadId>,
    /// kblockd: per CPU, the queue runs punted to its worker, and whether a device's run is
    /// already queued (one `delay_work` per queue: queueing it twice is a no-op).
    pub(crate) kblockd_queue: Vec<std::collections::VecDeque<crate::kernel::workqueue::Work>>,
    /// `balance_dirty_pages_ratelimited`'s per-CPU count of pages dirtied since the last check.
    pub(crate) ratelimits: Vec<u64>,
    pub(crate) run_queued: Vec<bool>,
    /// A device's armed `blk_delay_queue` timer (when it fires, and the CPU that armed it), and
    /// whether its event is in the queue (one per device: a cancelled one is left to lapse).
    pub(crate) delay_armed: Vec<Option<(SimTime, CoreId)>>,
    pub(crate) delay_event: Vec<bool>,
    /// A plugged queue's unplug timer (when it fires, and the CPU that armed it), and whether
    /// its event is in the queue (one per device, as `delay_armed`).
    pub(crate) unplug_armed: Vec<Option<(SimTime, CoreId)>>,
    pub(crate) unplug_event: Vec<bool>,
    /// The page cache: bytes dirty and under writeback, and the limits.
    pub(crate) dirty_total: u64,
    pub(crate) writeback_total: u64,
    pub(crate) dirty_thresh: u64,
    pub(crate) background_thresh: u64,
    /// Per device: its flusher thread (top-level devices only: the bdi jobs write to), and
    /// where its round of files stands (file, bytes left).
    pub(crate) flushers: Vec<Option<ThreadId>>,
    pub(crate) flush_cursor: Vec<(usize, u64)>,
    /// Threads in `blk_congestion_wait` (the global WRITE congestion wait queue).
    pub(crate) congestion_waiters: Vec<ThreadId>,
    /// Scratch for the commands a disk starts (reused, so a completion allocates nothing).
    pub(crate) disk_started: Vec<(u16, SimTime)>,
    /// Emptied bio lists of completed requests, for new requests (`recycle_bio_list`).
    pub(crate) bio_lists: Vec<Vec<BioId>>,
    /// raid5d's `handle_stripe` result, its vectors reused from step to step.
    pub(crate) stripe_handle: crate::drivers::md::raid5::Handle,
    /// Scratch for `flush_plug`: the devices the plug held requests for.
    pub(crate) plug_devs: Vec<DevId>,
    /// The running thread's plug (`blk_start_plug` .. `blk_finish_plug` around one step):
    /// requests made during the step wait here, where later bios merge into them, and go to
    /// their elevators when the step ends.
    pub(crate) plugging: bool,
    pub(crate) plug: Vec<ReqId>,
    /// Devices that buffered writers write to (the dirty limit is shared among them).
    pub(crate) bdi_writers: u32,
    /// `vm.bdi_dirty_limit = writeout`: `vm_completions`, the page completions of all
    /// devices, and each device's own (`bdi->completions`), indexed by device.
    pub(crate) vm_completions: u64,
    pub(crate) bdi_completions: Vec<crate::mm::page_writeback::PropLocal>,
    /// md RAID5 arrays (their devices are `DevKind::Md`).
    pub(crate) raid5: Vec<Raid5>,
    /// Per dm device over blk-mq: its `kdmwork` thread and the requests queued to it.
    pub(crate) kdm: Vec<Option<(ThreadId, std::collections::VecDeque<ReqId>)>>,
    /// Per device: when its cfq idle timer is armed for.
    pub(crate) elv_timer: Vec<Option<SimTime>>,
    /// Per dm-multipath device: the round-robin selector's next path.
    pub(crate) rr_next: Vec<u16>,
    /// multipathd (`dm.polling_interval` > 0 over blk-mq paths): its thread, the CPUs its
    /// checks run on, and per path the checker's current interval (ns).
    pub(crate) multipathd: Option<ThreadId>,
    pub(crate) multipathd_rng: Stream,
    pub(crate) path_checkint: Vec<u64>,
}

impl Sim {
    pub fn new(cfg: &Config, seed: u64) -> Sim {
        let s = &cfg.scenario;
        let cores: Vec<Core> = (0..s.cpu.cores).map(|_| Core::default()).collect();
        let mut threads = Vec::new();
        // Per-CPU kernel threads exist from boot, as in the kernel. They only run when a later
        // mechanism gives them work (softirq overrun, kblockd punts); top lists them either way.
        for c in 0..s.cpu.cores {
            threads.push(Thread::kernel(format!("ksoftirqd/{c}"), ThreadKind::Ksoftirqd, CoreId(c as u16), 3 + 6 * c));
        }
        for c in 0..s.cpu.cores {
            threads.push(Thread::kernel(format!("kblockd/{c}"), ThreadKind::Kblockd(CoreId(c as u16)), CoreId(c as u16), 200 + c));
        }
        let mut hosts = Vec::new();
        for h in 0..s.hbas {
            let irq_cpu = if s.cpu.irq_cpus.is_empty() { h % s.cpu.cores } else { s.cpu.irq_cpus[h as usize] };
            let link = if s.host.link_mb_s == 0 { u64::MAX } else { s.host.link_mb_s as u64 * 1_000_000 };
            hosts.push(Host::with_link(s.host.can_queue, CoreId(irq_cpu as u16), link));
        }
        let mut disks: IdVec<DiskId, Disk> = IdVec::default();
        let mut devs: IdVec<DevId, BlockDev> = IdVec::default();
        // With dm-multipath over several paths, each path to a disk is its own sd device, on
        // the next HBA along (as two HBAs cabled to the same enclosure show every disk twice).
        let paths = s.dm.paths;
        for d in 0..s.disks {
            let mut rng = Stream::new(seed, STREAM_DISK + d as u64);
            let mut disk = Disk::new(s.disk.kind, s.disk.write_cache, s.disk.controller_cache, &mut rng);
            disk.set_skip_within_track(s.disk.skip_within_track);
            disks.push(disk);
            let first_host = d as u64 * s.hbas as u64 / s.disks as u64;
            for p in 0..paths {
                let host = HostId(((first_host + p as u64) % s.hbas as u64) as u16);
                devs.push(BlockDev::leaf(d * paths + p, DiskId(d as u16), host, s));
            }
        }
        // The stacking layer, listed after the disks as iostat lists dm-* and md* after sd*.
        // The jobs use the top of the stack.
        let top: Vec<DevId> = match s.stack {
            StackKind::Direct => (0..s.disks).map(|d| DevId(d as u16)).collect(),
            StackKind::Lvm => (0..s.disks)
                .map(|d| {
                    devs.push(BlockDev::dm_linear(d, DevId(d as u16), s));
                    DevId((devs.len() - 1) as u16)
                })
                .collect(),
            StackKind::Dm => (0..s.disks)
                .map(|d| {
                    let path_devs = (0..paths).map(|p| DevId((d * paths + p) as u16)).collect();
                    devs.push(BlockDev::dm_mpath(d, path_devs, s));
                    DevId((devs.len() - 1) as u16)
                })
                .collect(),
            StackKind::Md => {
                devs.push(BlockDev::md(0, (0..s.disks).map(|d| DevId(d as u16)).collect(), s));
                vec![DevId((devs.len() - 1) as u16)]
            }
        };
        let mut raid5 = Vec::new();
        for (i, d) in devs.iter().enumerate() {
            if let DevKind::Md { members } = &d.kind {
                let tid = ThreadId(threads.len() as u32);
                threads.push(Thread::kernel(format!("{}_raid5", d.name), ThreadKind::Raid5d(DevId(i as u16)), CoreId(0), 300 + i as u32));
                raid5.push(Raid5::new(DevId(i as u16), members.clone(), s.md.chunk_kb, s.md.stripe_cache_size, tid));
            }
        }
        // Request-based dm over blk-mq maps in one kthread per device (4.0: kdmwork-MAJ:MIN).
        let mut kdm = Vec::new();
        let mut kdm_cpu = Stream::new(seed, STREAM_JOB - 3);
        for (i, d) in devs.iter().enumerate() {
            let over_mq = matches!(&d.kind, DevKind::DmMpath { paths } if devs[paths[0].idx()].queue.mq.is_some());
            kdm.push(over_mq.then(|| {
                let tid = ThreadId(threads.len() as u32);
                // Where the scheduler left the unbound kthread before the run (its history is not
                // modelled), drawn from the seed as multipathd's checker CPU is: when woken it
                // stays on that CPU while it is idle (select_idle_sibling).
                let home = CoreId(kdm_cpu.below(s.cpu.cores as u64) as u16);
                threads.push(Thread::kernel(
                    format!("kdmwork-{}:{}", d.major, d.minor),
                    ThreadKind::KdmWork(DevId(i as u16)),
                    home,
                    600 + i as u32,
                ));
                (tid, std::collections::VecDeque::new())
            }));
        }
        // blk-mq's tag set is the host's: shared once two LUN queues use it.
        for i in 0..devs.len() {
            let DevKind::Sd { host, .. } = devs[i].kind else { continue };
            let luns = devs.iter().filter(|d| d.queue.mq.is_some() && matches!(d.kind, DevKind::Sd { host: h, .. } if h == host)).count();
            if let Some(m) = devs[i].queue.mq.as_mut() {
                m.shared_tags = luns > 1;
            }
        }
        // multipathd checks each blk-mq path of a dm-multipath device.
        let checked: Vec<DevId> = if s.dm.polling_interval > 0 {
            devs.iter()
                .filter_map(|d| match &d.kind {
                    DevKind::DmMpath { paths } => Some(paths.clone()),
                    _ => None,
                })
                .flatten()
                .filter(|p| devs[*p].queue.mq.is_some())
                .collect()
        } else {
            Vec::new()
        };
        let multipathd = (!checked.is_empty()).then(|| {
            threads.push(Thread::kernel("multipathd".into(), ThreadKind::Multipathd, CoreId(0), 900));
            ThreadId(threads.len() as u32 - 1)
        });
        let mut path_checkint = vec![0; devs.len()];
        let mut multipathd_rng = Stream::new(seed, STREAM_JOB - 2);
        let poll = s.dm.polling_interval as u64 * NS_PER_S;
        // One writeback thread per top-level block device, as 2.6.32+ has (flush-MAJ:MIN).
        let mut flushers = vec![None; devs.len()];
        for (i, &dev) in top.iter().enumerate() {
            flushers[dev.idx()] = Some(ThreadId(threads.len() as u32));
            let home = CoreId((i as u32 % s.cpu.cores) as u16);
            let d = &devs[dev];
            // Before 2.6.32, background writeback is a pdflush thread's.
            let name = match s.vm.writeback {
                Writeback::PerBdi => format!("flush-{}:{}", d.major, d.minor),
                Writeback::Pdflush => "pdflush".to_string(),
            };
            threads.push(Thread::kernel(name, ThreadKind::Flusher(dev), home, 400 + i as u32));
        }
        let mut jobs = Vec::new();
        // fio's filename: the named top devices in turn (validated against the stack), else all.
        let top: Vec<DevId> = if s.workload.filename.is_empty() {
            top
        } else {
            s.workload.filename.split(':').map(|n| *top.iter().find(|d| devs[**d].name == n).expect("validated")).collect()
        };
        let top_devs = top.len() as u32;
        for j in 0..s.workload.numjobs {
            let nth_dev = j % top_devs;
            let dev = top[nth_dev as usize];
            // Jobs sharing a device use separate files. Files of a given `size` lie back to
            // back, as a fresh filesystem places files written one after another; time-based
            // jobs (size 0) get an equal share of the device each.
            let sharers = (s.workload.numjobs + top_devs - 1 - nth_dev) / top_devs;
            let nth = j / top_devs;
            let cap = dev_capacity_sectors(&devs, &disks, dev, s) * 512;
            let share = cap / sharers as u64 / s.workload.bs * s.workload.bs;
            let region = if s.workload.size > 0 { s.workload.size.div_ceil(s.workload.bs) * s.workload.bs } else { 0 };
            let region = if region > 0 && region <= share { region } else { share };
            // A device too small for a block per job: each job gets all of it, overlapping (as
            // fio's numjobs clones of one job on one device do). `validate` refuses a block
            // larger than the device.
            let (start, region) =
                if region >= s.workload.bs { (nth as u64 * region, region) } else { (0, cap / s.workload.bs * s.workload.bs) };
            let tid = ThreadId(threads.len() as u32);
            let home = CoreId((j % s.cpu.cores) as u16);
            threads.push(Thread::user(s.workload.name.clone(), JobId(j), home, 1000 + j));
            let rng = Stream::new(seed, STREAM_JOB + j as u64);
            jobs.push(Job::new(JobId(j), tid, dev, start, region, &s.workload, rng));
        }
        // Per device at most one cfq idle timer, one blk_delay_queue timer and one unplug timer.
        // blk-mq: per hardware queue a splice per CPU and a delayed run; per queue a timer and
        // a path check.
        let mq_events = devs.len() * (s.host.nr_hw_queues as usize * (cores.len() + 1) + 2);
        // Per disk a completion per command slot and one for a RAID controller's stripe
        // operation: a RAM LUN has 64 slots, a RAID controller one per tag (up to 1024), which
        // the 16 per disk above did not cover (a 16 MiB direct write filled 121; scripts/soak).
        let disk_events: usize = disks.iter().map(|d| d.slot_count() + 1).sum();
        let mut events = EventQueue::new(
            17 + 4 * (jobs.len() + disks.len() * 16 + cores.len()) + 3 * devs.len() + mq_events + hosts.len() + disk_events,
        );
        for &p in &checked {
            // The first check of each path comes within one polling interval.
            path_checkint[p.idx()] = 2 * poll;
            events.schedule(SimTime(multipathd_rng.below(poll)), Event::PathCheck { dev: p });
        }
        let mut fork = Stream::new(seed, STREAM_JOB - 1);
        for j in &jobs {
            events.schedule(SimTime(fork.below(JOB_FORK_SPREAD_NS)), Event::JobStart { job: j.id });
        }
        events.schedule(SimTime(NS_PER_S), Event::StatsTick);
        let mut cores = cores;
        if s.cpu.load_balance != crate::scenario::LoadBalance::Off {
            for (core, sd) in cores.iter_mut().zip(crate::kernel::topology::sched_domains(s.cpu.cores, s.cpu.sockets)) {
                core.sd = sd;
                core.avg_idle_ns = 2 * SCHED_MIGRATION_COST_NS;
            }
            events.schedule(SimTime(JIFFY_NS), Event::SchedTick);
        }
        let ndevs = devs.len();
        let bdi_writers = {
            let mut d: Vec<DevId> = jobs.iter().filter(|j| j.buffered).map(|j| j.dev).collect();
            d.sort();
            d.dedup();
            d.len() as u32
        };
        Sim {
            cfg: cfg.clone(),
            seed,
            events,
            trace: TraceRing::new(TRACE_RING_DEFAULT),
            trace_clock: Default::default(),
            cores: cores.into(),
            threads: threads.into(),
            devs,
            disks,
            hosts: hosts.into(),
            jobs: jobs.into(),
            bios: Slab::new("bio", limits::BIOS_LIVE_MAX),
            reqs: Slab::new("request", limits::BIOS_LIVE_MAX),
            ios: Slab::new("io", limits::BIOS_LIVE_MAX),
            totals: Totals::default(),
            latency: LatencyHist::default(),
            history: Default::default(),
            last_tick: Interval::zero_with(ndevs, s.cpu.cores as usize),
            finished_at: None,
            cur_cpu: 0,
            cur_thread: None,
            kblockd_queue: vec![Default::default(); s.cpu.cores as usize],
            ratelimits: vec![0; s.cpu.cores as usize],
            run_queued: vec![false; ndevs],
            delay_armed: vec![None; ndevs],
            delay_event: vec![false; ndevs],
            unplug_armed: vec![None; ndevs],
            unplug_event: vec![false; ndevs],
            dirty_total: 0,
            writeback_total: 0,
            dirty_thresh: s.vm.mem_mb as u64 * (1 << 20) * s.vm.dirty_ratio as u64 / 100,
            background_thresh: s.vm.mem_mb as u64 * (1 << 20) * s.vm.dirty_background_ratio.min(s.vm.dirty_ratio) as u64 / 100,
            flush_cursor: vec![(0, MAX_WRITEBACK_BYTES); flushers.len()],
            congestion_waiters: Vec::new(),
            disk_started: Vec::new(),
            bio_lists: Vec::new(),
            stripe_handle: Default::default(),
            plug_devs: Vec::new(),
            flushers,
            plugging: false,
            plug: Vec::new(),
            bdi_writers,
            vm_completions: 0,
            bdi_completions: vec![Default::default(); ndevs],
            raid5,
            kdm,
            elv_timer: vec![None; ndevs],
            rr_next: vec![0; ndevs],
            multipathd,
            multipathd_rng,
            path_checkint,
        }
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
        &self.totals
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
        self.finished_at
    }

    /// Whether the run has nothing more to do: every job is finite and done.
    pub fn is_finished(&self) -> bool {
        self.finished_at.is_some()
    }

    /// The snapshots taken at each simulated second, and a last, partial one if the jobs
    /// finished between ticks (the most recent `HISTORY_MAX`).
    pub fn history(&self) -> impl ExactSizeIterator<Item = &Interval> {
        self.history.iter()
    }

    /// The snapshots that end after `end` (all of them for None): what a viewer holding the
    /// history up to `end` lacks. Found by bisection, not a walk of the whole history.
    pub fn history_after(&self, end: Option<SimTime>) -> impl ExactSizeIterator<Item = &Interval> {
        let from = end.map_or(0, |end| self.history.partition_point(|iv| iv.end <= end));
        self.history.range(from..)
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
        self.totals.events += 1;
        self.totals.events_pending_sum += self.events.len() as u64;
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
            Event::JobStart { job } => {
                self.jobs[job].write_since = self.now();
                let tid = self.jobs[job].tid;
                self.wake(tid, Step::Next);
            }
            Event::StatsTick => self.on_stats_tick(),
            Event::SchedTick => self.on_sched_tick(),
            Event::ElevatorTimer { dev } => {
                self.elv_timer[dev.idx()] = None;
                // The timer function punts the queue run to kblockd; if the queue idles again
                // (a later window), that run arms the timer again.
                self.run_queue_async(dev, CoreId(0));
            }
            Event::DelayWork { dev } => {
                // One timer event per queue: a cancelled timer's event finds nothing armed, and
                // one re-armed since finds a later deadline and waits for it.
                self.delay_event[dev.idx()] = false;
                match self.delay_armed[dev.idx()] {
                    None => {}
                    Some((due, _)) if due > self.now() => {
                        self.delay_event[dev.idx()] = true;
                        self.events.schedule(due, Event::DelayWork { dev });
                    }
                    // Due: the work is queued on kblockd of the CPU that armed it.
                    Some((_, cpu)) => {
                        self.delay_armed[dev.idx()] = None;
                        self.run_queue_async(dev, cpu)
                    }
                }
            }
            Event::MqSplice { dev, hctx, cpu } => self.mq_splice_due(dev, hctx, cpu),
            Event::MqDelayRun { dev, hctx } => self.on_mq_delay_run(dev, hctx),
            Event::MqTimer { dev } => self.on_mq_timer(dev),
            Event::PathCheck { dev } => self.path_check(dev),
            Event::HostLink { host } => self.host_link_through(host),
            Event::UnplugTimer { dev } => {
                self.unplug_event[dev.idx()] = false;
                match self.unplug_armed[dev.idx()] {
                    None => {}
                    Some((due, _)) if due > self.now() => {
                        self.unplug_event[dev.idx()] = true;
                        self.events.schedule(due, Event::UnplugTimer { dev });
                    }
                    // blk_unplug_timeout: kblockd_schedule_work(&q->unplug_work), whose
                    // blk_unplug_work calls the queue's unplug_fn.
                    Some((_, cpu)) => {
                        self.unplug_armed[dev.idx()] = None;
                        self.run_queue_async(dev, cpu);
                    }
                }
            }
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
                            self.congestion_waiters.retain(|&t| t != thread);
                            self.wake(thread, Step::FlushWork);
                        }
                        _ => {}
                    }
                } else if th.wait == Some(Wait::DirtyThrottle) {
                    self.wake(thread, Step::DirtyRecheck);
                }
            }
        }
    }

    pub(crate) fn step_cost(&self, tid: ThreadId, step: Step) -> u64 {
        match step {
            Step::Next => {
                let job = &self.jobs[self.job_of(tid)];
                if job.buffered_read {
                    self.buffered_read_cost(job)
                } else if !job.has_more_to_issue() {
                    SYSCALL_NS
                } else if job.buffered {
                    // write() into the page cache: copy the pages in up to the next
                    // balance_dirty_pages check; there, over its device's share of the dirty
                    // limit, also build and submit the writeback chunk.
                    let j = self.job_of(tid);
                    let (seg, checks) = self.write_segment(j);
                    let enter = if job.write_left == 0 { SYSCALL_NS } else { 0 };
                    enter + PAGE_COPY_NS * seg.div_ceil(4096) + if checks { self.dirty_writeback_ns(j, seg) } else { 0 }
                } else {
                    let bios = job.bios_per_io(self.devs[job.dev].queue.max_request_bytes());
                    SYSCALL_NS + (BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS) * bios
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
                self.cores[c].softirq.front().map_or(0, |&rq| self.softirq_cost(rq))
            }
            Step::Raid5d => self.raid5d_cost(tid),
            Step::RetryStripe => self.retry_stripe_cost(tid),
            Step::KdmWork => {
                let ThreadKind::KdmWork(dm) = self.threads[tid].kind else { unreachable!("not kdmwork") };
                let q = &self.kdm[dm.idx()].as_ref().expect("a dm device over blk-mq").1;
                q.front().map_or(0, |rq| DM_MAP_REQUEST_NS + GET_REQUEST_NS + BIO_CLONE_NS * self.reqs.get(rq.0).nr_bios as u64)
            }
            Step::RetryTag => GET_REQUEST_NS,
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
                // Entering the system call (a read() or write() that goes on with its pages has
                // entered it).
                let job = &self.jobs[j];
                if (!job.buffered_read || job.read_left == 0) && job.write_left == 0 {
                    self.charge(SYSCALL_NS);
                }
                if self.jobs[j].buffered_read {
                    self.buffered_read(j)
                } else if !self.jobs[j].has_more_to_issue() {
                    self.after_submit(tid)
                } else if self.jobs[j].buffered {
                    self.buffered_write(j)
                } else {
                    self.issue_io(j);
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
    if !s.workload.direct && s.workload.rw == crate::scenario::Rw::Randwrite {
        gaps.push(
            "workload.rw=randwrite buffered: writeback writes the dirty pages in the order they were written, without sorting".into(),
        );
    }
    gaps
}
