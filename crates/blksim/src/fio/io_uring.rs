//! fio's io_uring engine (`engines/io_uring.c`) driven by fio's job loop (`backend.c` `do_io`,
//! `wait_for_completions`; `ioengines.c` `td_io_queue`, `td_io_getevents`; `io_u.c`
//! `io_u_queued_complete`), and the 5.x kernel's side of `io_uring_enter` (v5.4:fs/io_uring.c
//! `io_ring_submit`, `io_cqring_wait`).
//!
//! fio queues each I/O as an SQE and commits the queue with one `io_uring_enter(to_submit)`
//! once `iodepth_batch_submit` are queued, or when it must wait. A full queue reaps CQEs from
//! the shared ring in user space; only when fewer than `iodepth_batch_complete_min` are there
//! does it enter the kernel to wait (`IORING_ENTER_GETEVENTS`, `min_complete`), and 5.4's
//! `io_wake_function` wakes it once that many are posted; 5.1-5.3 woke it at each one
//! (`io_uring.cq_wake`).

use crate::engine::ids::JobId;
use crate::engine::{Next, Sim};
use crate::kernel::sched::{Step, Wait};
use crate::scenario::knob_table_uring::CqWake;

/// One job's ring as fio sees it (`struct ioring_data`), with its batching options after
/// fio's `fixup_options`.
#[derive(Clone, Debug, Default)]
pub struct Ring {
    /// I/Os committed by one `io_uring_enter` (`iodepth_batch`: 0 or more than iodepth is
    /// iodepth).
    pub batch_submit: u32,
    /// The fewest completions a full queue waits for (`iodepth_batch_complete_min`).
    pub complete_min: u32,
    /// The most completions one reap takes (`iodepth_batch_complete_max`, at least the min).
    pub complete_max: u32,
    /// CQEs posted and not yet reaped: fio's `cur_depth` counts them until it reaps them.
    pub cq_ready: u32,
    /// The CQEs the sleeping job's `io_uring_enter` waits for (`iowq.to_wait`).
    pub to_wait: u32,
    /// What the reap after that wait may still take (`max - events`).
    pub reap_left: u32,
    /// `io_uring_enter` calls: each commit, and each wait for completions.
    pub enters: u64,
}

impl Ring {
    /// The ring of a job at `iodepth` with fio's batching options.
    pub fn new(iodepth: u32, batch_submit: u32, complete_min: u32, complete_max: u32) -> Ring {
        let batch_submit = if batch_submit == 0 || batch_submit > iodepth { iodepth } else { batch_submit };
        // fio's 0 (poll the ring before each submission) is below the knob's range.
        let complete_min = complete_min.max(1);
        Ring { batch_submit, complete_min, complete_max: complete_max.max(complete_min), ..Ring::default() }
    }

    /// The wait is over if the CQEs it waits for are in: fio reaps what its reap may take.
    fn take_waited(&mut self) -> bool {
        if self.cq_ready < self.to_wait {
            return false;
        }
        let reaped = self.cq_ready.min(self.reap_left);
        self.cq_ready -= reaped;
        self.to_wait = 0;
        true
    }
}

impl Sim {
    /// How many I/Os job `j`'s next commit submits: fio queues up to `iodepth_batch_submit`
    /// while its queue has room (a full queue commits what it has before it waits), no more
    /// than it has left. A paced job (`thinktime`, `rate_iops`) issues one at a time.
    pub(crate) fn uring_batch(&self, j: JobId) -> u32 {
        let job = &self.jobs[j];
        let Some(ring) = &job.ring else { return 1 };
        if job.run.thinktime_ns > 0 || job.run.rate_ns > 0 {
            return 1;
        }
        let room = job.iodepth.saturating_sub(job.inflight + ring.cq_ready).max(1);
        let left = u32::try_from(job.ios_left()).unwrap_or(u32::MAX).max(1);
        ring.batch_submit.min(room).min(left)
    }

    /// The commit: `io_uring_enter(to_submit = n)`, whose `io_ring_submit` turns each SQE into
    /// its bios under one plug (`io_submit_state_start`, for more than `IO_PLUG_THRESHOLD` = 2;
    /// the step's own plug holds them either way).
    pub(crate) fn uring_submit(&mut self, j: JobId) {
        let n = self.uring_batch(j);
        for _ in 0..n {
            if !self.jobs[j].has_more_to_issue() {
                break;
            }
            self.issue_io(j);
        }
        if let Some(ring) = self.jobs[j].ring.as_mut() {
            ring.enters += 1;
        }
    }

    /// What job `j` does after a commit (`do_io`'s loop): with room and I/O left, it queues
    /// more; a full queue reaps (`wait_for_completions`); with nothing left to issue it waits
    /// for all it has in flight (`cleanup_pending_aio`). A reap takes the CQEs already in the
    /// ring without a system call; too few, and it sleeps in `io_uring_enter` until the rest
    /// are posted. None: not io_uring, or nothing in flight and nothing to issue.
    pub(crate) fn uring_next(&mut self, j: JobId, more: bool) -> Option<Next> {
        let job = &mut self.jobs[j];
        let iodepth = job.iodepth;
        let inflight = job.inflight;
        let ring = job.ring.as_mut()?;
        let depth = inflight + ring.cq_ready;
        if more && depth < iodepth {
            return Some(Next::Continue(Step::Next));
        }
        if depth == 0 {
            return None;
        }
        // fio_ioring_getevents(min, max) as td_io_getevents clamps them.
        let (need, max) = if more {
            let need = ring.complete_min.min(depth);
            (need, ring.complete_max.min(depth).max(need))
        } else {
            (depth, depth)
        };
        let reaped = ring.cq_ready.min(max);
        ring.cq_ready -= reaped;
        if reaped >= need {
            return Some(Next::Continue(Step::Next));
        }
        ring.to_wait = need - reaped;
        ring.reap_left = max - reaped;
        ring.enters += 1;
        Some(Next::Sleep(Wait::Io))
    }

    /// A CQE of job `j` is posted (`io_cqring_fill_event`, `io_cqring_ev_posted`). What the
    /// job, if asleep in its wait, wakes to: once enough CQEs for its `min_complete` are in
    /// (`io_should_wake`), it reaps what it may of them and goes on; with
    /// `io_uring.cq_wake=each` (5.1-5.3) any CQE wakes it to count them. Not io_uring: it wakes
    /// at each completion, as libaio's does.
    pub(crate) fn uring_cqe_posted(&mut self, j: JobId, waiting: bool) -> Option<Step> {
        let each = self.cfg.scenario.io_uring.cq_wake == CqWake::Each;
        let job = &mut self.jobs[j];
        let iodepth = job.iodepth;
        let inflight = job.inflight;
        let Some(ring) = job.ring.as_mut() else { return Some(Step::Next) };
        ring.cq_ready += 1;
        assert!(inflight + ring.cq_ready <= iodepth, "the CQ ring holds more than the job's iodepth");
        if !waiting {
            None
        } else if ring.take_waited() {
            Some(Step::Next)
        } else {
            each.then_some(Step::CqWait)
        }
    }

    /// Woken by a CQE in 5.1-5.3's `io_cqring_wait`: enough are in, and it returns to reap
    /// them; else it sleeps again (`wait_event_interruptible`'s loop).
    pub(crate) fn uring_cq_recheck(&mut self, j: JobId) -> Next {
        let ring = self.jobs[j].ring.as_mut().expect("only an io_uring job waits in io_cqring_wait");
        if ring.take_waited() {
            Next::Continue(Step::Next)
        } else {
            Next::Sleep(Wait::Io)
        }
    }

    /// `io_uring_enter` calls of every job so far: its commits and its waits.
    pub fn io_uring_enters(&self) -> u64 {
        self.jobs.iter().filter_map(|j| j.ring.as_ref()).map(|r| r.enters).sum()
    }
}
