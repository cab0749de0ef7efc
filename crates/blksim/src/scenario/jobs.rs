//! Several fio jobs in one scenario: the first job is `workload` (the `workload.*` knobs), the
//! job sections after it are `jobs` (the `job.NAME.OPTION` knobs, `job.2.OPTION` by place).
//! Each job's options are the workload's knobs applied to that job; `jobs` is how many there
//! are. The fio options only a job among several needs (its read/write mix, pace, start, end
//! and priority) are `JobOptions`.

use super::knob_table as kt;
use super::*;

/// fio's per-job options beyond the workload's first ones. Their defaults are fio's and change
/// nothing: a scenario without them runs as it did before they existed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobOptions {
    /// `rwmixread`: the percentage of a mixed job's I/Os that are reads (fio's default 50).
    pub rwmixread: u32,
    /// `offset`: where the job's I/O starts on its device, bytes (0: the job's own share).
    pub offset: u64,
    /// `offset=N%`: where it starts as a percentage of the device (0: `offset` in bytes).
    pub offset_pct: u32,
    /// `rate_iops`: the most I/Os per second the job issues (0: no cap).
    pub rate_iops: u32,
    /// `thinktime`: microseconds the job stalls after each I/O completes before the next.
    pub thinktime: u64,
    /// `startdelay`: seconds after the run starts before the job is forked.
    pub startdelay: f64,
    /// `runtime`: seconds the job runs (0: until the run ends or its size is done).
    pub runtime: f64,
    /// `ramp_time`: seconds from the job's start before its results count.
    pub ramp_time: f64,
    /// `group_reporting`: the job's clones are reported as one.
    pub group_reporting: bool,
    /// `prio` (ionice -n): the level within the class, 0 (highest) to 7.
    pub prio: u32,
    /// `prioclass` (ionice -c).
    pub prioclass: PrioClass,
    /// `stonewall`: the job starts once every job before it in the file has finished.
    pub stonewall: bool,
    /// `wait_for`: the job starts once the named job (an earlier one) has finished.
    pub wait_for: String,
    /// `iodepth_batch_submit` (`iodepth_batch`): how many queued I/Os fio commits in one call
    /// (fio's default 1; 0 is `iodepth`). The model's io_uring engine honours it.
    pub iodepth_batch_submit: u32,
    /// `iodepth_batch_complete_min` (`iodepth_batch_complete`): the fewest completions fio
    /// waits for when it reaps (fio's default 1; its 0, a poll, is not modelled). The model's
    /// io_uring engine honours it.
    pub iodepth_batch_complete_min: u32,
    /// `iodepth_batch_complete_max`: the most completions fio reaps in one go (0, fio's
    /// default: `iodepth_batch_complete_min`). The model's io_uring engine honours it.
    pub iodepth_batch_complete_max: u32,
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            rwmixread: 50,
            offset: 0,
            offset_pct: 0,
            rate_iops: 0,
            thinktime: 0,
            startdelay: 0.0,
            runtime: 0.0,
            ramp_time: 0.0,
            group_reporting: false,
            // IOPRIO_NORM: a process without a class is best-effort at level 4.
            prio: 4,
            prioclass: PrioClass::None,
            stonewall: false,
            wait_for: String::new(),
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
        }
    }
}

/// An I/O priority class (`ioprio_set`, `ionice -c`): fio's prioclass 1, 2 or 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrioClass {
    /// IOPRIO_CLASS_NONE: the class follows from the CPU nice level (best-effort).
    None,
    Rt,
    Be,
    Idle,
}

impl Scenario {
    /// Every job, the first (`workload`) first, in the job file's order.
    pub fn all_jobs(&self) -> impl Iterator<Item = &Workload> {
        std::iter::once(&self.workload).chain(self.jobs.iter())
    }

    /// The job `i` (0: the first) as the first, so that the `workload.*` knobs and checks act on
    /// it; `f`'s result, with the jobs put back in their places.
    pub(super) fn with_job_first<R>(&mut self, i: usize, f: impl FnOnce(&mut Scenario) -> R) -> R {
        if i == 0 {
            return f(self);
        }
        std::mem::swap(&mut self.workload, &mut self.jobs[i - 1]);
        let r = f(self);
        std::mem::swap(&mut self.workload, &mut self.jobs[i - 1]);
        r
    }

    /// Where job `sel` is (1-based place, or its name), if there is one.
    fn job_index(&self, sel: &str) -> Option<usize> {
        if !sel.is_empty() && sel.bytes().all(|b| b.is_ascii_digit()) {
            return sel.parse::<usize>().ok().filter(|&n| (1..=1 + self.jobs.len()).contains(&n)).map(|n| n - 1);
        }
        self.all_jobs().position(|w| w.name == sel)
    }

    /// The jobs' checks as a whole: how many, their names, and each job's own (its devices,
    /// its blocks, whom it waits for), named by the job's knobs (`job.writer.filename`).
    pub(super) fn check_jobs(&self) -> Result<(), ScenarioError> {
        let sections = 1 + self.jobs.len() as u32;
        if sections > limits::JOB_SECTIONS_MAX {
            return Err(ScenarioError::new(JOBS.key, format!("{sections} job sections; at most {} are allowed", limits::JOB_SECTIONS_MAX)));
        }
        let procs: u64 = self.all_jobs().map(|w| u64::from(w.numjobs)).sum();
        if procs > u64::from(limits::JOBS_MAX) {
            return Err(ScenarioError::new(
                JOBS.key,
                format!(
                    "{procs} processes (numjobs over {}); at most {} in all are allowed",
                    counted(sections, "job section"),
                    limits::JOBS_MAX
                ),
            ));
        }
        for (i, w) in self.all_jobs().enumerate() {
            let key = |opt: &KnobSpec| job_knob_key(self, i, opt);
            if self.all_jobs().take(i).any(|o| o.name == w.name) {
                return Err(ScenarioError::new(
                    key(&kt::WORKLOAD_NAME),
                    format!("'{}' names two jobs; expected each job its own name", clip(&w.name)),
                ));
            }
            if w.rw.is_mixed() && !w.direct {
                return Err(ScenarioError::new(
                    key(&kt::WORKLOAD_RW),
                    format!(
                        "{} with direct=0: the page cache's mixed reads and writes are not modelled; expected direct=1, or one direction",
                        enum_name(&w.rw)
                    ),
                ));
            }
            let wf = &w.fio.wait_for;
            if !wf.is_empty() && !self.all_jobs().take(i).any(|o| &o.name == wf) {
                let earlier: Vec<&str> = self.all_jobs().take(i).map(|o| o.name.as_str()).collect();
                return Err(ScenarioError::new(
                    key(&WORKLOAD_WAIT_FOR),
                    format!(
                        "'{}' is not a job before this one; expected empty or one of: {}",
                        clip(wf),
                        if earlier.is_empty() { "(none: the first job waits for no one)".to_string() } else { earlier.join(", ") }
                    ),
                ));
            }
            if i > 0 {
                let mut t = self.clone();
                t.with_job_first(i, |t| t.check_filename().and_then(|()| t.check_job_fits())).map_err(|mut e| {
                    if let Some(opt) = e.field.strip_prefix("workload.") {
                        e.field = format!("job.{}.{opt}", w.name);
                    }
                    e
                })?;
            }
        }
        Ok(())
    }
}

/// The key that names knob `opt` of job `i`: `workload.rw` for the first, `job.NAME.rw` for
/// the others.
pub fn job_knob_key(s: &Scenario, i: usize, opt: &KnobSpec) -> String {
    match (i, opt.key.strip_prefix("workload.")) {
        (0, _) | (_, None) => opt.key.to_string(),
        (_, Some(o)) => format!("job.{}.{o}", s.all_jobs().nth(i).map_or("", |w| w.name.as_str())),
    }
}

/// `job.SEL.OPTION`: the job's selector (a name or a 1-based place) and the workload knob that
/// OPTION names.
pub(super) fn job_key(key: &str) -> Option<(&str, &'static KnobSpec)> {
    let (sel, opt) = key.strip_prefix("job.")?.rsplit_once('.')?;
    KNOBS.iter().find(|k| k.key.strip_prefix("workload.") == Some(opt)).map(|spec| (sel, spec))
}

/// A job's knob's value (`job.writer.rw`), if the job is there.
pub(super) fn get_job_knob(s: &Scenario, key: &str) -> Option<String> {
    let (sel, spec) = job_key(key)?;
    let i = s.job_index(sel)?;
    let mut t = s.clone();
    Some(t.with_job_first(i, |t| spec.get(t)))
}

/// Sets a job's knob (`job.writer.rw=write`). A name no job has adds a job by that name (a place
/// one past the last adds one named `jobN`): a new section in the file (`new_job`).
/// None when `key` does not address a job.
pub(super) fn set_job_knob(s: &mut Scenario, key: &str, value: &str) -> Option<Result<(), ScenarioError>> {
    let (sel, spec) = job_key(key)?;
    let i = match s.job_index(sel) {
        Some(i) => i,
        None => match add_job(s, sel) {
            Ok(i) => i,
            Err(e) => return Some(Err(ScenarioError::new(clip(key), e))),
        },
    };
    Some(s.with_job_first(i, |t| spec.set(t, value)).map_err(|e| ScenarioError::new(clip(key), e.message)))
}

fn add_job(s: &mut Scenario, sel: &str) -> Result<usize, String> {
    let n = 1 + s.jobs.len();
    if n as u32 >= limits::JOB_SECTIONS_MAX {
        return Err(format!("a job section past the {}; at most {} are allowed", limits::JOB_SECTIONS_MAX, limits::JOB_SECTIONS_MAX));
    }
    let name = if sel.bytes().all(|b| b.is_ascii_digit()) {
        if sel.parse::<usize>().ok() != Some(n + 1) {
            return Err(format!("there is no job {}; expected job.1 to job.{n} (or job.{} to add one), or a job's name", clip(sel), n + 1));
        }
        format!("job{}", n + 1)
    } else {
        match kt::WORKLOAD_NAME.kind.parse(sel) {
            Some(Value::Text(name)) => name,
            _ => return Err(format!("'{}' is not a job name; expected {}", clip(sel), kt::WORKLOAD_NAME.kind.allowed())),
        }
    };
    s.jobs.push(new_job(s, name));
    Ok(n)
}

/// A new job section: the first job's workload, under its own name, with fio's defaults for the
/// options that place it among the others (no delay, pace, end, wait or priority of its own).
fn new_job(s: &Scenario, name: String) -> Workload {
    Workload { name, fio: JobOptions::default(), ..s.workload.clone() }
}

pub const WORKLOAD_FSYNC: KnobSpec = KnobSpec {
    key: "workload.fsync",
    kind: KnobKind::Bool,
    help: "fsync when the job ends (fio end_fsync)",
    live: Live::Restart,
    access: flag!(workload.fsync),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_SYNC: KnobSpec = KnobSpec {
    key: "workload.sync",
    kind: KnobKind::Bool,
    help: "open the file O_SYNC (fio sync=1): a direct write is a FUA write (5.x blk-mq, write cache on)",
    live: Live::Restart,
    access: flag!(workload.sync),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_FILENAME: KnobSpec = KnobSpec {
    key: "workload.filename",
    kind: KnobKind::Devices,
    help: "fio filename: the devices the jobs use, in turn (the stack's top devices: sdX, dm-N or md0)",
    live: Live::Restart,
    access: text!(workload.filename),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_FILESYSTEM: KnobSpec = KnobSpec {
    key: "workload.filesystem",
    kind: KnobKind::Enum(&["none", "xfs"]),
    help: "none: the job reads the device node (one bio per page); xfs: files (one bio per contiguous run)",
    live: Live::Restart,
    access: named!(workload.filesystem),
    applies: validate::anywhere,
    values: &[],
};

/// How many job sections: fewer drops the last ones, more adds copies of the first.
pub const JOBS: KnobSpec = KnobSpec {
    key: "job.count",
    kind: KnobKind::Int { min: 1, max: limits::JOB_SECTIONS_MAX as u64, unit: "" },
    help: "how many fio job sections run together (the first is workload.*, the others job.NAME.* or job.N.*); more adds copies of the first, named jobN",
    live: Live::Restart,
    access: Access {
        path: &["jobs"],
        get: |s| Value::Int(1 + s.jobs.len() as u64),
        set: |s, v| {
            let n = v.int() as usize;
            s.jobs.truncate(n - 1);
            while s.jobs.len() + 1 < n {
                let w = new_job(s, format!("job{}", s.jobs.len() + 2));
                s.jobs.push(w);
            }
            Ok(())
        },
    },
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_RWMIXREAD: KnobSpec = KnobSpec {
    key: "workload.rwmixread",
    kind: KnobKind::Int { min: 0, max: 100, unit: "%" },
    help: "fio rwmixread: the share of a mixed job's (rw=rw or randrw) I/Os that are reads; rwmixwrite=N is rwmixread=100-N",
    live: Live::Restart,
    access: int!(workload.fio.rwmixread),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_IODEPTH_BATCH_SUBMIT: KnobSpec = KnobSpec {
    key: "workload.iodepth_batch_submit",
    kind: KnobKind::Int { min: 0, max: limits::IODEPTH_MAX as u64, unit: "" },
    help: "fio iodepth_batch_submit (iodepth_batch): I/Os fio queues before one submitting call (default 1; 0 is iodepth); io_uring only: libaio submits each I/O alone",
    live: Live::Restart,
    access: int!(workload.fio.iodepth_batch_submit),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_IODEPTH_BATCH_COMPLETE_MIN: KnobSpec = KnobSpec {
    key: "workload.iodepth_batch_complete_min",
    kind: KnobKind::Int { min: 1, max: limits::IODEPTH_MAX as u64, unit: "" },
    help: "fio iodepth_batch_complete_min (iodepth_batch_complete): the fewest completions a full queue waits for (default 1; fio's 0, polling the ring before each submission, is not modelled); io_uring only: libaio takes each as it ends",
    live: Live::Restart,
    access: int!(workload.fio.iodepth_batch_complete_min),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_IODEPTH_BATCH_COMPLETE_MAX: KnobSpec = KnobSpec {
    key: "workload.iodepth_batch_complete_max",
    kind: KnobKind::Int { min: 0, max: limits::IODEPTH_MAX as u64, unit: "" },
    help: "fio iodepth_batch_complete_max: the most completions reaped in one go (default 0: iodepth_batch_complete_min); io_uring only",
    live: Live::Restart,
    access: int!(workload.fio.iodepth_batch_complete_max),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_OFFSET: KnobSpec = KnobSpec {
    key: "workload.offset",
    kind: KnobKind::Size { min: 0, max: limits::SIZE_MAX },
    help: "fio offset: where the job's I/O starts on its device (0: the job's own share of it)",
    live: Live::Restart,
    access: int!(workload.fio.offset),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_OFFSET_PCT: KnobSpec = KnobSpec {
    key: "workload.offset_pct",
    kind: KnobKind::Int { min: 0, max: 100, unit: "%" },
    help: "fio offset=N%: where the job's I/O starts, as a share of its device (0: workload.offset in bytes)",
    live: Live::Restart,
    access: int!(workload.fio.offset_pct),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_RATE_IOPS: KnobSpec = KnobSpec {
    key: "workload.rate_iops",
    kind: KnobKind::Int { min: 0, max: 10_000_000, unit: "I/Os per second" },
    help: "fio rate_iops: the job issues at most this many I/Os per second (0: no cap)",
    live: Live::Restart,
    access: int!(workload.fio.rate_iops),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_THINKTIME: KnobSpec = KnobSpec {
    key: "workload.thinktime",
    kind: KnobKind::Int { min: 0, max: 1_000_000_000, unit: "µs" },
    help: "fio thinktime: the job stalls this long after each I/O completes, before its next",
    live: Live::Restart,
    access: int!(workload.fio.thinktime),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_STARTDELAY: KnobSpec = KnobSpec {
    key: "workload.startdelay",
    kind: KnobKind::Seconds { min: 0.0, max: limits::DURATION_S_MAX },
    help: "fio startdelay: seconds before the job starts",
    live: Live::Restart,
    access: seconds!(workload.fio.startdelay),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_RUNTIME: KnobSpec = KnobSpec {
    key: "workload.runtime",
    kind: KnobKind::Seconds { min: 0.0, max: limits::DURATION_S_MAX },
    help: "fio runtime of this job: it stops issuing after this many seconds (0: it runs until the run ends or its size is done)",
    live: Live::Restart,
    access: seconds!(workload.fio.runtime),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_RAMP_TIME: KnobSpec = KnobSpec {
    key: "workload.ramp_time",
    kind: KnobKind::Seconds { min: 0.0, max: limits::DURATION_S_MAX },
    help: "fio ramp_time: the job's first seconds, run but not counted in its results (run --json's jobs)",
    live: Live::Restart,
    access: seconds!(workload.fio.ramp_time),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_GROUP_REPORTING: KnobSpec = KnobSpec {
    key: "workload.group_reporting",
    kind: KnobKind::Bool,
    help: "fio group_reporting: the job's numjobs clones are reported as one",
    live: Live::Restart,
    access: flag!(workload.fio.group_reporting),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_PRIO: KnobSpec = KnobSpec {
    key: "workload.prio",
    kind: KnobKind::Int { min: 0, max: 7, unit: "" },
    help: "fio prio (ionice -n): the level in the I/O priority class, 0 highest (best effort when prioclass is not given, as fio sets it); cfq scales the job's slice by it (cfq_prio_to_slice: 1.8x the base at 0, 0.4x at 7) and queue.cfq=2.6.20 serves higher levels more often; noop, deadline and blk-mq ignore it, as the kernel's do",
    live: Live::Restart,
    access: int!(workload.fio.prio),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_PRIOCLASS: KnobSpec = KnobSpec {
    key: "workload.prioclass",
    kind: KnobKind::Enum(&["none", "rt", "be", "idle"]),
    help: "fio prioclass (ionice -c: 1 rt, 2 be, 3 idle): cfq serves real-time queues before best-effort ones and idle-class queues only when no other has requests (2.6.20: 100 ms after the last other request); the class is the submitting task's, so writeback the flusher submits stays best effort (a writer throttled in balance_dirty_pages writes its own pages back at its class); noop, deadline and blk-mq ignore it",
    live: Live::Restart,
    access: named!(workload.fio.prioclass),
    applies: validate::anywhere,
    values: &[("0", "none"), ("1", "rt"), ("2", "be"), ("3", "idle")],
};

pub const WORKLOAD_STONEWALL: KnobSpec = KnobSpec {
    key: "workload.stonewall",
    kind: KnobKind::Bool,
    help: "fio stonewall: the job starts once every job before it has finished",
    live: Live::Restart,
    access: flag!(workload.fio.stonewall),
    applies: validate::anywhere,
    values: &[],
};

pub const WORKLOAD_WAIT_FOR: KnobSpec = KnobSpec {
    key: "workload.wait_for",
    kind: KnobKind::JobName,
    help: "fio wait_for: the job starts once the named (earlier) job has finished; empty: at once",
    live: Live::Restart,
    access: text!(workload.fio.wait_for),
    applies: validate::anywhere,
    values: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_addressed_by_name_or_place_and_a_new_name_adds_one() {
        let mut s = Scenario::default();
        set_knob(&mut s, "job.writer.rw", "write").unwrap();
        set_knob(&mut s, "job.writer.bs", "64k").unwrap();
        set_knob(&mut s, "job.3.rw", "randread").unwrap();
        assert_eq!(s.jobs.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(), ["writer", "job3"]);
        assert_eq!((s.jobs[0].rw, s.jobs[0].bs, s.workload.rw), (Rw::Write, 65536, Rw::Read), "the first job is untouched");
        assert_eq!(get_knob(&s, "job.2.bs").as_deref(), Some("64k"));
        assert_eq!(get_knob(&s, "job.1.rw").as_deref(), Some("read"), "job.1 is workload");
        assert_eq!(get_knob(&s, "job.count").as_deref(), Some("3"));
        s.validate().unwrap();
        // Each bad setting names the job's own knob and what is allowed.
        let e = set_knob(&mut s, "job.writer.rw", "sideways").unwrap_err();
        assert!(e.to_string().starts_with("job.writer.rw: 'sideways' is not allowed; expected one of read, write"), "{e}");
        let e = set_knob(&mut s, "job.9.rw", "read").unwrap_err();
        assert!(e.to_string().contains("there is no job 9; expected job.1 to job.3 (or job.4 to add one)"), "{e}");
        set_knob(&mut s, "job.writer.filename", "sdz").unwrap();
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "job.writer.filename", "{e}");
        set_knob(&mut s, "job.count", "1").unwrap();
        assert!(s.jobs.is_empty());
        s.validate().unwrap();
    }

    #[test]
    fn too_many_jobs_and_a_wait_for_no_one_are_refused_in_one_line() {
        let mut s = Scenario::default();
        set_knob(&mut s, "workload.numjobs", "1000").unwrap();
        set_knob(&mut s, "job.b.numjobs", "100").unwrap();
        let e = s.validate().unwrap_err().to_string();
        assert_eq!(e, "job.count: 1100 processes (numjobs over 2 job sections); at most 1024 in all are allowed");
        let mut s = Scenario::default();
        set_knob(&mut s, "job.count", &limits::JOB_SECTIONS_MAX.to_string()).unwrap();
        let e = set_knob(&mut s, "job.extra.rw", "read").unwrap_err().to_string();
        assert!(e.contains("at most 64 are allowed"), "{e}");
        let mut s = Scenario::default();
        set_knob(&mut s, "job.b.wait_for", "nobody").unwrap();
        let e = s.validate().unwrap_err().to_string();
        assert!(e.starts_with("job.b.wait_for: 'nobody' is not a job before this one; expected empty or one of: dd"), "{e}");
        set_knob(&mut s, "job.b.rw", "randrw").unwrap();
        set_knob(&mut s, "job.b.wait_for", "dd").unwrap();
        set_knob(&mut s, "job.b.direct", "false").unwrap();
        assert!(s.validate().unwrap_err().to_string().contains("job.b.rw: randrw with direct=0"));
    }
}
