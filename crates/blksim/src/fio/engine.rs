//! fio's job loop as the kernel sees it: a process that issues I/O (psync, libaio or io_uring), waits
//! for completions, fsyncs and exits; and `io_done`, where a finished I/O goes to whoever it
//! was for (the job, writeback, readahead or an md stripe head).

use crate::drivers::md::raid5::STRIPE_BYTES;
use crate::engine::ids::*;
use crate::engine::time::{SimTime, NS_PER_S, NS_PER_US};
use crate::engine::{Next, Sim};
use crate::fio::job::{Io, IoOwner};
use crate::kernel::sched::{Step, ThreadKind, Wait};

impl Sim {
    pub(crate) fn job_of(&self, tid: ThreadId) -> JobId {
        match self.threads[tid].kind {
            ThreadKind::User(j) => j,
            k => panic!("{} ({k:?}) has no job", self.threads[tid].name),
        }
    }

    /// After submitting: issue more (libaio or io_uring below iodepth), wait for completions, fsync, or exit.
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
        if let Some(next) = self.uring_next(j, more) {
            return next;
        }
        let job = &self.jobs[j];
        if more && job.engine.is_async() && job.inflight < job.iodepth {
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
            if self.jobs.iter().any(|j| j.run.held) {
                self.fio_release_held();
            }
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
        self.job_io_completed(j, io.write, io.bytes, now - io.started);
        let job = &mut self.jobs[j];
        job.inflight -= 1;
        job.bytes_done += io.bytes;
        let write = io.write;
        self.job_progressed();
        if write {
            self.acct.totals.bytes_written += io.bytes;
        } else {
            self.acct.totals.bytes_read += io.bytes;
        }
        let tid = self.jobs[j].tid;
        self.job_finished(j);
        let waiting = self.threads[tid].wait == Some(Wait::Io);
        if let (true, Some(step)) = (waiting, self.uring_cqe_posted(j, waiting)) {
            self.wake(tid, step);
        }
    }
}

impl Sim {
    /// fio's jobs, each a process with its own file on its device: every job section's
    /// `numjobs` clones, in the file's order. A section's `filename` names the top devices its
    /// clones take in turn (validated against the stack); else they use all of them.
    pub(crate) fn fio_add_jobs(&mut self, top: &[DevId]) {
        let s = self.cfg.scenario.clone();
        // Each clone's section and device, then how many share each device.
        let mut placed: Vec<(usize, DevId, u32)> = Vec::new();
        for (sec, w) in s.all_jobs().enumerate() {
            let devs: Vec<DevId> = if w.filename.is_empty() {
                top.to_vec()
            } else {
                w.filename.split(':').map(|n| *top.iter().find(|d| self.devs[**d].name == n).expect("validated")).collect()
            };
            for c in 0..w.numjobs {
                placed.push((sec, devs[(c % devs.len() as u32) as usize], c));
            }
        }
        let sections: Vec<&crate::scenario::Workload> = s.all_jobs().collect();
        let mut next_start: Vec<(DevId, u64)> = Vec::new();
        for (j, &(sec, dev, _)) in placed.iter().enumerate() {
            let w = sections[sec];
            let sharers = placed.iter().filter(|p| p.1 == dev).count() as u64;
            let cap = crate::block::genhd::dev_capacity_sectors(&self.devs, &self.disks, dev, &s) * 512;
            let at = match next_start.iter_mut().find(|(d, _)| *d == dev) {
                Some((_, at)) => at,
                None => {
                    next_start.push((dev, 0));
                    &mut next_start.last_mut().expect("pushed").1
                }
            };
            let (start, region) = job_region(w, cap, sharers, at);
            let j = j as u32;
            let tid = ThreadId(self.threads.len() as u32);
            let home = CoreId((j % s.cpu.cores) as u16);
            let mut task = crate::kernel::sched::Thread::user(w.name.clone(), JobId(j), home, 1000 + j);
            task.ioprio = crate::fs::ioprio::IoPrio::of_task(w.fio.prioclass, w.fio.prio);
            self.threads.push(task);
            let rng = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB + u64::from(j));
            let mut job = crate::fio::job::Job::new(JobId(j), tid, dev, start, region, w, rng);
            job.set_mix_rng(crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB + (1 << 24) + u64::from(j)));
            job.run.section = sec as u16;
            job_pace(&mut job, w, &sections[..sec]);
            self.jobs.push(job);
        }
    }

    /// fio forks its jobs: each starts within `JOB_FORK_SPREAD_NS`, after its `startdelay`.
    pub(crate) fn fio_fork_jobs(&mut self) {
        let mut fork = crate::engine::rng::Stream::new(self.seed, crate::engine::rng::STREAM_JOB - 1);
        for j in 0..self.jobs.len() {
            let at = crate::engine::time::SimTime(self.jobs[j].run.startdelay_ns + fork.below(crate::calib::JOB_FORK_SPREAD_NS));
            self.events.schedule(at, crate::engine::event::Event::JobStart { job: self.jobs[j].id });
        }
    }

    /// A job's process starts issuing, unless it waits for other jobs to finish (`stonewall`,
    /// `wait_for`): then it is held, and `job_finished` starts it when they are done.
    pub(crate) fn fio_job_start(&mut self, job: JobId) {
        let waits = &self.jobs[job].run.waits_for;
        if self.jobs.iter().any(|o| waits.contains(&o.run.section) && o.done_at.is_none()) {
            self.jobs[job].run.held = true;
            return;
        }
        let now = self.now();
        let job = &mut self.jobs[job];
        job.run.held = false;
        job.write_since = now;
        job.run.started_at = Some(now);
        job.run.stat_from = now + job.run.ramp_ns;
        job.run.rate_next = now;
        job.run.stop_at = (job.run.runtime_ns > 0).then(|| now + job.run.runtime_ns);
        let tid = job.tid;
        self.wake(tid, Step::Next);
    }

    /// The held jobs whose waits are over start now.
    fn fio_release_held(&mut self) {
        let held: Vec<JobId> = self.jobs.iter().filter(|j| j.run.held).map(|j| j.id).collect();
        for j in held {
            self.fio_job_start(j);
        }
    }

    /// When job `j` may issue its next I/O, if that is later than now (its `thinktime` after
    /// its last completion, its `rate_iops` spacing), at a boundary between its I/Os.
    pub(crate) fn job_paced_until(&self, j: JobId) -> Option<SimTime> {
        let job = &self.jobs[j];
        if !job.at_io_boundary() || (job.run.thinktime_ns == 0 && job.run.rate_ns == 0) {
            return None;
        }
        let until = job.run.think_until.max(job.run.rate_next);
        let until = job.run.stop_at.map_or(until, |s| until.min(s));
        (until > self.now()).then_some(until)
    }

    /// At the top of a job's step: its runtime over, it stops; paced, it sleeps until it may
    /// issue (`Some`); else the I/O it issues now moves its `rate_iops` clock on.
    pub(crate) fn job_pace(&mut self, j: JobId) -> Option<Next> {
        let now = self.now();
        if self.jobs[j].run.stop_at.is_some_and(|s| now >= s) && self.jobs[j].has_more_to_issue() {
            self.jobs[j].stop();
        }
        if let Some(until) = self.job_paced_until(j) {
            let tid = self.jobs[j].tid;
            self.events.schedule(until, crate::engine::event::Event::Timeout { thread: tid });
            return Some(Next::Sleep(Wait::Think));
        }
        let job = &mut self.jobs[j];
        if job.run.rate_ns > 0 && job.at_io_boundary() {
            let r = &mut job.run;
            r.rate_next = r.rate_next.max(SimTime(now.ns().saturating_sub(r.rate_ns))) + r.rate_ns;
        }
        None
    }

    /// fio's accounting of one of job `j`'s I/Os as it completes (`add_clat_sample`,
    /// `io_bytes`, `total_io_u`): its own figures, once its `ramp_time` is over; and its next
    /// I/O waits `thinktime` from now.
    pub(crate) fn job_io_completed(&mut self, j: JobId, write: bool, bytes: u64, clat_ns: u64) {
        let now = self.now();
        let run = &mut self.jobs[j].run;
        if run.started_at.is_some() && now >= run.stat_from {
            let st = &mut run.stat[usize::from(write)];
            st.io_bytes += bytes;
            st.total_ios += 1;
            st.clat.record(clat_ns);
        }
        if run.thinktime_ns > 0 {
            run.think_until = now + run.thinktime_ns;
        }
    }
}

/// Where a clone's I/O lies on its device of `cap` bytes shared by `sharers` clones: at
/// `offset` if the job gives one; else its files lie back to back from `at` (moved on past
/// it), as a fresh filesystem places files written one after another, `size` each, or an equal
/// share of the device each for time-based jobs (size 0).
fn job_region(w: &crate::scenario::Workload, cap: u64, sharers: u64, at: &mut u64) -> (u64, u64) {
    let bs = w.bs;
    let sized = if w.size > 0 { w.size.div_ceil(bs) * bs } else { 0 };
    if w.fio.offset > 0 || w.fio.offset_pct > 0 {
        let off = if w.fio.offset_pct > 0 { cap / 100 * u64::from(w.fio.offset_pct) } else { w.fio.offset };
        let off = off.min(cap.saturating_sub(bs)) / bs * bs;
        let room = (cap - off) / bs * bs;
        return (off, if sized > 0 && sized <= room { sized } else { room });
    }
    let share = cap / sharers / bs * bs;
    let region = if sized > 0 && sized <= share { sized } else { share };
    // A device too small for a block per job: each job gets all of it, overlapping (as fio's
    // numjobs clones of one job on one device do). `validate` refuses a block larger than the
    // device.
    if region < bs {
        return (0, cap / bs * bs);
    }
    let start = if *at + region > cap { 0 } else { *at };
    *at = start + region;
    (start, region)
}

/// A job's start, end and pace from its options; `before` are the sections ahead of it.
fn job_pace(job: &mut crate::fio::job::Job, w: &crate::scenario::Workload, before: &[&crate::scenario::Workload]) {
    let ns = |s: f64| (s * NS_PER_S as f64).round() as u64;
    let o = &w.fio;
    let run = &mut job.run;
    run.startdelay_ns = ns(o.startdelay);
    run.runtime_ns = ns(o.runtime);
    run.ramp_ns = ns(o.ramp_time);
    run.thinktime_ns = o.thinktime * NS_PER_US;
    run.rate_ns = if o.rate_iops > 0 { NS_PER_S / u64::from(o.rate_iops) } else { 0 };
    if o.stonewall {
        run.waits_for = (0..before.len() as u16).collect();
    } else if let Some(i) = before.iter().position(|b| !o.wait_for.is_empty() && b.name == o.wait_for) {
        run.waits_for = vec![i as u16];
    }
}
