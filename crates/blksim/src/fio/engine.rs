//! fio's job loop as the kernel sees it: a process that issues I/O (psync or libaio), waits
//! for completions, fsyncs and exits; and `io_done`, where a finished I/O goes to whoever it
//! was for (the job, writeback, readahead or an md stripe head).

use crate::drivers::md::raid5::STRIPE_BYTES;
use crate::engine::ids::*;
use crate::engine::{Next, Sim};
use crate::fio::job::{Io, IoOwner};
use crate::kernel::sched::{Step, ThreadKind, Wait};
use crate::scenario::IoEngine;

impl Sim {
    pub(crate) fn job_of(&self, tid: ThreadId) -> JobId {
        match self.threads[tid].kind {
            ThreadKind::User(j) => j,
            k => panic!("{} ({k:?}) has no job", self.threads[tid].name),
        }
    }

    /// After submitting: issue more (libaio below iodepth), wait for completions, fsync, or exit.
    pub(crate) fn after_submit(&mut self, tid: ThreadId) -> Next {
        let j = self.job_of(tid);
        let job = &self.jobs[j];
        if job.buffered_read {
            // Back in the read() loop: copy what has arrived, or wait for it.
            return Next::Continue(Step::Next);
        }
        if job.buffered && self.threads[tid].dirty_written > 0 {
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
            if job.pages.dirty_bytes > 0 {
                return Next::Continue(Step::FsyncWrite);
            }
            self.jobs[j].fsync_waiting = true;
            Next::Sleep(Wait::Fsync)
        } else {
            self.job_finished(j);
            Next::Exit
        }
    }

    /// A job completed a read or a write (fio's and dd's bytes moved), or finished: a stall, if
    /// one was under way, ends here. Counted as fio's progress is, not from any queue's state,
    /// so parked requests, a full pool and a throttled writer all show as the same stall.
    pub(crate) fn job_progressed(&mut self) {
        let now = self.now().ns();
        let t = &mut self.acct.totals;
        let gap = now - t.progress.at_ns;
        if gap > t.progress.stall_ns_max {
            t.progress.stall_ns_max = gap;
            t.progress.stall_from_ns = t.progress.at_ns;
        }
        t.progress.at_ns = now;
    }

    /// The longest stall of the run so far, (from, length) in ns: the longest span in which no
    /// job completed a read or a write or finished. A run still going counts the span since
    /// its last progress; a finished run does not count the idle time after its end.
    pub fn longest_stall_ns(&self) -> (u64, u64) {
        let t = &self.acct.totals;
        let open = if self.acct.finished_at.is_none() { self.now().ns() - t.progress.at_ns } else { 0 };
        if open > t.progress.stall_ns_max {
            (t.progress.at_ns, open)
        } else {
            (t.progress.stall_from_ns, t.progress.stall_ns_max)
        }
    }

    pub(crate) fn job_finished(&mut self, j: JobId) {
        let now = self.now();
        let job = &mut self.jobs[j];
        if job.done_at.is_none() && job.is_done() {
            job.done_at = Some(now);
            self.job_progressed();
            if self.jobs.iter().all(|j| j.done_at.is_some()) {
                self.acct.finished_at = Some(now);
                // The last, partial interval (as iostat's final report): up to the moment the
                // last job ended, so a run shorter than a second has a point to chart.
                if self.acct.history.back().is_none_or(|h| h.end != now) {
                    let snap = self.snapshot();
                    self.push_history(snap);
                }
            }
        }
    }

    pub(crate) fn io_done(&mut self, io_id: IoId, io: Io) {
        let now = self.now();
        // Latency is what the job sees (fio's clat); writeback is not the job's I/O.
        let j = match io.owner {
            IoOwner::Writeback(j) => return self.writeback_done(j, io.bytes),
            IoOwner::Readahead(j) => {
                self.acct.totals.readahead_bytes += io.bytes;
                return self.readahead_done(j, io_id);
            }
            IoOwner::StripeRead { md, head, disk } => {
                // Counted when the page is in the stripe head, as iostat counts the read.
                self.acct.totals.stripe_read_bytes += STRIPE_BYTES;
                return self.stripe_io_done(md as usize, head, disk, false);
            }
            IoOwner::StripeWrite { md, head, disk } => return self.stripe_io_done(md as usize, head, disk, true),
            IoOwner::Job(j) => j,
        };
        self.acct.latency.record(now - io.started);
        self.acct.totals.ios_completed += 1;
        let job = &mut self.jobs[j];
        job.inflight -= 1;
        job.bytes_done += io.bytes;
        let write = job.rw.is_write();
        self.job_progressed();
        if write {
            self.acct.totals.bytes_written += io.bytes;
        } else {
            self.acct.totals.bytes_read += io.bytes;
        }
        let tid = self.jobs[j].tid;
        self.job_finished(j);
        if self.threads[tid].wait == Some(Wait::Io) {
            self.wake(tid, Step::Next);
        }
    }
}

impl Sim {
    /// fio's jobs, each a process with its own file on its device. `filename` names the top
    /// devices in turn (validated against the stack); else the jobs use all of them.
    pub(crate) fn fio_add_jobs(&mut self, top: &[DevId]) {
        let s = &self.cfg.scenario;
        let top: Vec<DevId> = if s.workload.filename.is_empty() {
            top.to_vec()
        } else {
            s.workload.filename.split(':').map(|n| *top.iter().find(|d| self.devs[**d].name == n).expect("validated")).collect()
        };
        let top_devs = top.len() as u32;
        let bs = s.workload.bs;
        for j in 0..s.workload.numjobs {
            let nth_dev = j % top_devs;
            let dev = top[nth_dev as usize];
            // Jobs sharing a device use separate files. Files of a given `size` lie back to
            // back, as a fresh filesystem places files written one after another; time-based
            // jobs (size 0) get an equal share of the device each.
            let sharers = (s.workload.numjobs + top_devs - 1 - nth_dev) / top_devs;
            let nth = j / top_devs;
            let cap = crate::block::genhd::dev_capacity_sectors(&self.devs, &self.disks, dev, s) * 512;
            let share = cap / sharers as u64 / bs * bs;
            let region = if s.workload.size > 0 { s.workload.size.div_ceil(bs) * bs } else { 0 };
            let region = if region > 0 && region <= share { region } else { share };
            // A device too small for a block per job: each job gets all of it, overlapping (as
            // fio's numjobs clones of one job on one device do). `validate` refuses a block
            // larger than the device.
            let (start, region) = if region >= bs { (nth as u64 * region, region) } else { (0, cap / bs * bs) };
            let tid = ThreadId(self.threads.len() as u32);
            let home = CoreId((j % s.cpu.cores) as u16);
            self.threads.push(crate::kernel::sched::Thread::user(s.workload.name.clone(), JobId(j), home, 1000 + j));
            let rng = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB + j as u64);
            self.jobs.push(crate::fio::job::Job::new(JobId(j), tid, dev, start, region, &s.workload, rng));
        }
    }

    /// fio forks its jobs: each starts within `JOB_FORK_SPREAD_NS`.
    pub(crate) fn fio_fork_jobs(&mut self) {
        let mut fork = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB - 1);
        for j in 0..self.jobs.len() {
            let at = crate::engine::time::SimTime(fork.below(crate::calib::JOB_FORK_SPREAD_NS));
            self.events.schedule(at, crate::engine::event::Event::JobStart { job: self.jobs[j].id });
        }
    }
}
