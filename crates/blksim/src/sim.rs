//! The engine: owns every component, pops events in (time, seq) order and runs the kernel code
//! paths that connect the components (submit, get_request, dispatch, complete, wake up).
//!
//! The components are plain structs in their own modules (`cpu`, `block`, `scsi`, `disk`,
//! `workload`); this module is the glue, the way `ll_rw_blk.c` and `scsi_lib.c` are glue.

use crate::block::{Bio, BlockDev, DevKind, Owner, Request};
use crate::calib::*;
use crate::cpu::{AcctState, Core, Step, Thread, ThreadKind, ThreadState, Wait};
use crate::disk::{Cmd, Disk};
use crate::event::{Event, EventQueue};
use crate::ids::*;
use crate::raid5::{in_chunk_boundary, Piece, Raid5, STRIPE_BYTES};
use crate::rng::{Stream, STREAM_DISK, STREAM_JOB};
use crate::scenario::{limits, Config, Filesystem, IoEngine, RunQueueMode, StackKind, Writeback};
use crate::scsi::Host;
use crate::stats::{jain_fairness, CpuTimes, DiskStats, LatencyHist};
use crate::time::{SimTime, NS_PER_S};
use crate::trace::{Action, TraceRecord, TraceRing};
use crate::workload::{Io, IoOwner, Job, RaWindow};

/// The default trace ring size: enough for several frames of the busiest lesson.
pub const TRACE_RING_DEFAULT: usize = 1 << 16;
/// Per-second samples kept for charts (an hour of simulated time).
pub const HISTORY_MAX: usize = 3600;

/// What a thread step led to.
enum Next {
    Continue(Step),
    Sleep(Wait),
    /// A kernel thread with nothing to do: asleep, but not in D state (no iowait).
    Idle,
    Exit,
}

/// Totals over the whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
}

/// One simulated second of counters, for charts and the live tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub end: SimTime,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// `pgpgin`/`pgpgout` so far (vmstat bi/bo).
    pub pgpgin_bytes: u64,
    pub pgpgout_bytes: u64,
    pub ios: u64,
    pub context_switches: u64,
    pub interrupts: u64,
    pub cpu: CpuTimes,
    /// The same, per core (for the CPU strips).
    pub per_core: Vec<CpuTimes>,
    /// CPU time of every thread so far, in thread order (for top over an interval).
    pub thread_cpu_ns: Vec<u64>,
    /// top's S column at the end of the interval, in thread order (ASCII: R, S, D, X): taken
    /// at the tick, so top reads the same however far past it a page has run.
    pub thread_state: Vec<u8>,
    /// vmstat `r` and `b` at the end of the interval.
    pub running: u32,
    pub blocked: u32,
    /// /proc/meminfo `Dirty` and `Writeback` at the end of the interval.
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
    pub diskstats: Vec<DiskStats>,
}

pub struct Sim {
    cfg: Config,
    seed: u64,
    pub(crate) events: EventQueue,
    pub(crate) trace: TraceRing,
    pub(crate) cores: Vec<Core>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) devs: Vec<BlockDev>,
    pub(crate) disks: Vec<Disk>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) jobs: Vec<Job>,
    bios: Slab<Bio>,
    reqs: Slab<Request>,
    ios: Slab<Io>,
    pub(crate) totals: Totals,
    pub(crate) latency: LatencyHist,
    pub(crate) history: std::collections::VecDeque<Interval>,
    last_tick: Interval,
    /// When every job with a finite size had finished.
    finished_at: Option<SimTime>,
    /// The core whose work is being applied now, and the thread whose step it is (None in
    /// interrupt context): the CPU and process a trace record names, as blktrace takes them
    /// from the CPU it runs on and its `current`.
    cur_cpu: u16,
    cur_thread: Option<ThreadId>,
    /// kblockd: per CPU, the queue runs punted to its worker, and whether a device's run is
    /// already queued (one `delay_work` per queue: queueing it twice is a no-op).
    kblockd_queue: Vec<std::collections::VecDeque<DevId>>,
    run_queued: Vec<bool>,
    /// A device's armed `blk_delay_queue` timer (when it fires, and the CPU that armed it), and
    /// whether its event is in the queue (one per device: a cancelled one is left to lapse).
    delay_armed: Vec<Option<(SimTime, CoreId)>>,
    delay_event: Vec<bool>,
    /// The page cache: bytes dirty and under writeback, and the limits.
    dirty_total: u64,
    writeback_total: u64,
    dirty_thresh: u64,
    background_thresh: u64,
    /// Per device: its flusher thread (top-level devices only: the bdi jobs write to), and
    /// where its round of files stands (file, bytes left).
    flushers: Vec<Option<ThreadId>>,
    flush_cursor: Vec<(usize, u64)>,
    /// Threads in `blk_congestion_wait` (the global WRITE congestion wait queue).
    congestion_waiters: Vec<ThreadId>,
    /// Scratch for the commands a disk starts (reused, so a completion allocates nothing).
    disk_started: Vec<(u16, SimTime)>,
    /// Emptied bio lists of completed requests, for new requests (`recycle_bio_list`).
    bio_lists: Vec<Vec<BioId>>,
    /// raid5d's `handle_stripe` result, its vectors reused from step to step.
    stripe_handle: crate::raid5::Handle,
    /// Scratch for `flush_plug`: the devices the plug held requests for.
    plug_devs: Vec<DevId>,
    /// The running thread's plug (`blk_start_plug` .. `blk_finish_plug` around one step):
    /// requests made during the step wait here, where later bios merge into them, and go to
    /// their elevators when the step ends.
    plugging: bool,
    plug: Vec<ReqId>,
    /// Devices that buffered writers write to (the dirty limit is shared among them).
    bdi_writers: u32,
    /// md RAID5 arrays (their devices are `DevKind::Md`).
    pub(crate) raid5: Vec<Raid5>,
    /// Per dm device over blk-mq: its `kdmwork` thread and the requests queued to it.
    pub(crate) kdm: Vec<Option<(ThreadId, std::collections::VecDeque<ReqId>)>>,
    /// Per device: when its cfq idle timer is armed for.
    elv_timer: Vec<Option<SimTime>>,
    /// Per dm-multipath device: the round-robin selector's next path.
    rr_next: Vec<u16>,
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
            hosts.push(Host::new(s.host.can_queue, CoreId(irq_cpu as u16)));
        }
        let mut disks = Vec::new();
        let mut devs = Vec::new();
        // With dm-multipath over several paths, each path to a disk is its own sd device, on
        // the next HBA along (as two HBAs cabled to the same enclosure show every disk twice).
        let paths = s.dm.paths;
        for d in 0..s.disks {
            let mut rng = Stream::new(seed, STREAM_DISK + d as u64);
            disks.push(Disk::new(s.disk.kind, s.disk.write_cache, s.disk.controller_cache, &mut rng));
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
        for (i, d) in devs.iter().enumerate() {
            let over_mq = matches!(&d.kind, DevKind::DmMpath { paths } if devs[paths[0].idx()].queue.mq.is_some());
            kdm.push(over_mq.then(|| {
                let tid = ThreadId(threads.len() as u32);
                let home = CoreId((i as u32 % s.cpu.cores) as u16);
                threads.push(Thread::kernel(
                    format!("kdmwork-{}:{}", d.major, d.minor),
                    ThreadKind::KdmWork(DevId(i as u16)),
                    home,
                    600 + i as u32,
                ));
                (tid, std::collections::VecDeque::new())
            }));
        }
        // One writeback thread per top-level block device, as 2.6.32+ has (flush-MAJ:MIN).
        let mut flushers = vec![None; devs.len()];
        for (i, &dev) in top.iter().enumerate() {
            flushers[dev.idx()] = Some(ThreadId(threads.len() as u32));
            let home = CoreId((i as u32 % s.cpu.cores) as u16);
            let d = &devs[dev.idx()];
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
            s.workload.filename.split(':').map(|n| *top.iter().find(|d| devs[d.idx()].name == n).expect("validated")).collect()
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
            let tid = ThreadId(threads.len() as u32);
            let home = CoreId((j % s.cpu.cores) as u16);
            threads.push(Thread::user(s.workload.name.clone(), JobId(j), home, 1000 + j));
            let rng = Stream::new(seed, STREAM_JOB + j as u64);
            jobs.push(Job::new(JobId(j), tid, dev, nth as u64 * region, region, &s.workload, rng));
        }
        // Per device at most one cfq idle timer and one blk_delay_queue timer.
        let mut events = EventQueue::new(16 + 4 * (jobs.len() + disks.len() * 16 + cores.len()) + 2 * devs.len());
        let mut fork = Stream::new(seed, STREAM_JOB - 1);
        for j in &jobs {
            events.schedule(SimTime(fork.below(JOB_FORK_SPREAD_NS)), Event::JobStart { job: j.id });
        }
        events.schedule(SimTime(NS_PER_S), Event::StatsTick);
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
            cores,
            threads,
            devs,
            disks,
            hosts,
            jobs,
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
            run_queued: vec![false; ndevs],
            delay_armed: vec![None; ndevs],
            delay_event: vec![false; ndevs],
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
            raid5,
            kdm,
            elv_timer: vec![None; ndevs],
            rr_next: vec![0; ndevs],
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

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::CoreDone { core } => self.on_core_done(core),
            Event::DiskDone { disk, slot } => self.on_disk_done(disk, slot),
            Event::JobStart { job } => {
                self.jobs[job.idx()].write_since = self.now();
                let tid = self.jobs[job.idx()].tid;
                self.wake(tid, Step::Next);
            }
            Event::StatsTick => self.on_stats_tick(),
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
                    // Due: the same as an async run from the CPU that armed it.
                    Some((_, cpu)) => self.run_queue_async(dev, cpu),
                }
            }
            Event::Timeout { thread } => {
                let now = self.now();
                let th = &mut self.threads[thread.idx()];
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

    // ---- CPU: cores, threads, context switches ----------------------------------------------

    /// Charges the time since the last change on `c` to what the core was doing.
    fn account(&mut self, c: CoreId) {
        let now = self.now();
        self.cores[c.idx()].account(now);
    }

    /// Makes a sleeping (or new) thread runnable on its home core, with `step` to run next.
    fn wake(&mut self, tid: ThreadId, step: Step) {
        let t = &mut self.threads[tid.idx()];
        assert!(matches!(t.state, ThreadState::Sleeping | ThreadState::New), "waking {} in state {:?}", t.name, t.state);
        let home = t.home;
        if t.wait.is_some_and(|w| w.is_iowait()) {
            self.account(home);
            self.cores[home.idx()].nr_iowait -= 1;
        }
        let to = self.select_task_rq(tid, home);
        if to != home && self.cores[home.idx()].current == Some(tid) {
            // Its context leaves the old CPU: that CPU's next thread switches in from idle.
            self.cores[home.idx()].current = None;
        }
        let home = to;
        let t = &mut self.threads[tid.idx()];
        t.wait = None;
        t.state = ThreadState::Runnable;
        t.next = Some(step);
        t.home = home;
        self.cores[home.idx()].runq.push_back(tid);
        self.kick(home);
    }

    /// Where a woken thread runs (`select_task_rq_fair` → `select_idle_sibling`): on its last
    /// CPU if that is idle, else on the next idle CPU (all cores share one package here). Per-CPU
    /// kernel threads (`ksoftirqd/N`, `kblockd/N`) stay bound to theirs.
    fn select_task_rq(&self, tid: ThreadId, prev: CoreId) -> CoreId {
        if matches!(self.threads[tid.idx()].kind, ThreadKind::Ksoftirqd | ThreadKind::Kblockd(_)) {
            return prev;
        }
        let idle = |c: usize| {
            let core = &self.cores[c];
            !core.busy && core.runq.is_empty() && core.softirq.is_empty()
        };
        let n = self.cores.len();
        if idle(prev.idx()) {
            return prev;
        }
        (1..n).map(|k| (prev.idx() + k) % n).find(|&c| idle(c)).map_or(prev, |c| CoreId(c as u16))
    }

    /// Raises an interrupt on `c` whose softirq work completes `req`.
    fn raise_irq(&mut self, c: CoreId, req: ReqId) {
        self.totals.interrupts += 1;
        self.cores[c.idx()].softirq.push_back(req);
        self.kick(c);
    }

    /// If core `c` is not executing anything, picks what it runs next: softirq work first, then
    /// the current thread's next step, then the head of its run queue, else idle.
    fn kick(&mut self, c: CoreId) {
        let ci = c.idx();
        if self.cores[ci].busy {
            return;
        }
        let now = self.now();
        self.account(c);
        if self.cores[ci].softirq.is_empty() {
            self.cores[ci].softirq_burst_ns = 0;
        } else if !self.cores[ci].softirq_deferred {
            if self.cores[ci].softirq_burst_ns >= SOFTIRQ_BUDGET_NS {
                // __do_softirq is out of budget: the rest is ksoftirqd/N's, a thread that takes
                // its turn with the others on this CPU. Waking it kicks this core again.
                self.cores[ci].softirq_deferred = true;
                let ksoftirqd = ThreadId(c.0 as u32);
                debug_assert_eq!(self.threads[ksoftirqd.idx()].kind, ThreadKind::Ksoftirqd);
                if self.threads[ksoftirqd.idx()].is_idle_kthread() {
                    self.wake(ksoftirqd, Step::Softirq);
                    return;
                }
            }
            let req = *self.cores[ci].softirq.front().expect("checked non-empty");
            let cost = self.softirq_cost(req);
            let core = &mut self.cores[ci];
            core.softirq_burst_ns += cost;
            core.busy = true;
            core.in_irq_softirq = true;
            core.state = AcctState::Softirq;
            self.events.schedule(now + cost, Event::CoreDone { core: c });
            return;
        }
        let mut switched = false;
        let cur = self.cores[ci].current;
        let keep = cur.filter(|&t| {
            let th = &self.threads[t.idx()];
            th.state == ThreadState::Running && (self.cores[ci].runq.is_empty() || now - th.slice_start < SCHED_SLICE_NS)
        });
        let run = match keep {
            Some(t) => Some(t),
            None => {
                if let Some(t) = cur.filter(|&t| self.threads[t.idx()].state == ThreadState::Running) {
                    // Preempted at a step boundary: its slice is used up and others wait.
                    self.threads[t.idx()].state = ThreadState::Runnable;
                    self.cores[ci].runq.push_back(t);
                }
                let next = self.cores[ci].runq.pop_front();
                if next != cur {
                    switched = true;
                    self.totals.context_switches += 1;
                    if let Some(prev) = cur {
                        self.threads[prev.idx()].cs += 1;
                    }
                }
                self.cores[ci].current = next;
                next
            }
        };
        let Some(tid) = run else {
            self.cores[ci].state = AcctState::Idle;
            return;
        };
        let th = &mut self.threads[tid.idx()];
        if switched {
            th.slice_start = now;
        }
        th.state = ThreadState::Running;
        let step = th.next.expect("a running thread has a next step");
        let cost = self.step_cost(tid, step) + if switched { CONTEXT_SWITCH_NS } else { 0 };
        self.threads[tid.idx()].cpu_ns += cost;
        // ksoftirqd's time is softirq time in /proc/stat (it runs __do_softirq).
        let state = if step == Step::Softirq { AcctState::Softirq } else { AcctState::Sys };
        let core = &mut self.cores[ci];
        core.busy = true;
        core.state = state;
        self.events.schedule(now + cost, Event::CoreDone { core: c });
    }

    fn on_core_done(&mut self, c: CoreId) {
        self.account(c);
        let ci = c.idx();
        self.cur_cpu = c.0;
        // The core stays busy while the work's effects run: a thread woken onto this core by
        // them waits in the run queue for the kick below, not inside this work.
        if self.cores[ci].in_irq_softirq {
            self.cores[ci].in_irq_softirq = false;
            let req = self.cores[ci].softirq.pop_front().expect("softirq work was pending");
            self.softirq_complete(req);
            self.cores[ci].busy = false;
            self.kick(c);
            return;
        }
        let tid = self.cores[ci].current.expect("a core finished a step with no thread");
        let step = self.threads[tid.idx()].next.take().expect("step");
        // A thread's step runs under a plug, as submitters do (blk_start_plug/blk_finish_plug;
        // in 2.6.32 the queue plug that the submitter's wait unplugs has the same effect).
        self.plugging = self.cfg.scenario.queue.plugging == crate::scenario::Plugging::Task;
        self.cur_thread = Some(tid);
        let next = self.run_step(tid, step);
        self.plugging = false;
        self.flush_plug(tid);
        self.cur_thread = None;
        match next {
            Next::Continue(s) => self.threads[tid.idx()].next = Some(s),
            Next::Sleep(w) => {
                let t = &mut self.threads[tid.idx()];
                t.state = ThreadState::Sleeping;
                t.wait = Some(w);
                if w.is_iowait() {
                    let home = t.home;
                    self.account(home);
                    self.cores[home.idx()].nr_iowait += 1;
                }
            }
            Next::Idle => {
                let t = &mut self.threads[tid.idx()];
                t.state = ThreadState::Sleeping;
                t.wait = None;
            }
            Next::Exit => self.threads[tid.idx()].state = ThreadState::Exited,
        }
        self.cores[ci].busy = false;
        self.kick(c);
    }

    // ---- the job's process: read()/write() and io_submit() ---------------------------------

    fn step_cost(&self, tid: ThreadId, step: Step) -> u64 {
        match step {
            Step::Next => {
                let job = &self.jobs[self.job_of(tid).idx()];
                if job.buffered_read {
                    self.buffered_read_cost(job)
                } else if !job.has_more_to_issue() {
                    SYSCALL_NS
                } else if job.buffered {
                    // write() into the page cache: copy the pages in; over the dirty limit, also
                    // build and submit the writeback chunk.
                    let copy = SYSCALL_NS + PAGE_COPY_NS * job.bs.div_ceil(4096);
                    if self.dirty_total + self.writeback_total + job.bs > self.dirty_thresh {
                        let bios =
                            self.write_chunk_bytes().div_ceil(self.writeback_bio_bytes(self.devs[job.dev.idx()].queue.max_request_bytes()));
                        copy + WRITEBACK_CHUNK_NS + bios * (BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS)
                    } else {
                        copy
                    }
                } else {
                    let bios = job.bios_per_io(self.devs[job.dev.idx()].queue.max_request_bytes());
                    SYSCALL_NS + (BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS) * bios
                }
            }
            Step::RetryGetRequest => GET_REQUEST_NS + DISPATCH_NS,
            Step::KblockdWork => KBLOCKD_WORK_NS + DISPATCH_NS,
            Step::DirtyRecheck => SYSCALL_NS,
            Step::FlushWork | Step::FsyncWrite => WRITEBACK_CHUNK_NS + BIO_SUBMIT_NS + GET_REQUEST_NS + DISPATCH_NS,
            Step::Softirq => {
                let c = self.threads[tid.idx()].home.idx();
                self.cores[c].softirq.front().map_or(0, |&rq| self.softirq_cost(rq))
            }
            Step::Raid5d => self.raid5d_cost(tid),
            Step::RetryStripe => STRIPE_ADD_NS,
            Step::KdmWork => {
                let ThreadKind::KdmWork(dm) = self.threads[tid.idx()].kind else { unreachable!("not kdmwork") };
                let q = &self.kdm[dm.idx()].as_ref().expect("a dm device over blk-mq").1;
                q.front().map_or(0, |rq| DM_MAP_REQUEST_NS + GET_REQUEST_NS + BIO_CLONE_NS * self.reqs.get(rq.0).nr_bios as u64)
            }
            Step::RetryTag => GET_REQUEST_NS,
        }
    }

    /// The CPU time of completing one request in softirq context.
    /// - A plain request: the interrupt, the request, and `bio_endio` per bio.
    /// - A request-based dm clone: per clone bio, `end_clone_bio` ends it and calls
    ///   `blk_update_request` on the original, which ends the original's bio; with
    ///   `dm.partial_completion` the original is still unfinished after each of those calls, so
    ///   `blk_recalc_rq_segments` walks every bio still on it: N-1, N-2, … 0 visits, N(N-1)/2
    ///   in all. Then the original completes (`dm_softirq_done`, `dm_end_request`).
    fn softirq_cost(&self, rq: ReqId) -> u64 {
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

    fn job_of(&self, tid: ThreadId) -> JobId {
        match self.threads[tid.idx()].kind {
            ThreadKind::User(j) => j,
            k => panic!("{} ({k:?}) has no job", self.threads[tid.idx()].name),
        }
    }

    fn run_step(&mut self, tid: ThreadId, step: Step) -> Next {
        match step {
            Step::Next => {
                let j = self.job_of(tid);
                if self.jobs[j.idx()].buffered_read {
                    self.buffered_read(j)
                } else if !self.jobs[j.idx()].has_more_to_issue() {
                    self.after_submit(tid)
                } else if self.jobs[j.idx()].buffered {
                    self.buffered_write(j)
                } else {
                    self.issue_io(j);
                    self.submit_pending(tid)
                }
            }
            Step::RetryGetRequest => {
                // After sleeping in get_request_wait a process becomes a batcher.
                let now = self.now();
                self.threads[tid.idx()].set_batching(now);
                self.submit_pending(tid)
            }
            Step::KblockdWork => self.kblockd_work(tid),
            Step::DirtyRecheck => {
                let j = self.job_of(tid);
                self.balance_dirty_pages(j)
            }
            Step::FlushWork => self.flush_work(tid),
            Step::FsyncWrite => self.fsync_write(tid),
            Step::Raid5d => self.raid5d_step(tid),
            Step::RetryStripe => self.retry_stripe(tid),
            Step::KdmWork => self.kdm_map(tid, false),
            Step::RetryTag => match self.threads[tid.idx()].kind {
                ThreadKind::KdmWork(_) => self.kdm_map(tid, true),
                _ => self.submit_pending(tid),
            },
            Step::Softirq => {
                let c = self.threads[tid.idx()].home.idx();
                if let Some(rq) = self.cores[c].softirq.pop_front() {
                    self.softirq_complete(rq);
                }
                if self.cores[c].softirq.is_empty() {
                    self.cores[c].softirq_deferred = false;
                    Next::Idle
                } else {
                    Next::Continue(Step::Softirq)
                }
            }
        }
    }

    /// Builds the next I/O of job `j` as bios, split at the queue's `max_sectors_kb`.
    fn issue_io(&mut self, j: JobId) {
        let now = self.now();
        let job = &mut self.jobs[j.idx()];
        let (offset, bytes) = job.next_extent();
        let write = job.rw.is_write();
        let dev = job.dev;
        let tid = job.tid;
        let io = IoId(self.ios.insert(Io { owner: IoOwner::Job(j), bytes, bios_left: 0, started: now, sync: true }));
        let max = self.devs[dev.idx()].queue.max_request_bytes();
        let mut off = offset;
        let end = offset + bytes;
        let mut pieces = 0;
        while off < end {
            let len = (end - off).min(max);
            // An I/O over max_sectors: as blk_queue_split does, each piece is cut off the
            // front of what is left, so blktrace shows the rest queued (Q), then the split (X).
            let split_rest = if bytes > max { (end - off) as u32 } else { 0 };
            let bio = BioId(self.bios.insert(Bio { split_rest, ..Bio::new(io, dev, off / 512, len as u32, write, now) }));
            self.totals.bios_submitted += 1;
            *if write { &mut self.totals.pgpgout_bytes } else { &mut self.totals.pgpgin_bytes } += len;
            self.threads[tid.idx()].pending.push_back(bio);
            pieces += 1;
            off += len;
        }
        self.ios.get_mut(io.0).bios_left = pieces;
        let job = &mut self.jobs[j.idx()];
        job.inflight += 1;
    }

    /// Submits the thread's pending bios; sleeps in `get_request_wait` if the pool is full.
    fn submit_pending(&mut self, tid: ThreadId) -> Next {
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        match self.threads[tid.idx()].kind {
            ThreadKind::User(_) => self.after_submit(tid),
            ThreadKind::Flusher(_) => Next::Continue(Step::FlushWork),
            ThreadKind::Raid5d(_) => Next::Continue(Step::Raid5d),
            k => unreachable!("{k:?} submits no bios"),
        }
    }

    /// `generic_make_request` for each of the thread's pending bios, in order. A stacking
    /// driver may put the bios it makes at the front of the list (they go next, as with
    /// `current->bio_list`). Err: the thread must sleep; the bio stays first in line.
    fn submit_bios(&mut self, tid: ThreadId) -> Result<(), Wait> {
        while let Some(bio) = self.threads[tid.idx()].pending.pop_front() {
            // Q is traced when generic_make_request takes the bio (once, though it may sleep
            // and come back), so each bio's Q comes just before its G or M, as in blkparse.
            let b = self.bios.get_mut(bio.0);
            if !b.queued {
                b.queued = true;
                let b = *b;
                self.emit(b.dev, Action::Q, b.write, b.sector, b.split_rest.max(b.bytes), tid, bio.0, 0);
                if b.split_rest > b.bytes {
                    // blkparse's `X R 0 / 256`: where the bio was, and where the rest now starts.
                    let rest_at = Some((b.dev, b.sector + b.bytes as u64 / 512));
                    self.emit_from(b.dev, Action::X, b.write, b.sector, b.bytes, tid, bio.0, 0, rest_at);
                }
            }
            if let Err(wait) = self.make_request(bio, tid) {
                self.threads[tid.idx()].pending.push_front(bio);
                return Err(wait);
            }
        }
        Ok(())
    }

    /// After submitting: issue more (libaio below iodepth), wait for completions, fsync, or exit.
    fn after_submit(&mut self, tid: ThreadId) -> Next {
        let j = self.job_of(tid);
        let job = &self.jobs[j.idx()];
        if job.buffered_read {
            // Back in the read() loop: copy what has arrived, or wait for it.
            return Next::Continue(Step::Next);
        }
        if job.buffered && self.threads[tid.idx()].dirty_written > 0 {
            // Its balance_dirty_pages writeback is submitted (it slept in get_request_wait).
            return self.after_dirty_writeback(j);
        }
        let more = job.has_more_to_issue();
        if more && job.engine == IoEngine::Libaio && job.inflight < job.iodepth {
            Next::Continue(Step::Next)
        } else if job.inflight > 0 {
            Next::Sleep(Wait::Io)
        } else if more {
            Next::Continue(Step::Next)
        } else if job.needs_fsync() {
            // fsync: the caller writes back everything its file has dirty (`filemap_fdatawrite`,
            // in its own context, blocking), then waits for it (`filemap_fdatawait`).
            if job.dirty_bytes > 0 {
                return Next::Continue(Step::FsyncWrite);
            }
            self.jobs[j.idx()].fsync_waiting = true;
            Next::Sleep(Wait::Fsync)
        } else {
            self.job_finished(j);
            Next::Exit
        }
    }

    fn job_finished(&mut self, j: JobId) {
        let now = self.now();
        let job = &mut self.jobs[j.idx()];
        if job.done_at.is_none() && job.is_done() {
            job.done_at = Some(now);
            if self.jobs.iter().all(|j| j.done_at.is_some()) {
                self.finished_at = Some(now);
                // The last, partial interval (as iostat's final report): up to the moment the
                // last job ended, so a run shorter than a second has a point to chart.
                if self.history.back().is_none_or(|h| h.end != now) {
                    let snap = self.snapshot();
                    self.push_history(snap);
                }
            }
        }
    }

    // ---- the page cache: buffered writes, balance_dirty_pages, writeback --------------------

    /// A buffered write(): the data goes into the page cache as dirty pages. Above the
    /// background threshold the device's flusher is woken; above the dirty limit the writer
    /// sleeps in `balance_dirty_pages` until writeback brings it back under.
    fn buffered_write(&mut self, j: JobId) -> Next {
        let job = &mut self.jobs[j.idx()];
        let (off, len) = job.next_extent();
        job.dirty_extent(off, len);
        job.bytes_done += len;
        let dev = job.dev;
        self.dirty_total += len;
        // fio counts a buffered write() as done when it returns: bytes and IOPS at the
        // application, as fio reports them; iostat shows what reached the disk.
        self.totals.bytes_written += len;
        self.totals.ios_completed += 1;
        if self.dirty_total + self.writeback_total > self.background_thresh {
            self.wake_flusher(dev);
        }
        self.balance_dirty_pages(j)
    }

    /// `balance_dirty_pages` (2.6.2-2.6.39). Over the dirty limit, the writer first writes back
    /// `write_chunk` of its device's dirty pages itself (`writeback_inodes_wb`, in its own
    /// context: it may sleep in `get_request_wait` and become a batcher); having done that
    /// duty, write() returns. With nothing left to write back it sleeps for a pause that
    /// doubles, from one jiffy to HZ/10, each time it is still over when it wakes (a timer,
    /// not writeback progress).
    fn balance_dirty_pages(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j.idx()].tid;
        let dev = self.jobs[j.idx()].dev;
        let bdi_thresh = self.bdi_thresh();
        let (bdi_dirty, bdi_wb) = self.bdi_bytes(dev);
        // Not throttled: well under the limits, or neither this device nor the whole system
        // over its own (`dirty_exceeded` is either one).
        if !self.dirty_exceeded(bdi_dirty + bdi_wb) {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        let write_chunk = self.write_chunk_bytes();
        if bdi_dirty <= bdi_thresh || self.threads[tid.idx()].dirty_written >= write_chunk {
            return self.dirty_pause(tid);
        }
        let mut chunk = write_chunk - self.threads[tid.idx()].dirty_written;
        let max = self.devs[dev.idx()].queue.max_request_bytes();
        // Its own file first, then the device's others (the bdi's inode list).
        let order: Vec<usize> =
            std::iter::once(j.idx()).chain((0..self.jobs.len()).filter(|&i| i != j.idx() && self.jobs[i].dev == dev)).collect();
        let mut wrote = false;
        for i in order {
            while chunk > 0 {
                let piece = self.writeback_bio_bytes(max).min(chunk);
                let Some(len) = self.write_back(tid, JobId(i as u32), dev, piece, false) else { break };
                chunk = chunk.saturating_sub(len);
                self.threads[tid.idx()].dirty_written += len;
                wrote = true;
            }
        }
        if wrote {
            if let Err(wait) = self.submit_bios(tid) {
                return Next::Sleep(wait);
            }
            return self.after_dirty_writeback(j);
        }
        self.dirty_pause(tid)
    }

    /// The writer's chunk is submitted: under its share now, or "we've done our duty" (a whole
    /// chunk written), write() returns; else it pauses and checks again.
    fn after_dirty_writeback(&mut self, j: JobId) -> Next {
        let tid = self.jobs[j.idx()].tid;
        let dev = self.jobs[j.idx()].dev;
        let (d, w) = self.bdi_bytes(dev);
        if !self.dirty_exceeded(d + w) || self.threads[tid.idx()].dirty_written >= self.write_chunk_bytes() {
            self.finish_buffered_write(j);
            return Next::Continue(Step::Next);
        }
        self.dirty_pause(tid)
    }

    /// `balance_dirty_pages` (2.6.32-2.6.39) keeps a writer while the system is past halfway
    /// from the background to the dirty limit and either its device is over its share or the
    /// system over the dirty limit.
    fn dirty_exceeded(&self, bdi_bytes: u64) -> bool {
        let global = self.dirty_total + self.writeback_total;
        global > (self.background_thresh + self.dirty_thresh) / 2 && (bdi_bytes > self.bdi_thresh() || global > self.dirty_thresh)
    }

    /// A device's share of the dirty limit (`bdi_thresh`: equal shares for equal writers).
    fn bdi_thresh(&self) -> u64 {
        self.dirty_thresh / self.bdi_writers.max(1) as u64
    }

    /// Bytes of a device's files that are dirty, and under writeback.
    fn bdi_bytes(&self, dev: DevId) -> (u64, u64) {
        self.jobs.iter().filter(|x| x.dev == dev).fold((0, 0), |(d, w), x| (d + x.dirty_bytes, w + x.writeback_bytes))
    }

    /// `io_schedule_timeout(pause)` in `balance_dirty_pages`.
    fn dirty_pause(&mut self, tid: ThreadId) -> Next {
        let now = self.now();
        let th = &mut self.threads[tid.idx()];
        th.dirty_pause_ns = (th.dirty_pause_ns * 2).clamp(DIRTY_PAUSE_MIN_NS, DIRTY_PAUSE_MAX_NS);
        let at = now + th.dirty_pause_ns;
        self.events.schedule(at, Event::Timeout { thread: tid });
        Next::Sleep(Wait::DirtyThrottle)
    }

    /// How much one writeback bio carries: up to `max_sectors_kb` (`mpage_writepages`), or one
    /// 4 KiB block for XFS of 2.6.2, which wrote back through buffer heads.
    fn writeback_bio_bytes(&self, max: u64) -> u64 {
        match self.cfg.scenario.workload.filesystem {
            Filesystem::None => max,
            Filesystem::Xfs => 4096,
        }
    }

    /// write() returns: its latency includes the writeback and pauses it did.
    fn finish_buffered_write(&mut self, j: JobId) {
        let now = self.now();
        let tid = self.jobs[j.idx()].tid;
        let since = std::mem::replace(&mut self.jobs[j.idx()].write_since, now);
        self.latency.record(now - since);
        let th = &mut self.threads[tid.idx()];
        th.dirty_pause_ns = 0;
        th.dirty_written = 0;
    }

    /// `sync_writeback_pages`: what a throttled writer writes back, 1.5 × `ratelimit_pages`,
    /// which is memory / (CPUs × 32) pages, at least 16 and at most 4 MiB' worth
    /// (`writeback_set_ratelimit`, mm/page-writeback.c 2.6.32).
    fn write_chunk_bytes(&self) -> u64 {
        let s = &self.cfg.scenario;
        let pages = s.vm.mem_mb as u64 * 256 / (s.cpu.cores as u64 * 32);
        let ratelimit = pages.clamp(16, 1024);
        (ratelimit + ratelimit / 2) * 4096
    }

    fn wake_flusher(&mut self, dev: DevId) {
        let f = self.flushers[dev.idx()].expect("jobs write to a top-level device, which has a flusher");
        if self.threads[f.idx()].is_idle_kthread() {
            self.wake(f, Step::FlushWork);
        }
    }

    /// One step of a flusher: write back the next chunk of a file's dirty pages as one bio
    /// (up to `max_sectors_kb`), taking files in turn, `MAX_WRITEBACK_PAGES` at a time, while
    /// the system is over the background threshold or a file is being fsynced.
    fn flush_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Flusher(dev) = self.threads[tid.idx()].kind else { unreachable!("not a flusher") };
        let over_background = self.dirty_total + self.writeback_total > self.background_thresh;
        let jobs_here: Vec<usize> = (0..self.jobs.len()).filter(|&i| self.jobs[i].dev == dev).collect();
        let (mut cursor, mut chunk_left) = self.flush_cursor[dev.idx()];
        for _ in 0..=jobs_here.len() {
            let Some(&j) = jobs_here.get(cursor % jobs_here.len().max(1)) else { break };
            let wanted = self.jobs[j].dirty_bytes > 0 && (over_background || self.jobs[j].fsync_waiting);
            let nonblocking = self.cfg.scenario.vm.writeback == Writeback::Pdflush;
            if wanted && chunk_left > 0 && nonblocking && self.bdi_write_congested(dev) {
                // Background writeback is nonblocking: a congested device is skipped
                // (`wbc->encountered_congestion`) and the flusher waits for the congestion to
                // clear, rather than sleep in get_request_wait.
                self.flush_cursor[dev.idx()] = (cursor, chunk_left);
                return self.congestion_wait(tid);
            }
            if wanted && chunk_left > 0 {
                let max = self.devs[dev.idx()].queue.max_request_bytes();
                let piece = self.writeback_bio_bytes(max);
                let len = self.write_back(tid, JobId(j as u32), dev, piece, false).expect("dirty bytes present");
                chunk_left = chunk_left.saturating_sub(len);
                self.flush_cursor[dev.idx()] = (cursor, chunk_left);
                return self.submit_pending(tid);
            }
            cursor += 1;
            chunk_left = MAX_WRITEBACK_BYTES;
        }
        self.flush_cursor[dev.idx()] = (cursor, chunk_left);
        Next::Idle
    }

    /// One piece of an fsync's `filemap_fdatawrite` (WB_SYNC_ALL): the next dirty piece of the
    /// caller's file, submitted by the caller. Unlike background writeback it does not skip a
    /// congested device: it sleeps in `get_request_wait` like any writer.
    fn fsync_write(&mut self, tid: ThreadId) -> Next {
        let j = self.job_of(tid);
        let dev = self.jobs[j.idx()].dev;
        let piece = self.writeback_bio_bytes(self.devs[dev.idx()].queue.max_request_bytes());
        self.write_back(tid, j, dev, piece, true);
        self.submit_pending(tid)
    }

    /// `bdi_write_congested`: is the device writeback would write to congested? A request
    /// queue reports its own pool; dm reports its members' only with a congestion callout
    /// (`dm_any_congested`, 2.6.6+; before that a dm device was never congested); md asks its
    /// members (`md_congested`).
    fn bdi_write_congested(&self, dev: DevId) -> bool {
        let d = &self.devs[dev.idx()];
        let callout = self.cfg.scenario.dm.congestion_callout;
        match &d.kind {
            DevKind::Sd { .. } => d.queue.congested[1],
            DevKind::DmMpath { paths } => d.queue.congested[1] || (callout && paths.iter().any(|&p| self.bdi_write_congested(p))),
            DevKind::DmLinear { lower } => callout && self.bdi_write_congested(*lower),
            DevKind::Md { members } => members.iter().any(|&m| self.bdi_write_congested(m)),
        }
    }

    /// `blk_congestion_wait(WRITE, HZ/10)`: sleep until some queue leaves write congestion
    /// (`clear_queue_congested` wakes every waiter), or for 100 ms.
    fn congestion_wait(&mut self, tid: ThreadId) -> Next {
        let at = self.now() + CONGESTION_WAIT_NS;
        let th = &mut self.threads[tid.idx()];
        th.congestion_until = Some(at);
        if !th.congestion_timer_armed {
            th.congestion_timer_armed = true;
            self.events.schedule(at, Event::Timeout { thread: tid });
        }
        self.congestion_waiters.push(tid);
        Next::Sleep(Wait::Congestion)
    }

    /// Takes up to `max` bytes of job `j`'s oldest dirty pages for writeback and queues them
    /// as one bio from `tid` (submitted with its pending bios). Returns the bytes, or None
    /// when the file has nothing dirty.
    fn write_back(&mut self, tid: ThreadId, j: JobId, dev: DevId, max: u64, sync: bool) -> Option<u64> {
        let (off, len) = self.jobs[j.idx()].take_dirty(max)?;
        self.dirty_total -= len;
        self.writeback_total += len;
        let now = self.now();
        let io = IoId(self.ios.insert(Io { owner: IoOwner::Writeback(j), bytes: len, bios_left: 1, started: now, sync }));
        let bio = BioId(self.bios.insert(Bio::new(io, dev, off / 512, len as u32, true, now)));
        self.totals.bios_submitted += 1;
        self.totals.pgpgout_bytes += len;
        self.threads[tid.idx()].pending.push_back(bio);
        Some(len)
    }

    /// A writeback chunk reached the disk: its pages are clean. Writers under the limit again
    /// leave `balance_dirty_pages`; an fsync whose pages are all clean returns.
    fn writeback_done(&mut self, j: JobId, bytes: u64) {
        self.writeback_total -= bytes;
        self.jobs[j.idx()].writeback_bytes -= bytes;
        let job = &self.jobs[j.idx()];
        if job.fsync_waiting && !job.needs_fsync() {
            self.jobs[j.idx()].fsync_waiting = false;
            let tid = self.jobs[j.idx()].tid;
            self.wake(tid, Step::Next);
        }
    }

    // ---- the page cache: buffered reads and readahead ---------------------------------------

    /// The readahead window: `read_ahead_kb` for sequential readers (at least a page: with
    /// readahead off a read() still reads the pages it needs); a random reader reads just its
    /// block (`ondemand_readahead`: a small random read is read as is).
    fn ra_bytes(&self, job: &Job) -> u64 {
        if job.rw.is_random() {
            job.bs.div_ceil(4096) * 4096
        } else {
            (self.cfg.scenario.queue.read_ahead_kb as u64 * 1024).max(4096)
        }
    }

    /// The readahead windows (stream ranges) a read() at `pos` must start now: the window
    /// holding `pos` if none does (`page_cache_sync_readahead`), and, when the reader has
    /// reached the newest window, the one after it (`page_cache_async_readahead` at the
    /// `PG_readahead` mark on the window's first page).
    fn ra_plan(&self, job: &Job, pos: u64) -> Vec<(u64, u64)> {
        let ra = self.ra_bytes(job);
        let mut out = Vec::new();
        if job.rw.is_random() {
            if !job.ra.iter().any(|w| w.start <= pos && pos < w.end) {
                out.push((pos, job.window_end(pos, ra)));
            }
            return out;
        }
        if pos < job.ra_next && !job.ra.iter().any(|w| w.start <= pos && pos < w.end) {
            // Behind the readahead front but not in the cache: reclaim took it. Read it again
            // (`page_cache_sync_readahead` on the miss), up to the next window still there.
            let next_start = job.ra.iter().map(|w| w.start).filter(|&s| s > pos).min().unwrap_or(job.ra_next);
            out.push((pos, job.window_end(pos, ra).min(next_start)));
            return out;
        }
        let mut next = job.ra_next;
        while next <= pos {
            let end = job.window_end(next, ra);
            out.push((next, end));
            next = end;
        }
        let newest = out.last().map(|w| w.0).or(job.ra.back().map(|w| w.start)).unwrap_or(0);
        if self.cfg.scenario.queue.read_ahead_kb > 0 && pos >= newest {
            out.push((next, job.window_end(next, ra)));
        }
        out
    }

    /// The bios a readahead window of `len` bytes becomes: one per page when the job reads a
    /// device node (the block device's pages are read through buffer heads,
    /// `block_read_full_page`; inferred for seed 000, see the lesson), else one per contiguous
    /// run up to the queue's `max_sectors_kb` (`mpage_readpages`).
    fn ra_bio_bytes(&self, job: &Job) -> u64 {
        match self.cfg.scenario.workload.filesystem {
            Filesystem::None => 4096,
            Filesystem::Xfs => self.devs[job.dev.idx()].queue.max_request_bytes(),
        }
    }

    /// What the next read() step costs: entering read(), starting the planned windows (a page
    /// each, a bio per piece, a clone per bio under dm), and copying what is up to date.
    fn buffered_read_cost(&self, job: &Job) -> u64 {
        let mut cost = if job.read_left == 0 { SYSCALL_NS } else { 0 };
        let want = if job.read_left == 0 { job.bs } else { job.read_left };
        let ready: u64 = job.ra.iter().filter(|w| w.done && w.end > job.read_pos).map(|w| w.end - w.start.max(job.read_pos)).sum();
        let copied = want.min(ready);
        let pages: u64 = self.ra_plan(job, job.read_pos + copied).iter().map(|(s, e)| (e - s).div_ceil(4096)).sum();
        let bios = pages * 4096 / self.ra_bio_bytes(job).max(4096);
        let clone = if matches!(self.devs[job.dev.idx()].kind, DevKind::DmMpath { .. }) { BIO_CLONE_NS } else { 0 };
        cost += pages * RA_PAGE_NS + bios.max(pages.min(1)) * (BIO_SUBMIT_NS + clone);
        // md: pages that go through the stripe cache cost get_active_stripe + add_stripe_bio.
        if let DevKind::Md { members } = &self.devs[job.dev.idx()].kind {
            let member_max = self.devs[members[0].idx()].queue.max_request_bytes();
            if self.ra_bio_bytes(job) > member_max && !self.cfg.scenario.md.split_aligned_reads {
                cost += pages * STRIPE_ADD_NS;
            }
        }
        cost + copied.div_ceil(4096) * PAGE_COPY_NS
    }

    /// A buffered read() step (`do_generic_file_read`): start the read, start readahead, copy
    /// the pages that are up to date, and return, or sleep until the next page is.
    fn buffered_read(&mut self, j: JobId) -> Next {
        let now = self.now();
        let tid = self.jobs[j.idx()].tid;
        if self.jobs[j.idx()].read_left == 0 {
            if !self.jobs[j.idx()].has_more_to_issue() {
                self.job_finished(j);
                return Next::Exit;
            }
            let job = &mut self.jobs[j.idx()];
            job.start_read();
            job.write_since = now;
            if job.rw.is_random() {
                // Windows of earlier random reads that are read are dropped from the plan.
                let pos = job.read_pos;
                job.ra.retain(|w| !w.done || (w.start <= pos && pos < w.end));
            }
        }
        // Copy what is up to date, window by window. A window whose pages reclaim took (more
        // than `vm.mem_mb` of reads were added after it) is gone: readahead reads it again.
        let (added, cache) = (self.totals.page_cache_read_added_bytes, self.cfg.scenario.vm.mem_mb as u64 * (1 << 20));
        let job = &mut self.jobs[j.idx()];
        while job.read_left > 0 {
            let pos = job.read_pos;
            let Some(i) = job.ra.iter().position(|w| w.start <= pos && pos < w.end) else { break };
            let w = &job.ra[i];
            if !w.done {
                break;
            }
            if added - w.added_at > cache {
                let w = job.ra.remove(i).expect("found");
                self.totals.readahead_thrashed_bytes += w.end - pos;
                break;
            }
            let n = job.read_left.min(w.end - pos);
            job.read_pos += n;
            job.read_left -= n;
        }
        while job.ra.front().is_some_and(|w| w.done && w.end <= job.read_pos) {
            job.ra.pop_front();
        }
        // Where the copy stopped (or the next read() starts), readahead starts what is missing.
        let pos = job.read_pos;
        for (start, end) in self.ra_plan(&self.jobs[j.idx()], pos) {
            self.submit_readahead(j, start, end);
        }
        let job = &mut self.jobs[j.idx()];
        if job.read_left == 0 {
            // read() returns: the bytes count as read, as dd and fio see them.
            let len = job.read_len;
            job.bytes_done += len;
            let since = job.write_since;
            self.latency.record(now - since);
            self.totals.bytes_read += len;
            self.totals.buffered_read_bytes += len;
            self.totals.ios_completed += 1;
            self.job_finished(j);
        }
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        if self.jobs[j.idx()].read_left == 0 {
            Next::Continue(Step::Next)
        } else {
            // lock_page: sleep until the page is read (PG_locked cleared by the bio's end).
            Next::Sleep(Wait::Io)
        }
    }

    /// Starts one readahead window: allocates its pages and builds its bios, queued on the
    /// reader's pending list (submitted by the caller).
    fn submit_readahead(&mut self, j: JobId, start: u64, end: u64) {
        let now = self.now();
        let piece = self.ra_bio_bytes(&self.jobs[j.idx()]);
        let job = &self.jobs[j.idx()];
        let (dev, tid) = (job.dev, job.tid);
        let off0 = job.stream_offset(start);
        let dev_end = off0 + (end - start);
        // A bio never crosses a multiple of its size (for md, a chunk boundary): a first piece
        // up to the next multiple, whole pieces, and what is left.
        let first = (dev_end - off0).min(piece - off0 % piece);
        let whole = (dev_end - off0 - first) / piece;
        let tail = (dev_end - off0 - first) % piece;
        let mut segments = [(off0, first, (first > 0) as u64), (off0 + first, piece, whole), (dev_end - tail, tail, (tail > 0) as u64)];
        if first == piece {
            // The first piece is a whole one too.
            segments[1] = (off0, piece, whole + 1);
            segments[0].2 = 0;
        }
        let nr_bios: u64 = segments.iter().map(|s| s.2).sum();
        let io = IoId(self.ios.insert(Io {
            owner: IoOwner::Readahead(j),
            bytes: end - start,
            bios_left: nr_bios as u32,
            started: now,
            sync: true,
        }));
        // Equal bios back to back go as one run (`Bio::pages`) into a request-based queue:
        // what a window's 128 page bios cost in the simulator, not what they cost the kernel
        // (that is charged per bio). The trace shows each bio, so with it on each is its own.
        let runs = !self.trace.enabled() && !self.devs[dev.idx()].is_bio_based();
        let run_max = if runs { (u32::MAX as u64 / piece).max(1) } else { 1 };
        for (mut off, len, mut count) in segments {
            while count > 0 {
                let pages = count.min(run_max);
                let mut b = Bio::new(io, dev, off / 512, (len * pages) as u32, false, now);
                b.pages = pages as u32;
                let bio = BioId(self.bios.insert(b));
                self.totals.bios_submitted += pages;
                self.totals.pgpgin_bytes += len * pages;
                self.threads[tid.idx()].pending.push_back(bio);
                off += len * pages;
                count -= pages;
            }
        }
        let added_at = self.totals.page_cache_read_added_bytes;
        self.totals.page_cache_read_added_bytes += end - start;
        let job = &mut self.jobs[j.idx()];
        // Windows stay in stream order (a window read again after reclaim goes back in place).
        let at = job.ra.iter().position(|w| w.start > start).unwrap_or(job.ra.len());
        job.ra.insert(at, RaWindow { start, end, io, done: false, added_at });
        if !job.rw.is_random() && end > job.ra_next {
            job.ra_next = end;
        }
    }

    /// A readahead window's pages are up to date: wake the reader if it waits for one of them.
    fn readahead_done(&mut self, j: JobId, io: IoId) {
        let job = &mut self.jobs[j.idx()];
        if let Some(w) = job.ra.iter_mut().find(|w| w.io == io) {
            w.done = true;
        }
        let pos = job.read_pos;
        let ready = job.ra.iter().any(|w| w.done && w.start <= pos && pos < w.end);
        let tid = job.tid;
        if ready && self.threads[tid.idx()].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }

    // ---- request-based dm over blk-mq: kdmwork and the clone allocation --------------------------

    /// `map_tio_request` on the `kdmwork` thread: clone the next request onto the path, the way
    /// `dm.clone_alloc` says, and insert the clone (`blk_insert_cloned_request`, which runs the
    /// blk-mq queue asynchronously, through kblockd).
    /// - `sleep` (e5863d9a): `blk_get_request(GFP_KERNEL)` on the path. With no free tag,
    ///   `blk_mq_alloc_request` runs the hardware queue once and tries again, then sleeps in
    ///   `bt_get`; woken, it only tries again (3.18-4.0-rc: no run inside the loop), and sleeps
    ///   again. Every other dm request waits behind it.
    /// - `mempool`: a clone from dm's own pool; the path's tag is taken at dispatch.
    /// - `nowait` (the fix): `GFP_ATOMIC`; with no tag, `DM_MAPIO_REQUEUE`: the original goes
    ///   back to the front of the dm queue, run again by the next clone's completion.
    fn kdm_map(&mut self, tid: ThreadId, retry: bool) -> Next {
        use crate::scenario::CloneAlloc;
        let now = self.now();
        let ThreadKind::KdmWork(dm) = self.threads[tid.idx()].kind else { unreachable!("not kdmwork") };
        let Some(&rq) = self.kdm[dm.idx()].as_ref().expect("kdmwork has a queue").1.front() else { return Next::Idle };
        let path = self.select_path(dm, false).expect("a dm device has a path");
        let (write, sector, bytes) = {
            let r = self.reqs.get(rq.0);
            (r.write, r.sector, r.bytes)
        };
        let tag = match self.cfg.scenario.dm.clone_alloc {
            CloneAlloc::Mempool => None,
            CloneAlloc::Nowait => match self.devs[path.idx()].queue.tags.get() {
                Some(t) => Some(t),
                None => {
                    self.kdm[dm.idx()].as_mut().expect("checked").1.pop_front();
                    let owner = self.owner(rq);
                    self.devs[dm.idx()].queue.elevator.requeue(rq, write, sector, sector + bytes / 512, now, owner);
                    return self.kdm_next(dm);
                }
            },
            CloneAlloc::Sleep => {
                let mut t = self.devs[path.idx()].queue.tags.get();
                if t.is_none() && !retry {
                    // __blk_mq_run_hw_queue, then the sleeping attempt.
                    self.run_queue(path);
                    t = self.devs[path.idx()].queue.tags.get();
                }
                match t {
                    Some(t) => Some(t),
                    None => {
                        self.devs[path.idx()].queue.mq.as_mut().expect("a blk-mq path").sleep(tid);
                        self.emit(path, Action::S, write, sector, bytes as u32, tid, rq.0, 0);
                        return Next::Sleep(Wait::Tag { dev: path });
                    }
                }
            }
        };
        self.kdm[dm.idx()].as_mut().expect("checked").1.pop_front();
        self.insert_clone(rq, path, tag, tid);
        let cpu = self.threads[tid.idx()].home;
        self.run_queue_async(path, cpu);
        self.kdm_next(dm)
    }

    fn kdm_next(&self, dm: DevId) -> Next {
        if self.kdm[dm.idx()].as_ref().expect("kdmwork has a queue").1.is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::KdmWork)
        }
    }

    // ---- md RAID5 (2.6.20 raid5.c): make_request, the stripe cache and raid5d ------------------

    fn raid5_of(&self, dev: DevId) -> usize {
        self.raid5.iter().position(|r| r.dev == dev).expect("an md device has its array")
    }

    /// A bio made by a stacking driver from `parent`, for `dev` at `sector`. The caller puts it
    /// at the front of the submitter's pending list, so it is submitted next.
    /// `from_sector` is where the piece starts on the parent's device (the remap's origin).
    #[allow(clippy::too_many_arguments)]
    fn child_bio(&mut self, parent: BioId, dev: DevId, sector: u64, bytes: u32, tid: ThreadId, split: bool, from_sector: u64) -> BioId {
        let now = self.now();
        let p = self.bios.get_mut(parent.0);
        p.remaining += 1;
        let (io, write, psector, pdev) = (p.io, p.write, p.sector, p.dev);
        let child = Bio { parent: Some(parent), ..Bio::new(io, dev, sector, bytes, write, now) };
        let id = BioId(self.bios.insert(child));
        self.totals.bios_submitted += 1;
        if split {
            // The parent, split where this piece starts on the parent's device.
            self.emit_from(pdev, Action::X, write, psector, bytes, tid, id.0, parent.0, Some((pdev, from_sector)));
        }
        self.emit_from(dev, Action::A, write, sector, bytes, tid, id.0, parent.0, Some((pdev, from_sector)));
        id
    }

    /// One piece of a bio a stacking driver took apart is done; the last one ends the bio.
    fn bio_piece_done(&mut self, bio: BioId) {
        let b = self.bios.get_mut(bio.0);
        b.remaining -= 1;
        if b.remaining == 0 {
            self.end_bio(bio);
        }
    }

    /// raid5's `make_request`. A read first tries `chunk_aligned_read`: inside one chunk and
    /// within the member's `max_sectors_kb` (`bio_fits_rdev`), it goes straight to the member
    /// that holds it; with `md.split_aligned_reads` (v4.3+) an oversized one is split to fit.
    /// Anything else is mapped onto stripe heads, one page at a time: `get_active_stripe`,
    /// `add_stripe_bio`, `release_stripe` (which queues the head for raid5d). With no free head
    /// the submitter sleeps on `wait_for_stripe`; the bio remembers how far it got.
    /// Writes always go through the stripe cache (read-modify-write, reconstruct-write or
    /// full-stripe writes, see `Raid5::handle_stripe`).
    fn md_make_request(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let now = self.now();
        let r = self.raid5_of(self.bios.get(bio_id.0).dev);
        let bio = *self.bios.get(bio_id.0);
        let chunk = self.raid5[r].chunk_sectors;
        let member_max = self.devs[self.raid5[r].members[0].idx()].queue.max_request_bytes();
        if bio.mapped == 0 && bio.remaining == 0 {
            self.devs[bio.dev.idx()].stats.start(now);
            // The bias that keeps the bio alive while it is being mapped (bi_phys_segments = 1).
            // Its await counts from here, where it became in flight, so that iostat's
            // avgqu-sz = (r/s + w/s) × await holds on md as on every other device.
            let b = self.bios.get_mut(bio_id.0);
            b.remaining = 1;
            b.started = now;
        }
        let aligned = in_chunk_boundary(bio.sector, bio.bytes as u64, chunk);
        let mut pending = Vec::new();
        if !bio.write && aligned && bio.bytes as u64 <= member_max {
            // chunk_aligned_read: one piece per chunk.
            let mut off = 0u64;
            while off < bio.bytes as u64 {
                let logical = bio.sector + off / 512;
                let len = (bio.bytes as u64 - off).min((chunk - logical % chunk) * 512);
                let m = self.raid5[r].map(logical);
                pending.push((self.raid5[r].members[m.disk as usize], m.sector, len as u32, off > 0, logical));
                off += len;
            }
        } else if !bio.write && aligned && self.cfg.scenario.md.split_aligned_reads {
            let m = self.raid5[r].map(bio.sector);
            let member = self.raid5[r].members[m.disk as usize];
            let mut off = 0u64;
            while off < bio.bytes as u64 {
                let len = (bio.bytes as u64 - off).min(member_max);
                pending.push((member, m.sector + off / 512, len as u32, off > 0, bio.sector + off / 512));
                off += len;
            }
        } else {
            while (self.bios.get(bio_id.0).mapped as u64) < bio.bytes as u64 {
                let off = self.bios.get(bio_id.0).mapped as u64;
                let m = self.raid5[r].map(bio.sector + off / 512);
                let raid = &mut self.raid5[r];
                let Some(h) = raid.get_active_stripe(m.sector) else {
                    raid.waiters.push_back(tid);
                    return Err(Wait::Stripe);
                };
                let head = raid.head_mut(h);
                head.parity = m.parity;
                head.pieces.push(Piece { bio: bio_id, disk: m.disk, write: bio.write, issued: false });
                let b = self.bios.get_mut(bio_id.0);
                b.mapped += STRIPE_BYTES as u32;
                b.remaining += 1;
                self.release_stripe(r, h);
            }
        }
        // Children go first in line, in order, ahead of whatever else the thread has pending.
        let children: Vec<BioId> =
            pending.iter().map(|&(dev, sector, bytes, split, from)| self.child_bio(bio_id, dev, sector, bytes, tid, split, from)).collect();
        for id in children.into_iter().rev() {
            self.threads[tid.idx()].pending.push_front(id);
        }
        self.bios.get_mut(bio_id.0).mapped = bio.bytes;
        // Drop the bias: if every piece is already done, the bio ends here.
        self.bio_piece_done(bio_id);
        Ok(())
    }

    /// What raid5d's next `handle_stripe` costs: the state machine, a bio per member page it
    /// starts reading, and a page copy per piece it returns.
    fn raid5d_cost(&self, tid: ThreadId) -> u64 {
        let ThreadKind::Raid5d(dev) = self.threads[tid.idx()].kind else { unreachable!("not raid5d") };
        let raid = &self.raid5[self.raid5_of(dev)];
        let Some(&h) = raid.handle_list.front() else { return STRIPE_HANDLE_NS };
        let head = raid.head(h);
        let mut ios = 0;
        let mut copies = 0;
        let mut seen = crate::raid5::Members::default();
        for p in &head.pieces {
            let d = p.disk as usize;
            if head.uptodate[d] || p.issued {
                copies += 1;
            } else if !head.reading[d] && !seen.get(d) {
                seen.set(d);
                ios += 1;
            }
        }
        // A write batch also writes parity and XORs each page it touches.
        let writes = head.pieces.iter().any(|p| p.write && !p.issued) as u64;
        STRIPE_HANDLE_NS + (ios + writes) * BIO_SUBMIT_NS + copies * PAGE_COPY_NS + (ios + writes) * XOR_PAGE_NS
    }

    /// One `handle_stripe` by raid5d: start reading the member pages its pieces need, return
    /// the pieces whose pages are up to date (copying the data into the bio), and free the head
    /// once nothing is left on it, waking `wait_for_stripe` by the 3/4 rule.
    fn raid5d_step(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Raid5d(dev) = self.threads[tid.idx()].kind else { unreachable!("not raid5d") };
        let r = self.raid5_of(dev);
        let now = self.now();
        let Some(h) = self.raid5[r].handle_list.pop_front() else { return Next::Idle };
        self.raid5[r].head_mut(h).queued = false;
        let sector = self.raid5[r].head(h).sector;
        let mut out = std::mem::take(&mut self.stripe_handle);
        self.raid5[r].handle_stripe_into(h, &mut out);
        for (disk, write) in out.reads.iter().map(|&d| (d, false)).chain(out.writes.iter().map(|&d| (d, true))) {
            let member = self.raid5[r].members[disk as usize];
            let owner = if write {
                IoOwner::StripeWrite { md: r as u16, head: h, disk }
            } else {
                IoOwner::StripeRead { md: r as u16, head: h, disk }
            };
            let io = IoId(self.ios.insert(Io { owner, bytes: STRIPE_BYTES, bios_left: 1, started: now, sync: !write }));
            let bio = BioId(self.bios.insert(Bio::new(io, member, sector, STRIPE_BYTES as u32, write, now)));
            self.totals.bios_submitted += 1;
            self.threads[tid.idx()].pending.push_back(bio);
        }
        self.totals.stripe_returned_bytes += out.done.len() as u64 * STRIPE_BYTES;
        for &bio in &out.done {
            self.bio_piece_done(bio);
        }
        if out.idle && self.raid5[r].free(h) {
            // wake_up(&conf->wait_for_stripe): every sleeper wakes and checks again.
            while let Some(w) = self.raid5[r].waiters.pop_front() {
                self.wake(w, Step::RetryStripe);
            }
        }
        self.stripe_handle = out;
        if let Err(wait) = self.submit_bios(tid) {
            return Next::Sleep(wait);
        }
        if self.raid5[r].handle_list.is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::Raid5d)
        }
    }

    /// `release_stripe` of a head with work: it goes on `handle_list` and raid5d is woken
    /// (`md_wakeup_thread`).
    fn release_stripe(&mut self, r: usize, h: u32) {
        let raid5d = self.raid5[r].raid5d;
        if self.raid5[r].queue(h) && self.threads[raid5d.idx()].is_idle_kthread() {
            self.wake(raid5d, Step::Raid5d);
        }
    }

    /// `raid5_end_read_request` / `raid5_end_write_request` (softirq): the member page is read
    /// (up to date) or written (on the disk, and still up to date); the head goes back to raid5d.
    fn stripe_io_done(&mut self, r: usize, h: u32, disk: u16, write: bool) {
        let head = self.raid5[r].head_mut(h);
        if write {
            head.writing[disk as usize] = false;
        } else {
            head.reading[disk as usize] = false;
        }
        head.uptodate[disk as usize] = true;
        self.release_stripe(r, h);
    }

    /// Woken on `wait_for_stripe`: the wait condition is checked again; if it holds, the
    /// thread goes on mapping its bio, else it sleeps again.
    fn retry_stripe(&mut self, tid: ThreadId) -> Next {
        let bio = *self.threads[tid.idx()].pending.front().expect("a stripe sleeper has its bio");
        let r = self.raid5_of(self.bios.get(bio.0).dev);
        if !self.raid5[r].can_proceed() {
            self.raid5[r].waiters.push_back(tid);
            return Next::Sleep(Wait::Stripe);
        }
        self.raid5[r].unblock();
        self.submit_pending(tid)
    }

    // ---- kblockd: queue runs punted to a worker thread ---------------------------------------

    /// `blk_run_queue_async`: queue the device's run on this CPU's kblockd worker (once).
    /// It cancels an armed `blk_delay_queue` timer first (`__cancel_delayed_work`): the run
    /// happens now, not when the timer would have fired.
    fn run_queue_async(&mut self, dev: DevId, cpu: CoreId) {
        self.delay_armed[dev.idx()] = None;
        if self.run_queued[dev.idx()] {
            return;
        }
        self.run_queued[dev.idx()] = true;
        self.kblockd_queue_work(dev, cpu);
    }

    /// `blk_delay_queue(q, SCSI_QUEUE_DELAY)`: run the queue from kblockd after a delay, on the
    /// same `delay_work` as `blk_run_queue_async`: nothing happens if that work is pending
    /// (its timer armed, or queued on kblockd).
    fn delay_queue(&mut self, dev: DevId) {
        if self.run_queued[dev.idx()] || self.delay_armed[dev.idx()].is_some() {
            return;
        }
        let due = self.now() + SCSI_QUEUE_DELAY_NS;
        self.delay_armed[dev.idx()] = Some((due, CoreId(self.cur_cpu)));
        if !self.delay_event[dev.idx()] {
            self.delay_event[dev.idx()] = true;
            self.events.schedule(due, Event::DelayWork { dev });
        }
    }

    /// The pending `delay_work` goes on this CPU's kblockd list, and the worker wakes.
    fn kblockd_queue_work(&mut self, dev: DevId, cpu: CoreId) {
        self.kblockd_queue[cpu.idx()].push_back(dev);
        // kblockd/N are the threads right after the ksoftirqds.
        let worker = ThreadId(self.cores.len() as u32 + cpu.0 as u32);
        debug_assert!(matches!(self.threads[worker.idx()].kind, ThreadKind::Kblockd(c) if c == cpu));
        if self.threads[worker.idx()].is_idle_kthread() {
            self.wake(worker, Step::KblockdWork);
        }
    }

    fn kblockd_work(&mut self, tid: ThreadId) -> Next {
        let ThreadKind::Kblockd(cpu) = self.threads[tid.idx()].kind else { unreachable!("not kblockd") };
        if let Some(dev) = self.kblockd_queue[cpu.idx()].pop_front() {
            self.run_queued[dev.idx()] = false;
            self.run_queue(dev);
        }
        if self.kblockd_queue[cpu.idx()].is_empty() {
            Next::Idle
        } else {
            Next::Continue(Step::KblockdWork)
        }
    }

    // ---- the block layer: __make_request, get_request, the elevator -----------------------

    /// `__make_request`: merge the bio into a waiting request, or allocate a new request and
    /// insert it. Err: the request pool is full and the caller must sleep.
    fn make_request(&mut self, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let now = self.now();
        let bio = *self.bios.get(bio_id.0);
        let dev = bio.dev;
        let di = dev.idx();
        match self.devs[di].kind {
            DevKind::Md { .. } => return self.md_make_request(bio_id, tid),
            DevKind::DmLinear { lower } => {
                // dm_request → __map_bio: the clone goes to the lower device next, in this
                // submitter's context (it may sleep there in get_request_wait).
                self.devs[di].stats.start(now);
                let b = self.bios.get_mut(bio_id.0);
                b.mapped = bio.bytes;
                b.started = now;
                let id = self.child_bio(bio_id, lower, bio.sector + crate::block::LVM_PE_START_SECTORS, bio.bytes, tid, false, bio.sector);
                self.threads[tid.idx()].pending.push_front(id);
                return Ok(());
            }
            _ => {}
        }
        let max = self.devs[di].queue.max_request_bytes();
        // A run (`Bio::pages`) goes where its first bio would go; as many of the rest follow
        // it there as would one by one (`run_fit`), and the others are submitted next.
        let page = bio.page_bytes() as u64;
        let first_end = bio.sector + page / 512;
        // attempt_plug_merge: a request of this step that is still on the plug, newest first.
        if self.plugging {
            for i in (0..self.plug.len()).rev() {
                let rq = self.plug[i];
                let r = self.reqs.get(rq.0);
                if r.dev != dev || r.write != bio.write || r.bytes + page > max {
                    continue;
                }
                if r.sector + r.bytes / 512 == bio.sector {
                    let fit = self.run_fit(bio_id, rq, i + 1, false, max);
                    self.merge_bios(rq, bio_id, fit, false, tid);
                    return Ok(());
                }
                if first_end == r.sector {
                    self.merge_bios(rq, bio_id, 1, true, tid);
                    return Ok(());
                }
            }
        }
        // Back merge: a waiting request that ends where this bio starts.
        if let Some(rq) = self.devs[di].queue.elevator.back_candidate(bio.write, bio.sector) {
            if self.reqs.get(rq.0).bytes + page <= max {
                let fit = self.run_fit(bio_id, rq, 0, true, max);
                self.merge_bios(rq, bio_id, fit, false, tid);
                return Ok(());
            }
        }
        if let Some(rq) = self.devs[di].queue.elevator.front_candidate(bio.write, first_end) {
            if self.reqs.get(rq.0).bytes + page <= max {
                self.merge_bios(rq, bio_id, 1, true, tid);
                return Ok(());
            }
        }
        // blk-mq: the request is a tag, or the submitter sleeps in bt_get.
        let mut tag = None;
        if self.devs[di].queue.mq.is_some() {
            let q = &mut self.devs[di].queue;
            match q.tags.get() {
                Some(t) => tag = Some(t),
                None => {
                    q.mq.as_mut().expect("checked").sleep(tid);
                    self.emit(dev, Action::S, bio.write, bio.sector, bio.bytes, tid, bio_id.0, 0);
                    return Err(Wait::Tag { dev });
                }
            }
        } else {
            self.get_request(dev, bio_id, tid)?;
        }
        // A run's first bio makes the request; the rest try to merge next, one by one's way.
        self.split_run(bio_id, 1, tid);
        let bio = *self.bios.get(bio_id.0);
        let sector_end = bio.sector + bio.bytes as u64 / 512;
        // Room for every bio that can merge in up to max_sectors (a 512 KiB request of page
        // bios holds 128): growing the list one bio at a time was an eighth of the run time.
        let mut bios = self.bio_lists.pop().unwrap_or_default();
        bios.reserve((max / bio.bytes.max(512) as u64).clamp(1, 256) as usize);
        bios.push(bio_id);
        let rq = ReqId(self.reqs.insert(Request {
            dev,
            write: bio.write,
            sector: bio.sector,
            bytes: bio.bytes as u64,
            bios,
            nr_bios: 1,
            alloc_at: now,
            tag,
            submitter: tid,
            sync: self.ios.get(bio.io.0).sync,
            clone_of: None,
            nr_clone_bios: 0,
        }));
        self.devs[di].stats.start(now);
        self.emit(dev, Action::G, bio.write, bio.sector, bio.bytes, tid, rq.0, bio_id.0);
        if self.plugging {
            if !self.plug.iter().any(|r| self.reqs.get(r.0).dev == dev) {
                self.emit(dev, Action::P, bio.write, bio.sector, 0, tid, rq.0, 0);
            }
            self.plug.push(rq);
        } else {
            let owner = self.owner(rq);
            self.devs[di].queue.elevator.add(rq, bio.write, bio.sector, sector_end, now, owner);
            self.emit(dev, Action::I, bio.write, bio.sector, bio.bytes, tid, rq.0, 0);
            self.run_queue(dev);
        }
        Ok(())
    }

    /// `get_request` (2.6): the allocation that fills the pool marks it full and makes its
    /// process a batcher; while full, only batchers allocate, and never past 3/2 of
    /// nr_requests. Everyone else sleeps in get_request_wait.
    fn get_request(&mut self, dev: DevId, bio_id: BioId, tid: ThreadId) -> Result<(), Wait> {
        let now = self.now();
        let bio = *self.bios.get(bio_id.0);
        let q = &mut self.devs[dev.idx()].queue;
        let dir = bio.write as usize;
        let th = &mut self.threads[tid.idx()];
        let mut refuse = q.draining;
        if q.pool_count[dir] + 1 >= q.nr_requests {
            if !q.full[dir] {
                th.set_batching(now);
                q.full[dir] = true;
            } else if !th.is_batching(now) {
                refuse = true;
            }
        }
        if refuse || q.pool_count[dir] >= 3 * q.nr_requests / 2 {
            q.waiters[dir].push_back(tid);
            self.emit(dev, Action::S, bio.write, bio.sector, bio.bytes, tid, bio_id.0, 0);
            return Err(Wait::GetRequest { dev, write: bio.write });
        }
        if th.is_batching(now) {
            th.batch_left -= 1;
        }
        q.pool_count[dir] += 1;
        if q.pool_count[dir] >= q.congestion_on() {
            q.congested[dir] = true;
        }
        assert!(q.pool_count[dir] <= 3 * q.nr_requests / 2, "request pool over 3/2 nr_requests");
        Ok(())
    }

    /// `blk_finish_plug`: the step's requests go into their elevators in the order they were
    /// made, then each queue they went to is unplugged and run.
    fn flush_plug(&mut self, tid: ThreadId) {
        if self.plug.is_empty() {
            return;
        }
        let now = self.now();
        let mut plug = std::mem::take(&mut self.plug);
        // A scratch list kept between calls: a flush per step must not allocate.
        let mut devs = std::mem::take(&mut self.plug_devs);
        for &rq in &plug {
            let r = self.reqs.get(rq.0);
            let (dev, write, sector, bytes) = (r.dev, r.write, r.sector, r.bytes);
            let owner = self.owner(rq);
            self.devs[dev.idx()].queue.elevator.add(rq, write, sector, sector + bytes / 512, now, owner);
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
        self.plug = plug;
        for (i, &dev) in devs.iter().enumerate() {
            self.emit(dev, Action::U, false, 0, 0, tid, 0, unplugged.get(i).copied().unwrap_or(0));
            self.run_queue(dev);
        }
        devs.clear();
        self.plug_devs = devs;
    }

    /// The first `n` bios of `bio_id` (the rest are submitted next) merge into `rq`: at its
    /// back (M), or, one bio, at its front (F).
    fn merge_bios(&mut self, rq: ReqId, bio_id: BioId, n: u32, front: bool, tid: ThreadId) {
        self.split_run(bio_id, n, tid);
        self.merge(rq, bio_id, front);
        let b = *self.bios.get(bio_id.0);
        self.emit(b.dev, if front { Action::F } else { Action::M }, b.write, b.sector, b.bytes, tid, bio_id.0, rq.0);
    }

    /// A bio (or a run: each of its bios counts as a merge, as iostat's rrqm/s and wrqm/s
    /// count them) joins `rq` at the back or the front. A request on the plug is not in the
    /// elevator yet.
    fn merge(&mut self, rq: ReqId, bio_id: BioId, front: bool) {
        let bio = *self.bios.get(bio_id.0);
        let on_plug = self.plug.contains(&rq);
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
    fn run_fit(&self, bio_id: BioId, rq: ReqId, plug_from: usize, in_elevator: bool, max: u64) -> u32 {
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
        let plug = if in_elevator { &self.plug[..] } else { &self.plug[plug_from..] };
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
            if let Some(start) = self.devs[bio.dev.idx()].queue.elevator.other_end_in(bio.write, lo, hi, rq, ps, bio.sector) {
                fit = fit.min(k_at(start).expect("aligned"));
            }
        }
        fit as u32
    }

    /// Splits a run after its first `keep` bios; the rest becomes a run of its own, first in
    /// the submitter's pending list (where one-by-one submission would take it up next).
    fn split_run(&mut self, bio_id: BioId, keep: u32, tid: ThreadId) {
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
        let id = BioId(self.bios.insert(rest));
        self.threads[tid.idx()].pending.push_front(id);
    }

    /// The queue's request_fn (`scsi_request_fn`): dispatch while the device has tags and the
    /// host has room; a device stopped by a busy host joins the host's starved list.
    fn run_queue(&mut self, dev: DevId) {
        match self.devs[dev.idx()].kind {
            DevKind::Sd { .. } => self.scsi_request_fn(dev),
            DevKind::DmMpath { .. } => self.dm_request_fn(dev),
            // Bio-based: md and dm-linear have no request queue to run.
            DevKind::Md { .. } | DevKind::DmLinear { .. } => {}
        }
        // cfq idling: run the queue again when the idle window closes (one timer per queue,
        // as `cfqd->idle_slice_timer`; one armed for an earlier window re-arms when it fires).
        if let Some(t) = self.devs[dev.idx()].queue.elevator.idle_until() {
            if self.elv_timer[dev.idx()].is_none() && t > self.now() {
                self.elv_timer[dev.idx()] = Some(t);
                self.events.schedule(t, Event::ElevatorTimer { dev });
            }
        }
    }

    /// `scsi_lld_busy`: the device has no free tag or the host is full. Request-based dm asks
    /// it of the path (`multipath_busy`) before taking a request off its own queue.
    fn lld_busy(&self, dev: DevId) -> bool {
        let (_, h) = self.devs[dev.idx()].sd();
        self.devs[dev.idx()].queue.tags.is_full() || self.hosts[h.idx()].is_busy()
    }

    /// The path selector: `failover` uses the first path of its only group; `multibus` takes
    /// the paths in turn, `rr_min_io_rq` requests each (1, multipath-tools' default for
    /// request-based dm), skipping busy ones when `skip_busy`. None: every path is busy.
    fn select_path(&mut self, dm: DevId, skip_busy: bool) -> Option<DevId> {
        let DevKind::DmMpath { paths } = &self.devs[dm.idx()].kind else { unreachable!("not a dm device") };
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

    /// `dm_request_fn` (2.6.31+, cec47e3d): while the path is not busy, take the next request
    /// off the dm elevator, clone it (one clone bio per original bio) and insert the clone into
    /// the path's queue (`blk_insert_cloned_request`), then run that queue. A busy path leaves
    /// the requests in the dm elevator, where later bios still merge into them; a clone's
    /// completion runs the dm queue again.
    fn dm_request_fn(&mut self, dev: DevId) {
        let now = self.now();
        let di = dev.idx();
        if self.kdm[di].is_some() {
            // Over blk-mq (4.0): no busy check (blk-mq has no lld_busy); every request is
            // handed to the device's kdmwork thread, which maps it.
            while let Some(rq) = self.devs[di].queue.elevator.next(now) {
                self.devs[di].queue.elevator.dispatched(rq);
                let r = self.reqs.get(rq.0);
                let (write, sector, bytes) = (r.write, r.sector, r.bytes);
                let ctx = self.context();
                self.emit(dev, Action::D, write, sector, bytes as u32, ctx, rq.0, 0);
                self.kdm[di].as_mut().expect("checked").1.push_back(rq);
            }
            let worker = self.kdm[di].as_ref().expect("checked").0;
            if !self.kdm[di].as_ref().expect("checked").1.is_empty() && self.threads[worker.idx()].is_idle_kthread() {
                self.wake(worker, Step::KdmWork);
            }
            return;
        }
        while let Some(rq) = self.devs[di].queue.elevator.next(now) {
            // multipath_busy: busy only when every usable path is; then the selector's choice.
            let Some(path) = self.select_path(dev, true) else { break };
            self.devs[di].queue.elevator.dispatched(rq);
            let r = self.reqs.get(rq.0);
            let (write, sector, bytes) = (r.write, r.sector, r.bytes);
            let ctx = self.context();
            self.emit(dev, Action::D, write, sector, bytes as u32, ctx, rq.0, 0);
            self.insert_clone(rq, path, None, ctx);
            self.run_queue(path);
        }
    }

    /// `blk_rq_prep_clone` + `blk_insert_cloned_request`: a clone of the dm request `rq` (one
    /// clone bio per bio) goes into `path`'s queue, with a tag already if blk-mq gave it one.
    /// `by` is the thread doing it, for the trace.
    fn insert_clone(&mut self, rq: ReqId, path: DevId, tag: Option<u16>, by: ThreadId) -> ReqId {
        let now = self.now();
        let r = self.reqs.get(rq.0);
        let (write, sector, bytes, submitter, nbios, sync) = (r.write, r.sector, r.bytes, r.submitter, r.nr_bios, r.sync);
        let clone = ReqId(self.reqs.insert(Request {
            dev: path,
            write,
            sector,
            bytes,
            bios: Vec::new(),
            nr_bios: 0,
            alloc_at: now,
            tag,
            submitter,
            sync,
            clone_of: Some(rq),
            nr_clone_bios: nbios,
        }));
        self.totals.clones_made += 1;
        self.totals.clone_bios_made += nbios as u64;
        self.devs[path.idx()].stats.start(now);
        let from = Some((self.reqs.get(rq.0).dev, sector));
        self.emit_from(path, Action::A, write, sector, bytes as u32, by, clone.0, rq.0, from);
        let owner = self.owner(clone);
        self.devs[path.idx()].queue.elevator.add_nomerge(clone, write, sector, sector + bytes / 512, now, owner);
        self.emit(path, Action::I, write, sector, bytes as u32, by, clone.0, 0);
        clone
    }

    /// The leaf queue's request_fn (`scsi_request_fn`).
    fn scsi_request_fn(&mut self, dev: DevId) {
        let now = self.now();
        let di = dev.idx();
        while let Some(rq) = self.devs[di].queue.elevator.next(now) {
            // blk-mq requests got their tag when they were allocated.
            let has_tag = self.reqs.get(rq.0).tag.is_some();
            if !has_tag && self.devs[di].queue.tags.is_full() {
                break;
            }
            let (disk, h) = self.devs[di].sd();
            if !self.hosts[h.idx()].try_get(dev) {
                // not_ready → out_delay: with nothing of its own in flight no completion
                // will run this queue, so it polls from kblockd every SCSI_QUEUE_DELAY.
                if self.devs[di].queue.tags.busy() == 0 {
                    self.delay_queue(dev);
                }
                break;
            }
            self.devs[di].queue.elevator.dispatched(rq);
            let tag = match self.reqs.get(rq.0).tag {
                Some(t) => t,
                None => self.devs[di].queue.tags.get().expect("checked not full"),
            };
            let r = self.reqs.get_mut(rq.0);
            r.tag = Some(tag);
            let cmd = Cmd { req: rq, sector: r.sector, bytes: r.bytes, write: r.write, queued_at: now };
            let (write, sector, bytes) = (r.write, r.sector, r.bytes as u32);
            let ctx = self.context();
            self.emit(dev, Action::D, write, sector, bytes, ctx, rq.0, 0);
            let mut started = std::mem::take(&mut self.disk_started);
            self.disks[disk.idx()].submit(now, cmd, &mut started);
            for (slot, done) in started.drain(..) {
                self.events.schedule(done, Event::DiskDone { disk, slot });
            }
            self.disk_started = started;
        }
    }

    // ---- completion: interrupt, softirq, scsi_run_queue --------------------------------------

    fn on_disk_done(&mut self, disk: DiskId, slot: u16) {
        let now = self.now();
        let mut started = std::mem::take(&mut self.disk_started);
        let cmd = self.disks[disk.idx()].complete(now, slot, &mut started);
        for (slot, done) in started.drain(..) {
            self.events.schedule(done, Event::DiskDone { disk, slot });
        }
        self.disk_started = started;
        // A RAID controller's own stripe operation ended: no host command completes.
        let Some(cmd) = cmd else { return };
        let dev = self.reqs.get(cmd.req.0).dev;
        let (_, host) = self.devs[dev.idx()].sd();
        let irq_cpu = self.hosts[host.idx()].irq_cpu;
        self.raise_irq(irq_cpu, cmd.req);
    }

    /// The completion softirq for one request: end its bios, free its tag and request, wake
    /// a waiter for the pool, and run the starved queues and this one (`scsi_run_queue`).
    fn softirq_complete(&mut self, rq: ReqId) {
        let now = self.now();
        let r = self.reqs.remove(rq.0);
        let dev = r.dev;
        let di = dev.idx();
        let ctx = self.context();
        self.emit(dev, Action::C, r.write, r.sector, r.bytes as u32, ctx, rq.0, 0);
        self.devs[di].queue.tags.put(r.tag.expect("completed request had a tag"));
        if let Some(mq) = self.devs[di].queue.mq.as_mut() {
            // bt_clear_tag: the free is charged to a wait queue, which may wake its sleepers.
            for w in mq.tag_freed() {
                self.wake(w, Step::RetryTag);
            }
        }
        let (_, h) = self.devs[di].sd();
        self.hosts[h.idx()].put();
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

    /// The original request of a finished clone completes: its bios end, its slot goes back to
    /// the dm device's pool, and the dm queue runs again (`rq_completed` → `blk_run_queue`).
    fn dm_end_request(&mut self, rq: ReqId) {
        let now = self.now();
        let r = self.reqs.remove(rq.0);
        let dev = r.dev;
        let ctx = self.context();
        self.emit(dev, Action::C, r.write, r.sector, r.bytes as u32, ctx, rq.0, 0);
        self.devs[dev.idx()].stats.done(now, r.write, r.bytes / 512, now - r.alloc_at);
        self.totals.requests_completed += 1;
        let owner = Self::owner_of(&r);
        self.devs[dev.idx()].queue.elevator.completed(owner, now);
        for &bio in &r.bios {
            self.end_bio(bio);
        }
        self.recycle_bio_list(r.bios);
        self.freed_request(dev, r.write);
        self.run_queue(dev);
    }

    /// A completed request's bio list goes back for the next request to reuse (allocating
    /// one per request was a few percent of the run time); at most `BIO_LISTS_KEPT` wait.
    fn recycle_bio_list(&mut self, mut bios: Vec<BioId>) {
        const BIO_LISTS_KEPT: usize = 1024;
        if self.bio_lists.len() < BIO_LISTS_KEPT {
            bios.clear();
            self.bio_lists.push(bios);
        }
    }

    /// Whose I/O a request is, for cfq: its submitter, and whether it is synchronous
    /// (`rq_is_sync`: reads, O_DIRECT and fsync writes; writeback of dirty pages is not).
    fn owner(&self, rq: ReqId) -> Owner {
        Self::owner_of(self.reqs.get(rq.0))
    }

    fn owner_of(r: &Request) -> Owner {
        Owner { id: r.submitter.0, sync: !r.write || r.sync }
    }

    /// `freed_request`: give a request's slot back to its pool and wake one waiter.
    fn freed_request(&mut self, dev: DevId, write: bool) {
        let q = &mut self.devs[dev.idx()].queue;
        let dir = write as usize;
        q.pool_count[dir] -= 1;
        // clear_queue_congested: below the off threshold, and it wakes blk_congestion_wait.
        if q.pool_count[dir] < q.congestion_off() {
            q.congested[dir] = false;
            if write {
                for t in std::mem::take(&mut self.congestion_waiters) {
                    self.threads[t.idx()].congestion_until = None;
                    self.wake(t, Step::FlushWork);
                }
            }
        }
        let q = &mut self.devs[dev.idx()].queue;
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

    /// `scsi_run_queue`, called on every command completion: run the devices the host starved,
    /// in list order, while the host has room; put the rest back at the head of the list; then
    /// run this device's own queue.
    /// - `direct` (before c21e6beb) and `fixed` (9937a5e2 + 466c08c7) run them here, so the
    ///   first one to dispatch fills the host and the loop stops with the rest still listed.
    /// - `kblockd` (c21e6beb) only punts each run to kblockd: nothing dispatches during the loop,
    ///   so every starved device is taken off the list and punted, and this device's own queue,
    ///   run synchronously, takes the free slot first. Each kblockd run then finds the host busy
    ///   and re-adds its device in the order kblockd ran them.
    fn scsi_run_queue(&mut self, dev: DevId) {
        let (_, h) = self.devs[dev.idx()].sd();
        let mut starved = self.hosts[h.idx()].take_starved();
        while !self.hosts[h.idx()].is_busy() {
            let Some(sdev) = starved.pop_front() else { break };
            match self.cfg.scenario.scsi.run_queue {
                RunQueueMode::Direct | RunQueueMode::Fixed => self.run_queue(sdev),
                RunQueueMode::Kblockd => {
                    let cpu = CoreId(self.cur_cpu);
                    self.run_queue_async(sdev, cpu);
                }
            }
        }
        self.hosts[h.idx()].splice_back(starved);
        self.run_queue(dev);
    }

    /// `bio_endio`: every bio completes exactly once (the slab panics on a second free).
    fn end_bio(&mut self, bio_id: BioId) {
        let bio = self.bios.remove(bio_id.0);
        self.totals.bios_completed += bio.pages as u64;
        assert!(self.totals.bios_completed <= self.totals.bios_submitted, "more bios completed than submitted");
        if let Some(parent) = bio.parent {
            return self.bio_piece_done(parent);
        }
        if self.devs[bio.dev.idx()].is_bio_based() {
            let now = self.now();
            let ctx = self.context();
            self.emit(bio.dev, Action::C, bio.write, bio.sector, bio.bytes, ctx, bio_id.0, 0);
            self.devs[bio.dev.idx()].stats.done(now, bio.write, bio.bytes as u64 / 512, now - bio.started);
        }
        let io = self.ios.get_mut(bio.io.0);
        io.bios_left -= bio.pages;
        if io.bios_left == 0 {
            let io = self.ios.remove(bio.io.0);
            self.io_done(bio.io, io);
        }
    }

    fn io_done(&mut self, io_id: IoId, io: Io) {
        let now = self.now();
        // Latency is what the job sees (fio's clat); writeback is not the job's I/O.
        let j = match io.owner {
            IoOwner::Writeback(j) => return self.writeback_done(j, io.bytes),
            IoOwner::Readahead(j) => {
                self.totals.readahead_bytes += io.bytes;
                return self.readahead_done(j, io_id);
            }
            IoOwner::StripeRead { md, head, disk } => {
                // Counted when the page is in the stripe head, as iostat counts the read.
                self.totals.stripe_read_bytes += STRIPE_BYTES;
                return self.stripe_io_done(md as usize, head, disk, false);
            }
            IoOwner::StripeWrite { md, head, disk } => return self.stripe_io_done(md as usize, head, disk, true),
            IoOwner::Job(j) => j,
        };
        self.latency.record(now - io.started);
        self.totals.ios_completed += 1;
        let job = &mut self.jobs[j.idx()];
        job.inflight -= 1;
        job.bytes_done += io.bytes;
        if job.rw.is_write() {
            self.totals.bytes_written += io.bytes;
        } else {
            self.totals.bytes_read += io.bytes;
        }
        let tid = self.jobs[j.idx()].tid;
        self.job_finished(j);
        if self.threads[tid.idx()].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }

    // ---- statistics ------------------------------------------------------------------------

    fn snapshot(&mut self) -> Interval {
        let now = self.now();
        let mut cpu = CpuTimes::default();
        let mut per_core = Vec::with_capacity(self.cores.len());
        for c in 0..self.cores.len() {
            self.account(CoreId(c as u16));
            cpu.add(&self.cores[c].times);
            per_core.push(self.cores[c].times);
        }
        for d in &mut self.devs {
            d.stats.round(now);
        }
        let running = self.threads.iter().filter(|t| matches!(t.state, ThreadState::Running | ThreadState::Runnable)).count() as u32;
        let blocked = self.threads.iter().filter(|t| t.state == ThreadState::Sleeping && t.wait.is_some()).count() as u32;
        Interval {
            end: now,
            read_bytes: self.totals.bytes_read,
            write_bytes: self.totals.bytes_written,
            pgpgin_bytes: self.totals.pgpgin_bytes,
            pgpgout_bytes: self.totals.pgpgout_bytes,
            ios: self.totals.ios_completed,
            context_switches: self.totals.context_switches,
            interrupts: self.totals.interrupts,
            cpu,
            per_core,
            thread_cpu_ns: self.threads.iter().map(|t| t.cpu_ns).collect(),
            thread_state: self.top_states(),
            running,
            blocked,
            dirty_bytes: self.dirty_total,
            writeback_bytes: self.writeback_total,
            diskstats: self.devs.iter().map(|d| d.stats.clone()).collect(),
        }
    }

    fn push_history(&mut self, snap: Interval) {
        if self.history.len() == HISTORY_MAX {
            self.history.pop_front();
        }
        self.history.push_back(snap);
    }

    fn on_stats_tick(&mut self) {
        let snap = self.snapshot();
        self.push_history(snap.clone());
        self.last_tick = snap;
        let next = self.now() + NS_PER_S;
        self.events.schedule(next, Event::StatsTick);
    }

    /// Cumulative counters from time 0 to now (what the CLI reports).
    pub fn cumulative(&mut self) -> Interval {
        self.snapshot()
    }

    /// The snapshot taken at the last one-second tick.
    pub fn last_tick(&self) -> &Interval {
        &self.last_tick
    }

    pub fn fairness(&self) -> f64 {
        jain_fairness(&self.per_disk(|i| self.devs[i].stats.sectors[0] + self.devs[i].stats.sectors[1]))
    }

    /// A per-device figure summed per disk (a disk with several paths has one sd per path).
    pub(crate) fn per_disk(&self, f: impl Fn(usize) -> u64) -> Vec<f64> {
        let mut out = vec![0.0; self.disks.len()];
        for (i, d) in self.devs.iter().enumerate() {
            if let DevKind::Sd { disk, .. } = d.kind {
                out[disk.idx()] += f(i) as f64;
            }
        }
        out
    }

    /// Invariants that must hold between any two events. Checked by tests after every step.
    pub fn check_invariants(&self) {
        // A running thread runs on one core: its own, with its context installed there.
        for (i, t) in self.threads.iter().enumerate() {
            let on: Vec<usize> = (0..self.cores.len()).filter(|&c| self.cores[c].current == Some(ThreadId(i as u32))).collect();
            assert!(on.len() <= 1, "{} is the current thread of cores {on:?}", t.name);
            if t.state == ThreadState::Running {
                assert_eq!(on, [t.home.idx()], "{} runs, but not as its core's current thread", t.name);
            }
        }
        for d in &self.devs {
            let q = &d.queue;
            for dir in 0..2 {
                assert!(
                    q.pool_count[dir] <= 3 * q.nr_requests / 2 || q.draining,
                    "{}: {} requests allocated, nr_requests {}",
                    d.name,
                    q.pool_count[dir],
                    q.nr_requests
                );
            }
            assert!(q.tags.busy() <= q.tags.depth(), "{}: tags over queue_depth", d.name);
        }
        for h in &self.hosts {
            assert!(h.busy() <= h.can_queue(), "host_busy over can_queue");
        }
        for d in &self.disks {
            d.check_invariants();
        }
        let bios_live: u64 = self.bios.iter().map(|b| b.pages as u64).sum();
        assert_eq!(self.totals.bios_submitted - self.totals.bios_completed, bios_live, "bio accounting");
        assert!(self.totals.clones_completed <= self.totals.clones_made, "more dm clones completed than made");
        assert!(self.totals.clone_bios_completed <= self.totals.clone_bios_made, "more clone bios completed than made");
        for c in &self.cores {
            assert!(!c.softirq_deferred || !c.softirq.is_empty() || c.busy, "softirq deferred to ksoftirqd with nothing pending");
        }
        let dirty: u64 = self.jobs.iter().map(|j| j.dirty_bytes).sum();
        let writeback: u64 = self.jobs.iter().map(|j| j.writeback_bytes).sum();
        assert_eq!((dirty, writeback), (self.dirty_total, self.writeback_total), "page cache accounting");

        // Request-based devices count requests in flight; bio-based md counts bios.
        let in_flight: u64 = self.devs.iter().filter(|d| !d.is_bio_based()).map(|d| d.stats.in_flight).sum();
        for r in &self.raid5 {
            assert!(r.active <= r.max_stripes, "md: active stripes over stripe_cache_size");
            assert_eq!(r.active as usize + r.free_heads(), r.max_stripes as usize, "md: stripe heads lost");
        }
        assert_eq!(in_flight, self.reqs.live() as u64, "diskstats in_flight vs live requests");
    }

    /// Applies a knob to the running simulation where the kernel applies it live (a sysfs
    /// write to `nr_requests`, `queue_depth` or `max_sectors_kb`). Returns Ok(false) when the
    /// knob cannot change under a running stack and the run must restart with it.
    pub fn apply_live(&mut self, key: &str, value: &str) -> Result<bool, crate::scenario::ScenarioError> {
        let mut s = self.cfg.scenario.clone();
        crate::scenario::set_knob(&mut s, key, value)?;
        let cfg = s.validate()?;
        match key {
            "queue.nr_requests" => {
                for d in 0..self.devs.len() {
                    self.devs[d].queue.nr_requests = s.queue.nr_requests;
                    let q = &mut self.devs[d].queue;
                    q.draining = q.pool_count.iter().any(|&c| c > q.nr_requests);
                    // queue_requests_store: a larger pool wakes the sleepers it now has room for.
                    for dir in 0..2 {
                        if self.devs[d].queue.pool_count[dir] < s.queue.nr_requests {
                            if let Some(w) = self.devs[d].queue.waiters[dir].pop_front() {
                                self.wake(w, Step::RetryGetRequest);
                            }
                        }
                    }
                }
            }
            "queue.depth" => {
                for d in 0..self.devs.len() {
                    if self.devs[d].is_leaf() {
                        self.devs[d].queue.tags.set_depth(crate::block::tag_depth(&s));
                        self.run_queue(DevId(d as u16));
                    }
                }
            }
            "queue.scheduler" => {
                for d in &mut self.devs {
                    d.queue.elevator.set_kind(crate::block::elevator_kind(s.queue.scheduler));
                }
            }
            "disk.max_sectors_kb" => {
                for d in &mut self.devs {
                    d.queue.max_sectors_bytes = s.disk.max_sectors_kb as u64 * 1024;
                }
            }
            // Live in the kernel, and nothing in the running model caches them: the new value
            // is simply in force from now on (mechanisms not modelled yet show as model gaps).
            _ if crate::scenario::knob_spec(key).is_some_and(|k| k.live) => {}
            _ => return Ok(false),
        }
        self.cfg = cfg;
        Ok(true)
    }

    /// Latency histogram buckets: (ns, count), for the UI's histogram.
    pub fn latency_buckets(&self) -> Vec<(u64, u64)> {
        self.latency.buckets().collect()
    }

    /// Bytes in the page cache: (dirty, under writeback).
    pub fn page_cache_bytes(&self) -> (u64, u64) {
        (self.dirty_total, self.writeback_total)
    }

    /// A hardware RAID controller's stripe operations so far (None for other disks).
    pub fn stripe_ops(&self, disk: usize) -> Option<crate::hwraid5::StripeOps> {
        self.disks.get(disk)?.stripe_ops()
    }

    pub fn bios_live(&self) -> usize {
        self.bios.iter().map(|b| b.pages as usize).sum()
    }

    /// The process a trace record names for work done now: the thread whose step it is, or in
    /// interrupt context the thread the interrupt found running on this CPU, or the idle task.
    fn context(&self) -> ThreadId {
        self.cur_thread.unwrap_or_else(|| {
            let core = &self.cores[self.cur_cpu as usize];
            core.current.filter(|t| self.threads[t.idx()].state == ThreadState::Running).unwrap_or(ThreadId::SWAPPER)
        })
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn emit(&mut self, dev: DevId, action: Action, write: bool, sector: u64, bytes: u32, thread: ThreadId, token: u32, related: u32) {
        self.emit_from(dev, action, write, sector, bytes, thread, token, related, None);
    }

    /// `emit`, for a remap (A): with the upper device and sector it came from.
    #[allow(clippy::too_many_arguments)]
    fn emit_from(
        &mut self,
        dev: DevId,
        action: Action,
        write: bool,
        sector: u64,
        bytes: u32,
        thread: ThreadId,
        token: u32,
        related: u32,
        from: Option<(DevId, u64)>,
    ) {
        if self.trace.enabled() {
            let rec = TraceRecord {
                seq: 0,
                time: self.now(),
                dev,
                cpu: self.cur_cpu,
                action,
                write,
                sector,
                bytes,
                thread,
                token,
                related,
                from,
            };
            self.trace.push(rec);
        }
    }

    /// What the scenario asks for that this model does not simulate yet. The CLI and the UI
    /// show this list, so that nobody mistakes a missing mechanism for a measured effect.
    pub fn model_gaps(&self) -> Vec<String> {
        model_gaps(&self.cfg)
    }
}

/// A device's size: a disk's capacity, a path's for dm-multipath, (n - 1) members' for RAID5.
fn dev_capacity_sectors(devs: &[BlockDev], disks: &[Disk], dev: DevId, s: &crate::scenario::Scenario) -> u64 {
    match &devs[dev.idx()].kind {
        DevKind::Sd { disk, .. } => disks[disk.idx()].capacity_sectors(),
        DevKind::DmMpath { paths } => dev_capacity_sectors(devs, disks, paths[0], s),
        DevKind::DmLinear { lower } => dev_capacity_sectors(devs, disks, *lower, s) - crate::block::LVM_PE_START_SECTORS,
        DevKind::Md { members } => {
            let chunk = s.md.chunk_kb as u64 * 2;
            let whole = members.iter().map(|&m| dev_capacity_sectors(devs, disks, m, s)).min().unwrap_or(0);
            let used = if s.md.component_size_kb > 0 { (s.md.component_size_kb * 2).min(whole) } else { whole };
            let member = used / chunk * chunk;
            member * (members.len() as u64 - 1)
        }
    }
}

/// See `Sim::model_gaps`.
pub fn model_gaps(cfg: &Config) -> Vec<String> {
    let s = &cfg.scenario;
    let mut gaps = Vec::new();
    if !s.workload.direct && s.workload.rw.is_random() {
        gaps.push(
            "workload.rw=randwrite buffered: writeback writes the dirty pages in the order they were written, without sorting".into(),
        );
    }
    gaps
}

impl Interval {
    /// The all-zero interval at time 0 with the same devices as `other` (the start of a run).
    pub fn zero_for(other: &Interval) -> Interval {
        Interval::zero_with(other.diskstats.len(), other.per_core.len())
    }

    pub(crate) fn zero(ndevs: usize) -> Interval {
        Interval::zero_with(ndevs, 0)
    }

    fn zero_with(ndevs: usize, ncores: usize) -> Interval {
        Interval {
            end: SimTime::ZERO,
            read_bytes: 0,
            write_bytes: 0,
            pgpgin_bytes: 0,
            pgpgout_bytes: 0,
            ios: 0,
            context_switches: 0,
            interrupts: 0,
            cpu: CpuTimes::default(),
            per_core: vec![CpuTimes::default(); ncores],
            thread_cpu_ns: Vec::new(),
            thread_state: Vec::new(),
            running: 0,
            blocked: 0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            diskstats: vec![DiskStats::default(); ndevs],
        }
    }
}
