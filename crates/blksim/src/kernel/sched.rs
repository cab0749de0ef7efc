//! `kernel/sched.c` (2.6.32): CPU cores and threads, run queues, sleeping and waking
//! (`try_to_wake_up`), `schedule` at step boundaries with context switches, and the time
//! accounting behind vmstat's us/sy/wa/id and top's %CPU.

use crate::calib::*;
use crate::engine::event::Event;
use crate::engine::ids::{BioId, CoreId, DevId, JobId, ReqId, ThreadId};
use crate::engine::time::SimTime;
use crate::engine::{Next, Sim};
use crate::kernel::topology::SchedDomain;
use crate::tools::stats::CpuTimes;
use std::collections::VecDeque;

/// What a core is doing, for /proc/stat accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AcctState {
    #[default]
    Idle,
    Sys,
    Softirq,
}

#[derive(Clone, Debug, Default)]
pub struct Core {
    /// Executing a work item (a thread step or softirq work) until its CoreDone event.
    pub busy: bool,
    pub state: AcctState,
    since: SimTime,
    pub times: CpuTimes,
    /// The thread whose context is installed; None is the idle task.
    pub current: Option<ThreadId>,
    pub runq: VecDeque<ThreadId>,
    /// Completions raised by interrupts on this core, waiting for softirq processing.
    pub softirq: VecDeque<ReqId>,
    /// The work item running is softirq work in interrupt context (not a thread step).
    pub in_irq_softirq: bool,
    /// When the work item running started (after its context switch): its trace records
    /// are stamped from here (`TraceClock`).
    pub work_start: SimTime,
    /// Softirq time run in interrupt context since the core last had none pending.
    pub softirq_burst_ns: u64,
    /// The budget ran out: pending softirq work is ksoftirqd/N's until it has drained it.
    pub softirq_deferred: bool,
    /// Threads in I/O wait whose last CPU is this one: idle time counts as iowait while > 0.
    pub nr_iowait: u32,
    /// blk-mq BUSY runs interrupted on this core between their stop and their splice: they
    /// splice when the interrupt's softirq work is done.
    pub splice_after_irq: Vec<(DevId, u16)>,
    /// The work's effects are applied and the core spins on a lock (or runs a locked section
    /// beyond the work's cost) until its next CoreDone: Some(whether it was softirq work in
    /// interrupt context).
    pub spin_tail: Option<bool>,
    /// Spin this CPU did that a later-ending work on another CPU found (that work asked for a
    /// lock before this CPU's section did, so this CPU waited): it is in this CPU's past, and
    /// keeps the CPU busy at the end of its next work (`spin_tail`).
    pub spin_owed_ns: u64,
    /// `cpu.scheduler = fair`: the run queue's `min_vruntime` (monotonic).
    pub min_vruntime: u64,
    /// `cpu.load_balance`: this CPU's sched domains, lowest first, and its run queue's
    /// balancing state (`cpu_load[]`, `next_balance`, `idle_stamp`, `avg_idle`).
    pub sd: Vec<SchedDomain>,
    pub cpu_load: [u64; 5],
    pub next_balance: SimTime,
    pub idle_stamp: Option<SimTime>,
    pub avg_idle_ns: u64,
}

impl Core {
    /// Charges the time since the last call to the current state.
    pub fn account(&mut self, now: SimTime) {
        let dt = now - self.since;
        self.since = now;
        match self.state {
            AcctState::Sys => self.times.sys_ns += dt,
            AcctState::Softirq => self.times.softirq_ns += dt,
            AcctState::Idle if self.nr_iowait > 0 => self.times.iowait_ns += dt,
            AcctState::Idle => self.times.idle_ns += dt,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Not started yet (a job before its fork time).
    New,
    Runnable,
    Running,
    /// Sleeping: on a wait queue if `wait` is set (D state), else idle (a kernel thread with no work).
    Sleeping,
    Exited,
}

/// Why a thread sleeps in D state. All are `io_schedule()` sleeps, counted as iowait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Waiting for its own I/O to complete (a sync read/write, or io_getevents).
    Io,
    /// In `get_request_wait`: the request pool of `dev` is full for this direction.
    GetRequest { dev: DevId, write: bool },
    /// In `balance_dirty_pages`: too much of memory is dirty or under writeback.
    DirtyThrottle,
    /// In `fsync`: waiting for its dirty pages to be written back.
    Fsync,
    /// In `blk_congestion_wait(WRITE, HZ/10)`: background writeback met a write-congested
    /// device and waits for a queue to leave congestion, or 100 ms.
    Congestion,
    /// In md RAID5's `get_active_stripe`: the stripe cache has no head to give.
    Stripe,
    /// In blk-mq's `bt_get`: `dev` has no free tag.
    Tag { dev: DevId },
    /// fio's own pause before its next I/O (`thinktime`, `rate_iops`): `usec_sleep`, a plain
    /// sleep until its timer, not an I/O wait.
    Think,
}

impl Wait {
    /// `io_schedule` sleeps count as iowait; `get_active_stripe` sleeps in plain `schedule()`.
    pub fn is_iowait(self) -> bool {
        !matches!(self, Wait::Stripe | Wait::Think)
    }
}

/// The next piece of work a thread runs when it gets a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Return from the last call and make the next one (or exit when the job is done).
    Next,
    /// Woken in `get_request_wait`: try to allocate a request again.
    RetryGetRequest,
    /// A kblockd worker runs its next queued work item (a queue run).
    KblockdWork,
    /// A writeback flusher (`flush-MAJ:MIN`) writes back the next chunk of dirty pages.
    FlushWork,
    /// `fsync` (`filemap_fdatawrite`): the caller writes back the next piece of its own file.
    FsyncWrite,
    /// A writer's `balance_dirty_pages` pause ended: check the dirty limit again.
    DirtyRecheck,
    /// `ksoftirqd/N` runs the next pending softirq completion of its CPU.
    Softirq,
    /// An md array's raid5d handles the next stripe on its `handle_list`.
    Raid5d,
    /// Woken on `wait_for_stripe`: check for a free stripe head and go on mapping the bio.
    RetryStripe,
    /// `kdmwork-<dev>` maps the next request queued to it (`map_tio_request`).
    KdmWork,
    /// Woken in `bt_get`: try for a tag again (and sleep again if there is none).
    RetryTag,
    /// Woken in `io_cqring_wait` by a CQE (`io_uring.cq_wake=each`): count the CQ ring's
    /// completions, and sleep again while fewer than it waits for are in.
    CqWait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadKind {
    User(JobId),
    Ksoftirqd,
    /// The kblockd worker of one CPU.
    Kblockd(CoreId),
    /// The per-backing-device writeback thread (2.6.32+ `flush-MAJ:MIN`).
    Flusher(DevId),
    /// An md RAID5 array's thread (`md0_raid5`, running `raid5d`).
    Raid5d(DevId),
    /// Request-based dm's per-device kthread worker over blk-mq (2eb6e1e3, `kdmwork-MAJ:MIN`).
    KdmWork(DevId),
    /// multipathd (userspace), whose path checker reads from each path now and then.
    Multipathd,
}

#[derive(Clone, Debug)]
pub struct Thread {
    pub name: String,
    pub pid: u32,
    pub kind: ThreadKind,
    pub state: ThreadState,
    pub wait: Option<Wait>,
    /// The core it runs on; a woken thread moves to an idle core if this one is busy.
    pub home: CoreId,
    pub next: Option<Step>,
    pub cpu_ns: u64,
    /// Times it was switched out (voluntary and involuntary).
    pub cs: u64,
    pub slice_start: SimTime,
    /// Bios built but not yet accepted by the queue (the pool was full).
    pub pending: VecDeque<BioId>,
    /// The current `balance_dirty_pages` pause (0: not throttled).
    pub dirty_pause_ns: u64,
    /// Bytes it wrote back in the current `balance_dirty_pages` call (`pages_written`).
    pub dirty_written: u64,
    /// When its current `blk_congestion_wait` times out (a timer of an earlier wait that was
    /// woken early must not end a later one).
    pub congestion_until: Option<SimTime>,
    /// A Timeout event for its congestion waits is pending (at most one: when it fires early
    /// for a later wait, it is re-armed for that wait's end).
    pub congestion_timer_armed: bool,
    /// The io_context's batching state: requests left in the batch, and when it started.
    pub batch_left: u32,
    pub batch_since: SimTime,
    /// `cpu.scheduler = fair`: the CPU time it has run, weighted alike for all (`vruntime`),
    /// placed on wakeup no further back than `min_vruntime` − half the latency (`place_entity`).
    pub vruntime: u64,
    /// `task->ioprio` (`ioprio_set`, ionice): the class and level cfq serves its queue at.
    pub ioprio: crate::fs::ioprio::IoPrio,
    /// When it last ran (`se.exec_start`): the load balancer leaves a thread that ran within
    /// `sysctl_sched_migration_cost` where it is (`task_hot`).
    pub exec_start: SimTime,
}

impl Thread {
    fn new(name: String, kind: ThreadKind, state: ThreadState, home: CoreId, pid: u32) -> Thread {
        Thread {
            name,
            pid,
            kind,
            state,
            wait: None,
            home,
            next: None,
            cpu_ns: 0,
            cs: 0,
            slice_start: SimTime::ZERO,
            pending: VecDeque::new(),
            batch_left: 0,
            batch_since: SimTime::ZERO,
            dirty_pause_ns: 0,
            dirty_written: 0,
            congestion_until: None,
            congestion_timer_armed: false,
            vruntime: 0,
            ioprio: crate::fs::ioprio::IoPrio::default(),
            exec_start: SimTime::ZERO,
        }
    }

    /// A kernel thread: it sleeps (idle, not D) until it is given work.
    pub fn kernel(name: String, kind: ThreadKind, home: CoreId, pid: u32) -> Thread {
        Thread::new(name, kind, ThreadState::Sleeping, home, pid)
    }

    /// A job's process, not started until its fork time.
    pub fn user(name: String, job: JobId, home: CoreId, pid: u32) -> Thread {
        Thread::new(name, ThreadKind::User(job), ThreadState::New, home, pid)
    }

    /// The state letter `top` shows: R running or runnable, D uninterruptible sleep (waiting for
    /// I/O, a request, the dirty limit or fsync), S sleeping, X exited.
    pub fn top_state(&self) -> char {
        match self.state {
            ThreadState::Running | ThreadState::Runnable => 'R',
            ThreadState::Sleeping if self.wait.is_some_and(|w| w != Wait::Think) => 'D',
            ThreadState::Sleeping | ThreadState::New => 'S',
            ThreadState::Exited => 'X',
        }
    }

    /// `ioc_batching`: a full batch, or some left and the batch is younger than BLK_BATCH_TIME.
    pub fn is_batching(&self, now: SimTime) -> bool {
        self.batch_left == crate::calib::BLK_BATCH_REQ || (self.batch_left > 0 && now - self.batch_since < crate::calib::BLK_BATCH_TIME_NS)
    }

    /// `ioc_set_batching`: start a batch unless one is running.
    pub fn set_batching(&mut self, now: SimTime) {
        if !self.is_batching(now) {
            self.batch_left = crate::calib::BLK_BATCH_REQ;
            self.batch_since = now;
        }
    }

    /// An idle kernel thread: asleep with no wait queue, ready to be given work.
    pub fn is_idle_kthread(&self) -> bool {
        !matches!(self.kind, ThreadKind::User(_)) && self.state == ThreadState::Sleeping && self.wait.is_none()
    }
}

/// `smp_processor_id()` and `current`: the core whose work is being applied now, and the
/// thread whose step it is (None in interrupt context), as a trace record names them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Current {
    pub cpu: u16,
    pub thread: Option<ThreadId>,
}

impl Sim {
    /// `rq->nr_running`: the thread running on `c` and those waiting for it.
    pub(crate) fn nr_running(&self, c: usize) -> u64 {
        let core = &self.cores[c];
        let running = core.current.is_some_and(|t| self.threads[t].state == ThreadState::Running);
        core.runq.len() as u64 + u64::from(running)
    }

    /// `idle_cpu`: nothing runnable (softirq work run at irq exit on an idle CPU leaves it idle).
    pub(crate) fn idle_cpu(&self, c: usize) -> bool {
        self.nr_running(c) == 0
    }

    /// Charges the time since the last change on `c` to what the core was doing.
    pub(crate) fn account(&mut self, c: CoreId) {
        let now = self.now();
        self.cores[c].account(now);
    }

    /// Makes a sleeping (or new) thread runnable on its home core, with `step` to run next.
    pub(crate) fn wake(&mut self, tid: ThreadId, step: Step) {
        let t = &mut self.threads[tid];
        assert!(matches!(t.state, ThreadState::Sleeping | ThreadState::New), "waking {} in state {:?}", t.name, t.state);
        let home = t.home;
        if t.wait.is_some_and(|w| w.is_iowait()) {
            self.account(home);
            self.cores[home].nr_iowait -= 1;
        }
        let to = self.select_task_rq(tid, home);
        if to != home && self.cores[home].current == Some(tid) {
            // Its context leaves the old CPU: that CPU's next thread switches in from idle.
            self.cores[home].current = None;
        }
        if self.fair() {
            self.place_entity(tid, home, to);
        }
        self.update_avg_idle(to);
        let home = to;
        let t = &mut self.threads[tid];
        t.wait = None;
        t.state = ThreadState::Runnable;
        t.next = Some(step);
        t.home = home;
        self.cores[home].runq.push_back(tid);
        self.kick(home);
    }

    /// If core `c` is not executing anything, picks what it runs next: softirq work first, then
    /// the current thread's next step, then the head of its run queue, else idle.
    #[inline]
    pub(crate) fn kick(&mut self, c: CoreId) {
        // Most kicks find the core busy (a woken thread queued behind the running work): they
        // return here, without the call into the scheduler's pick.
        if !self.cores[c].busy {
            self.kick_idle(c);
        }
    }

    /// `kick` of a core not executing anything.
    fn kick_idle(&mut self, c: CoreId) {
        let ci = c.idx();
        let now = self.now();
        self.account(c);
        if self.do_softirq(c) {
            return;
        }
        let cur = self.cores[ci].current;
        let highpri = self.kblockd_preempts(c);
        let fair = self.fair();
        let keep = cur.filter(|&t| {
            let th = &self.threads[t];
            // fair: check_preempt_wakeup, taken at the running thread's next step.
            let preempted = fair && self.check_preempt_wakeup(ci, t);
            th.state == ThreadState::Running
                && highpri.is_none()
                && (self.cores[ci].runq.is_empty() || (now - th.slice_start < SCHED_SLICE_NS && !preempted))
        });
        let (run, switched) = match keep {
            Some(t) => (Some(t), false),
            None => self.schedule_next(c, cur, highpri),
        };
        let Some(tid) = run else {
            self.cores[ci].state = AcctState::Idle;
            return;
        };
        let th = &mut self.threads[tid];
        if switched {
            th.slice_start = now;
        }
        th.state = ThreadState::Running;
        let step = th.next.expect("a running thread has a next step");
        let switch_ns = if switched { CONTEXT_SWITCH_NS } else { 0 };
        if step == Step::KblockdWork {
            self.kblockd_start_work(tid, now + switch_ns);
        }
        let cost = self.step_cost(tid, step) + switch_ns;
        self.cores[ci].work_start = now + switch_ns;
        if step == Step::Softirq {
            // ksoftirqd starts a completion's work: its host slot is free from now.
            if let Some(&rq) = self.cores[ci].softirq.front() {
                self.scsi_device_unbusy(rq);
            }
        }
        self.threads[tid].cpu_ns += cost;
        if fair {
            self.update_curr(ci, tid, cost);
        }
        // ksoftirqd's time is softirq time in /proc/stat (it runs __do_softirq).
        let state = if step == Step::Softirq { AcctState::Softirq } else { AcctState::Sys };
        let core = &mut self.cores[ci];
        core.busy = true;
        core.state = state;
        self.events.schedule(now + cost, Event::CoreDone { core: c });
    }

    /// `schedule()` when the running thread does not keep its core: it goes back on the run
    /// queue if still runnable, and the next thread is picked. Returns it, and whether that
    /// is a context switch.
    fn schedule_next(&mut self, c: CoreId, cur: Option<ThreadId>, highpri: Option<usize>) -> (Option<ThreadId>, bool) {
        let ci = c.idx();
        let fair = self.fair();
        let mut switched = false;
        if let Some(t) = cur.filter(|&t| self.threads[t].state == ThreadState::Running) {
            // Preempted at a step boundary: its slice is used up and others wait.
            self.threads[t].state = ThreadState::Runnable;
            self.cores[ci].runq.push_back(t);
        }
        // schedule() on a CPU about to go idle looks for work first (`idle_balance`).
        if self.cores[ci].runq.is_empty() && cur.is_some() && self.load_balancing() {
            self.idle_balance(ci);
        }
        // A nice -20 kblockd worker is picked first (CFS: the smallest vruntime).
        let next = match highpri {
            Some(i) => self.cores[ci].runq.remove(i),
            None if fair => self.pick_next_entity(ci).and_then(|i| self.cores[ci].runq.remove(i)),
            None => self.cores[ci].runq.pop_front(),
        };
        if next != cur {
            switched = true;
            self.acct.totals.context_switches += 1;
            if let Some(prev) = cur {
                self.threads[prev].cs += 1;
            }
        }
        self.cores[ci].current = next;
        (next, switched)
    }

    /// With `cpu.kblockd_highpri` (kblockd is `WQ_HIGHPRI` in 4.0: nice -20 workers), a kblockd
    /// worker waiting on core `c` preempts the normal-priority thread there at its step
    /// boundary (`check_preempt_wakeup`): the position of that worker in the run queue.
    fn kblockd_preempts(&self, c: CoreId) -> Option<usize> {
        if !self.cfg.scenario.cpu.kblockd_highpri {
            return None;
        }
        let core = &self.cores[c];
        let is_kblockd = |t: ThreadId| matches!(self.threads[t].kind, ThreadKind::Kblockd(_));
        if core.current.is_some_and(|t| is_kblockd(t) && self.threads[t].state == ThreadState::Running) {
            return None;
        }
        core.runq.iter().position(|&t| is_kblockd(t))
    }

    pub(crate) fn on_core_done(&mut self, c: CoreId) {
        self.account(c);
        let ci = c.idx();
        self.current.cpu = c.0;
        if let Some(irq) = self.cores[ci].spin_tail.take() {
            self.core_free(c, irq);
            return;
        }
        // The core stays busy while the work's effects run: a thread woken onto this core by
        // them waits in the run queue for the kick below, not inside this work.
        if self.cores[ci].in_irq_softirq {
            self.cores[ci].in_irq_softirq = false;
            let req = self.cores[ci].softirq.pop_front().expect("softirq work was pending");
            let start = self.cores[ci].work_start;
            self.work_begin(start);
            self.softirq_complete(req);
            self.work_end();
            if !self.spin_tail(c, start, None) {
                self.core_free(c, true);
            }
            return;
        }
        let tid = self.cores[ci].current.expect("a core finished a step with no thread");
        let step = self.threads[tid].next.take().expect("step");
        self.threads[tid].exec_start = self.now();
        // A thread's step runs under a plug, as submitters do (blk_start_plug/blk_finish_plug;
        // in 2.6.32 the queue plug that the submitter's wait unplugs has the same effect).
        self.blk.plugging = self.cfg.scenario.queue.plugging == crate::scenario::Plugging::Task;
        self.blk.mq_plugging = self.blk_mq_task_plugs(tid);
        self.current.thread = Some(tid);
        self.work_begin(self.cores[ci].work_start);
        let next = self.run_step(tid, step);
        self.blk.plugging = false;
        self.blk.mq_plugging = false;
        self.flush_plug(tid);
        self.work_end();
        self.current.thread = None;
        match next {
            Next::Continue(s) => self.threads[tid].next = Some(s),
            Next::Sleep(w) => {
                let t = &mut self.threads[tid];
                t.state = ThreadState::Sleeping;
                t.wait = Some(w);
                if w.is_iowait() {
                    let home = t.home;
                    self.account(home);
                    self.cores[home].nr_iowait += 1;
                }
                if w == Wait::Stripe {
                    self.stripe_waiter_sleeps(tid);
                }
            }
            Next::Idle => {
                let t = &mut self.threads[tid];
                t.state = ThreadState::Sleeping;
                t.wait = None;
            }
            Next::Exit => self.threads[tid].state = ThreadState::Exited,
        }
        if !self.spin_tail(c, self.cores[ci].work_start, Some(tid)) {
            self.core_free(c, false);
        }
    }

    /// The work on `c` that began at `start` has applied its effects: its lock sections take
    /// their locks (`spin_unlock_work`). If it spun, or holds a lock past its cost, the core
    /// stays busy that much longer, in the same state, charged to the thread whose work it is
    /// (`tid`), or for softirq work to the thread it interrupted, as the work itself was.
    /// Returns whether it does.
    fn spin_tail(&mut self, c: CoreId, start: SimTime, tid: Option<ThreadId>) -> bool {
        let ci = c.idx();
        let more = self.spin_unlock_work(start) + std::mem::take(&mut self.cores[ci].spin_owed_ns);
        if more == 0 {
            return false;
        }
        let irq = tid.is_none();
        let charged = tid.or_else(|| self.cores[ci].current.filter(|t| self.threads[*t].state == ThreadState::Running));
        if let Some(t) = charged {
            self.threads[t].cpu_ns += more;
            if self.fair() && !irq {
                self.update_curr(ci, t, more);
            }
        }
        if irq {
            self.cores[ci].softirq_burst_ns += more;
        }
        self.cores[ci].spin_tail = Some(irq);
        self.events.schedule(self.now() + more, Event::CoreDone { core: c });
        true
    }

    /// The core's work is done: it picks what it runs next, and after softirq work in
    /// interrupt context (`irq`), an interrupted blk-mq run resumes and splices its leftovers.
    fn core_free(&mut self, c: CoreId, irq: bool) {
        let ci = c.idx();
        self.cores[ci].busy = false;
        self.kick(c);
        if irq && !self.cores[ci].in_irq_softirq && !self.cores[ci].splice_after_irq.is_empty() {
            for (dev, h) in std::mem::take(&mut self.cores[ci].splice_after_irq) {
                self.mq_splice(dev, h, c);
            }
        }
    }
}

impl Sim {
    /// The per-CPU kernel threads, there from boot as in the kernel: ksoftirqd/N and
    /// kblockd/N. They only run when a later mechanism gives them work (softirq overrun,
    /// kblockd punts); top lists them either way.
    pub(crate) fn spawn_percpu_kthreads(&mut self) {
        let cores = self.cores.len() as u32;
        for c in 0..cores {
            self.threads.push(Thread::kernel(format!("ksoftirqd/{c}"), ThreadKind::Ksoftirqd, CoreId(c as u16), 3 + 6 * c));
        }
        for c in 0..cores {
            let cpu = CoreId(c as u16);
            self.threads.push(Thread::kernel(format!("kblockd/{c}"), ThreadKind::Kblockd(cpu), cpu, 200 + c));
        }
    }
}

impl Core {
    /// The events a core can have queued at once: its work's end, and room for the timers
    /// its threads arm.
    pub(crate) const EVENTS_MAX: usize = 4;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{set_knob, Scenario};

    /// One CPU running the job's thread mid-slice, with kblockd/0 just woken behind it: what
    /// runs at the next step boundary.
    fn next_after_kblockd_wakeup(highpri: &str) -> String {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", "1"), ("cpu.kblockd_highpri", highpri)] {
            set_knob(&mut s, k, v).unwrap();
        }
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        let user = sim.threads.iter().position(|t| matches!(t.kind, ThreadKind::User(_))).map(|i| ThreadId(i as u32)).unwrap();
        let t = &mut sim.threads[user];
        t.state = ThreadState::Running;
        t.next = Some(Step::Next);
        sim.cores[0].current = Some(user);
        let kblockd = ThreadId(1);
        assert!(matches!(sim.threads[kblockd].kind, ThreadKind::Kblockd(_)));
        sim.wake(kblockd, Step::KblockdWork);
        let cur = sim.cores[0].current.expect("something runs");
        sim.threads[cur].name.clone()
    }

    #[test]
    fn a_woken_highpri_kblockd_worker_preempts_the_running_thread_at_its_step_boundary() {
        assert_eq!(next_after_kblockd_wakeup("true"), "kblockd/0", "4.0: WQ_HIGHPRI, nice -20");
        assert_ne!(next_after_kblockd_wakeup("false"), "kblockd/0", "it waits for the running thread's slice");
    }
}
