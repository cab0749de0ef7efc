//! Reading a job file: `[global]` and job sections, line by line, into knob settings. Each job
//! section starts from fio's defaults and the `[global]` options read before it; the first
//! job's settings are the `workload.*` knobs, a later one's `job.NAME.*` (a new job by that
//! name), after `job.count=1`, which drops the jobs a scenario had before.
//!
//! Every function here is `#[inline]`: only the sandbox's job-file box and the CLI read or write
//! job files, never the simulation, so each compiles its own copy at its own opt-level (the
//! page's at "z", not the core's 2; BENCHMARKS.md, "Size").

use super::*;
use crate::scenario::jobs::{job_knob_key, JOBS};
use crate::scenario::limits;

/// A section's settings as read: (knob, value), one per knob, the last line winning.
#[derive(Clone, Default)]
struct Section {
    name: String,
    /// The line of its header (from 1).
    line: usize,
    knobs: Vec<(&'static KnobSpec, String)>,
    time_based: bool,
    /// `runtime`, seconds, as given (the model's range is checked when it applies).
    runtime: Option<String>,
}

impl Section {
    #[inline]
    fn set(&mut self, knob: &'static KnobSpec, value: String) {
        match self.knobs.iter_mut().find(|(k, _)| k.key == knob.key) {
            Some(slot) => slot.1 = value,
            None => self.knobs.push((knob, value)),
        }
    }

    #[inline]
    fn get(&self, knob: &KnobSpec) -> Option<&str> {
        self.knobs.iter().find(|(k, _)| k.key == knob.key).map(|(_, v)| v.as_str())
    }
}

#[inline]
pub fn parse(text: &str) -> Result<FioJob, ScenarioError> {
    if text.len() > JOB_FILE_MAX {
        return Err(ScenarioError::new("fio", format!("the job file has {} bytes; at most {JOB_FILE_MAX} are allowed", text.len())));
    }
    let mut r = Reader::default();
    for (n, raw) in text.lines().enumerate() {
        // fio's `strip_blank_end` ends every line at its first ';' or '#': a comment, whole-line
        // or after an option (`numjobs=4 ; 4 threads`, tiobench-example.fio).
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') && !line.ends_with(']') {
            return Err(ScenarioError::new("fio", format!("line {}: '{}' is not a section header; expected [name]", n + 1, clip(line))));
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            r.section(section, n)?;
        } else {
            r.option(line, n)?;
        }
    }
    r.finish()
}

/// A job file as it is read, line by line.
#[derive(Default)]
struct Reader {
    job: FioJob,
    /// `[global]`'s options so far: every job section after them starts with them.
    global: Section,
    sections: Vec<Section>,
    in_global: bool,
    /// Values the model cannot take: (their note's index, the option, its knob, the section
    /// they were read in: None for `[global]`).
    instead: Vec<(usize, String, &'static KnobSpec, Option<usize>)>,
}

impl Reader {
    /// `[global]` or a job's `[name]`, on line `n` (from 0).
    #[inline]
    fn section(&mut self, section: &str, n: usize) -> Result<(), ScenarioError> {
        if section == "global" {
            self.in_global = true;
            return Ok(());
        }
        self.in_global = false;
        if self.sections.len() as u32 == limits::JOB_SECTIONS_MAX {
            return Err(ScenarioError::new(
                "fio",
                format!(
                    "line {}: [{}] is job section {}; at most {} job sections are allowed",
                    n + 1,
                    clip(section),
                    self.sections.len() + 1,
                    limits::JOB_SECTIONS_MAX
                ),
            ));
        }
        let mut s = Section { name: job_name(section, &self.sections), line: n + 1, ..Section::default() };
        for &(k, v) in DEFAULTS {
            s.set(k, v.to_string());
        }
        for (k, v) in &self.global.knobs {
            s.set(k, v.clone());
        }
        (s.time_based, s.runtime) = (self.global.time_based, self.global.runtime.clone());
        let name = s.name.clone();
        s.set(&kt::WORKLOAD_NAME, name);
        self.job.from_file += 1;
        self.sections.push(s);
        Ok(())
    }

    /// The section the lines go to now: `[global]` before any job, or after a `[global]` header.
    #[inline]
    fn current(&mut self) -> &mut Section {
        match self.sections.last_mut() {
            Some(s) if !self.in_global => s,
            _ => &mut self.global,
        }
    }

    /// A `key=value` line of a job, or of `[global]`.
    #[inline]
    fn option(&mut self, line: &str, n: usize) -> Result<(), ScenarioError> {
        let (key, value) = line.split_once('=').map_or((line, ""), |(k, v)| (k.trim(), v.trim()));
        let knob = match OPTIONS.iter().find(|(names, _)| names.contains(&key)) {
            Some(&(_, knob)) => Some(knob),
            // time_based: the job keeps going until runtime, whatever its size (blkviz's size
            // 0 runs for the whole duration).
            None if key == "time_based" => None,
            None => return self.unmapped(key, value, n),
        };
        if let Some(expected) = fio_refuses(key, value) {
            return Err(ScenarioError::new(
                "fio",
                format!("line {}: {}={} is not a value fio takes; expected {expected}", n + 1, clip(key), clip(value)),
            ));
        }
        match knob {
            // Applied once the file is read: the run's end follows from every job's.
            Some(knob) if knob.key == kt::DURATION.key => {
                self.job.from_file += 1;
                self.current().runtime = Some(fio_value(key, value));
            }
            // offset=N% is a share of the device.
            Some(knob) if knob.key == kt::WORKLOAD_OFFSET.key && value.trim_end().ends_with('%') => {
                self.apply(key, &kt::WORKLOAD_OFFSET_PCT, value.trim_end().trim_end_matches('%').trim().to_string())
            }
            Some(knob) => self.apply(key, knob, fio_value(key, value)),
            // Applied once the file is read: fio takes its options in any order, and a size=
            // after time_based (or a job's under [global]'s time_based) must not undo it.
            None => self.current().time_based = !matches!(value, "0" | "false"),
        }
        Ok(())
    }

    /// An option that sets no knob: the random map, an option that changes nothing in the
    /// model, or one the model lacks; a name fio does not know is refused, as fio refuses it
    /// ("Bad option"), with the line and the option it most likely meant.
    #[inline]
    fn unmapped(&mut self, key: &str, value: &str, n: usize) -> Result<(), ScenarioError> {
        if !super::options::is_fio_option(key) {
            let hint = match super::options::nearest_option(key) {
                Some(o) => format!("did you mean {o}?"),
                None => "expected one of fio's options (fio --cmdhelp lists them)".to_string(),
            };
            return Err(ScenarioError::new("fio", format!("line {}: '{}' is not an fio option; {hint}", n + 1, clip(key))));
        }
        match key {
            // The model keeps fio's default random map (each block once per pass).
            "norandommap" => self.job.not_modelled("norandommap (blkviz keeps fio's random map: each block once per pass)".to_string()),
            k if IGNORED.contains(&k) => {
                if !self.job.ignored.iter().any(|i| i == k) {
                    self.job.ignored.push(k.to_string());
                }
            }
            other => self.job.not_modelled(if value.is_empty() { clip(other) } else { format!("{}={}", clip(other), clip(value)) }),
        }
        Ok(())
    }

    /// The sandbox's scenario checks each value on its own: one the model cannot take is named
    /// and fio's default stays (how the knobs go together is checked when they apply).
    #[inline]
    fn apply(&mut self, key: &str, knob: &'static KnobSpec, value: String) {
        let at = (!self.in_global && !self.sections.is_empty()).then(|| self.sections.len() - 1);
        match knob.set(&mut Scenario::default(), &value) {
            Ok(()) => {
                self.job.from_file += 1;
                self.current().set(knob, value);
            }
            Err(e) => {
                let before = self.job.not_modelled.len();
                self.job.not_modelled(format!("{}={} ({}", clip(key), clip(value.as_str()), e.message));
                if self.job.not_modelled.len() > before {
                    self.instead.push((before, key.to_string(), knob, at));
                }
                // A whole number past the model's range (fio takes iodepth=99999) runs at the
                // nearest the model takes, not at fio's default: the job asked for a deep queue.
                if let KnobKind::Int { min, max, .. } = knob.kind {
                    if let Ok(n) = value.trim().parse::<u64>() {
                        self.job.from_file += 1;
                        self.current().set(knob, n.clamp(min, max).to_string());
                    }
                }
                if let Some(near) = nearest_mode(knob, &value) {
                    self.job.from_file += 1;
                    self.current().set(knob, near);
                }
            }
        }
    }

    #[inline]
    fn finish(mut self) -> Result<FioJob, ScenarioError> {
        if self.sections.is_empty() {
            return Err(ScenarioError::new("fio", "no job section; expected a [name] section after [global]"));
        }
        let duration = self.run_end();
        let many = self.sections.len() > 1;
        for i in 0..self.sections.len() {
            let s = &mut self.sections[i];
            // name= renames the job its section names (a later job's digits are a place).
            s.name = s.get(&kt::WORKLOAD_NAME).unwrap_or_default().to_string();
            if i > 0 && s.name.bytes().all(|b| b.is_ascii_digit()) {
                s.name = format!("job{}", s.name).chars().take(15).collect();
                let name = s.name.clone();
                s.set(&kt::WORKLOAD_NAME, name);
            }
            if s.time_based {
                s.set(&kt::WORKLOAD_SIZE, "0".to_string());
            }
            if many {
                if let Some(rt) = s.runtime.clone().filter(|rt| kt::WORKLOAD_RUNTIME.set(&mut Scenario::default(), rt).is_ok()) {
                    s.set(&kt::WORKLOAD_RUNTIME, rt);
                }
            }
            // A mixed job through the page cache is not modelled: it runs with O_DIRECT.
            let mixed = s.get(&kt::WORKLOAD_RW).is_some_and(|rw| rw == "rw" || rw == "randrw" || rw == "readwrite");
            if mixed && s.get(&kt::WORKLOAD_DIRECT) == Some("false") {
                s.set(&kt::WORKLOAD_DIRECT, "true".to_string());
                let note = format!(
                    "[{}] rw={} buffered (direct=0: the page cache's mixed I/O; runs direct=1)",
                    clip(&s.name),
                    s.get(&kt::WORKLOAD_RW).unwrap_or("")
                );
                self.job.not_modelled(note);
            }
        }
        // wait_for names a job before it, as fio requires (fio: "waitee job not found").
        for (i, s) in self.sections.iter().enumerate() {
            let Some(w) = s.get(&kt::WORKLOAD_WAIT_FOR).filter(|w| !w.is_empty()) else { continue };
            if !self.sections[..i].iter().any(|o| o.name == w) {
                let before: Vec<&str> = self.sections[..i].iter().map(|o| o.name.as_str()).collect();
                return Err(ScenarioError::new(
                    "fio",
                    format!(
                        "[{}] at line {}: wait_for={} names no job before it; expected one of: {}",
                        clip(&s.name),
                        s.line,
                        clip(w),
                        if before.is_empty() { "(none: it is the first job)".to_string() } else { before.join(", ") }
                    ),
                ));
            }
        }
        self.job.knobs.push((JOBS.key.to_string(), "1".to_string()));
        let mut names = Scenario::default();
        for (i, s) in self.sections.iter().enumerate() {
            if i > 0 {
                names.jobs.push(crate::scenario::Workload { name: s.name.clone(), ..Default::default() });
            } else {
                names.workload.name = s.name.clone();
            }
            for (k, v) in &s.knobs {
                self.job.knobs.push((job_knob_key(&names, i, k), v.clone()));
            }
        }
        if let Some(d) = duration {
            match kt::DURATION.set(&mut Scenario::default(), &d) {
                Ok(()) => self.job.knobs.push((kt::DURATION.key.to_string(), d)),
                Err(e) => self.job.not_modelled(format!("runtime={} ({}; the run keeps its own duration)", clip(&d), e.message)),
            }
        }
        self.say_instead(&names);
        Ok(self.job)
    }

    /// The run's end, from the jobs' runtimes: the one runtime of a single job (as given, so
    /// that the model's range names it); for several, each stonewalled group runs after the one
    /// before, as long as its longest job (its startdelay and runtime). None when no job has a
    /// runtime.
    #[inline]
    fn run_end(&mut self) -> Option<String> {
        if self.sections.len() == 1 {
            return self.sections[0].runtime.clone();
        }
        let secs = |s: &Section, k: &KnobSpec| s.get(k).and_then(crate::float_parse::parse_f64).unwrap_or(0.0);
        let (mut total, mut group, mut any) = (0.0, 0.0, false);
        for s in &self.sections {
            let Some(rt) = s.runtime.as_deref().and_then(crate::float_parse::parse_f64) else { continue };
            any = true;
            if s.get(&kt::WORKLOAD_STONEWALL) == Some("true") || s.get(&kt::WORKLOAD_WAIT_FOR).is_some_and(|w| !w.is_empty()) {
                total += group;
                group = 0.0;
            }
            group = f64::max(group, secs(s, &kt::WORKLOAD_STARTDELAY) + rt);
        }
        any.then(|| format!("{}", (total + group).min(limits::DURATION_S_MAX)))
    }

    /// A value the model cannot take says what runs in its place: the knob's value once the
    /// file is read (fio's default, or a later line's).
    #[inline]
    fn say_instead(&mut self, names: &Scenario) {
        for (i, key, knob, at) in std::mem::take(&mut self.instead) {
            let at = at.unwrap_or(0);
            let want = job_knob_key(names, at, knob);
            let runs = match self.job.knobs.iter().find(|(k, _)| *k == want) {
                Some((_, v)) if !v.is_empty() => format!("; runs {}={v} instead)", clip(&key)),
                // runtime has no fio default here: the run keeps the end it had (--duration's,
                // the lesson's or the sandbox's).
                None if knob.key == kt::DURATION.key => "; the run keeps its own duration)".to_string(),
                _ => ")".to_string(),
            };
            self.job.not_modelled[i].push_str(&runs);
        }
    }
}

/// A job's name from its section's: a process name as top shows it (15 characters of printable
/// ASCII; others become '_'), and another job's name taken gets `-2`, `-3`.
#[inline]
fn job_name(section: &str, before: &[Section]) -> String {
    let base: String = section.chars().map(|c| if c.is_ascii_graphic() { c } else { '_' }).take(15).collect();
    // A later job is addressed by its name (`job.NAME.rw`), where digits are a place.
    let digits = base.bytes().all(|b| b.is_ascii_digit());
    let base = if base.is_empty() || (digits && !before.is_empty()) { format!("job{base}") } else { base };
    let mut name = base.clone();
    let mut n = 1;
    while before.iter().any(|s| s.name == name) {
        n += 1;
        let tail = format!("-{n}");
        name = format!("{}{tail}", base.chars().take(15 - tail.len()).collect::<String>());
    }
    name
}

/// A value as its knob takes it: fio spells flags 0/1 (the knobs take true/false), times with
/// units, devices as paths.
#[inline]
fn fio_value(key: &str, v: &str) -> String {
    let on = |v: &str| v.is_empty() || v == "1" || v == "true";
    match key {
        "direct" | "end_fsync" | "fsync_on_close" | "stonewall" | "wait_for_previous" | "group_reporting" => on(v).to_string(),
        "buffered" => (!on(v)).to_string(),
        "runtime" | "startdelay" | "ramp_time" => fio_seconds(v).map_or_else(|| v.to_string(), |s| s.to_string()),
        // thinktime's bare number is microseconds.
        "thinktime" => match v.trim().parse::<u64>() {
            Ok(us) => us.to_string(),
            Err(_) => fio_seconds(v).map_or_else(|| v.to_string(), |s| ((s * 1e6).round() as u64).to_string()),
        },
        "rwmixwrite" => v.trim().parse::<u64>().ok().filter(|&n| n <= 100).map_or_else(|| v.to_string(), |n| (100 - n).to_string()),
        // rate_iops=r,w: the reads' rate paces the job.
        "rate_iops" => v.split(',').next().unwrap_or("").trim().to_string(),
        "name" | "wait_for" => v.chars().take(15).collect(),
        "ioengine" if matches!(v, "psync" | "sync" | "pvsync") => "sync".to_string(),
        "rw" | "readwrite" if v == "readwrite" => "rw".to_string(),
        // /dev/sdb:/dev/mapper/dm-1 → sdb:dm-1 (the knob takes kernel names).
        "filename" => v.split(':').map(|p| p.rsplit('/').next().unwrap_or(p)).collect::<Vec<_>>().join(":"),
        _ => v.to_string(),
    }
}

/// The nearest the model has to a value it cannot take, where one keeps the job's meaning (it
/// is still named as not modelled, and `--strict` refuses it): an asynchronous engine runs as
/// libaio, at the same iodepth in flight; a synchronous one as sync; a block size that is no
/// multiple of the 512-byte sector, rounded up to one (the block layer's unit).
#[inline]
fn nearest_mode(knob: &KnobSpec, value: &str) -> Option<String> {
    let v = value.trim();
    if knob.key == kt::WORKLOAD_IOENGINE.key {
        return match v {
            "io_uring_cmd" => Some("io_uring".to_string()),
            "posixaio" | "solarisaio" | "windowsaio" => Some("libaio".to_string()),
            "pvsync2" | "vsync" | "mmap" => Some("sync".to_string()),
            _ => None,
        };
    }
    if knob.key == kt::WORKLOAD_BS.key {
        return crate::scenario::bs_rounded_to_sector(v).map(|up| up.to_string());
    }
    None
}

/// The scenario's jobs as a job file: what the sandbox's box shows, so that a link's jobs can
/// be read and edited again. `parse` of it gives the same jobs back.
#[inline]
pub fn job_file(s: &Scenario) -> String {
    let flag = |k: &KnobSpec, t: &Scenario| if k.get(t) == "true" { "1" } else { "0" };
    let mut out = String::new();
    for i in 0..1 + s.jobs.len() {
        let mut t = s.clone();
        if i > 0 {
            std::mem::swap(&mut t.workload, &mut t.jobs[i - 1]);
        }
        let t = &t;
        out += &format!(
            "{}[{}]\nrw={}\nbs={}\nnumjobs={}\nioengine={}\niodepth={}\ndirect={}\n",
            if i == 0 { "" } else { "\n" },
            kt::WORKLOAD_NAME.get(t),
            kt::WORKLOAD_RW.get(t),
            kt::WORKLOAD_BS.get(t),
            kt::WORKLOAD_NUMJOBS.get(t),
            kt::WORKLOAD_IOENGINE.get(t),
            kt::WORKLOAD_IODEPTH.get(t),
            flag(&kt::WORKLOAD_DIRECT, t)
        );
        if kt::WORKLOAD_SIZE.get(t) != "0" {
            out += &format!("size={}\n", kt::WORKLOAD_SIZE.get(t));
        }
        if flag(&kt::WORKLOAD_FSYNC, t) == "1" {
            out += "end_fsync=1\n";
        }
        for (k, opt) in [(&kt::WORKLOAD_FILENAME, "filename"), (&kt::WORKLOAD_WAIT_FOR, "wait_for")] {
            if !k.get(t).is_empty() {
                out += &format!("{opt}={}\n", k.get(t));
            }
        }
        out += &job_options(t);
    }
    out
}

/// The job's options beyond the first ones, those that differ from fio's defaults.
#[inline]
fn job_options(t: &Scenario) -> String {
    let o = &t.workload.fio;
    let d = crate::scenario::jobs::JobOptions::default();
    let mut out = String::new();
    let mut line = |cond: bool, k: &str, v: String| {
        if cond {
            out += &format!("{k}={v}\n");
        }
    };
    line(o.rwmixread != d.rwmixread, "rwmixread", o.rwmixread.to_string());
    line(o.offset_pct > 0, "offset", format!("{}%", o.offset_pct));
    line(o.offset_pct == 0 && o.offset > 0, "offset", kt::WORKLOAD_OFFSET.get(t));
    line(o.rate_iops > 0, "rate_iops", o.rate_iops.to_string());
    line(o.thinktime > 0, "thinktime", o.thinktime.to_string());
    line(o.startdelay > 0.0, "startdelay", format!("{}", o.startdelay));
    line(o.runtime > 0.0, "runtime", format!("{}", o.runtime));
    line(o.ramp_time > 0.0, "ramp_time", format!("{}", o.ramp_time));
    line(o.group_reporting, "group_reporting", "1".into());
    line(o.prio != d.prio, "prio", o.prio.to_string());
    line(o.prioclass != d.prioclass, "prioclass", kt::WORKLOAD_PRIOCLASS.get(t));
    line(o.stonewall, "stonewall", "1".into());
    line(o.iodepth_batch_submit != d.iodepth_batch_submit, "iodepth_batch_submit", o.iodepth_batch_submit.to_string());
    line(
        o.iodepth_batch_complete_min != d.iodepth_batch_complete_min,
        "iodepth_batch_complete_min",
        o.iodepth_batch_complete_min.to_string(),
    );
    line(
        o.iodepth_batch_complete_max != d.iodepth_batch_complete_max,
        "iodepth_batch_complete_max",
        o.iodepth_batch_complete_max.to_string(),
    );
    out
}
