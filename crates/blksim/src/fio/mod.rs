//! fio job files: the sandbox's workload. Parses the INI format fio reads (`[global]` and one
//! job section, `key=value` lines, `;` and `#` comments) into knob settings.

use crate::scenario::{clip, ScenarioError};

pub mod engine;
pub mod job;

/// fio options that change nothing in the model, accepted so that real job files paste in.
const IGNORED: &[&str] = &[
    "runtime",
    "time_based",
    "group_reporting",
    "ramp_time",
    "randrepeat",
    "norandommap",
    "thread",
    "invalidate",
    "overwrite",
    "startdelay",
    "stonewall",
    "directory",
    "loops",
    "refill_buffers",
    "buffered",
];

/// fio's own defaults for the options the model takes (fio(1): rw=read, bs=4k, numjobs=1,
/// ioengine=psync, iodepth=1, direct=0, no end_fsync; blkviz's size 0 runs for the duration,
/// and no filename means every top device): a job file says the whole workload, so what it
/// leaves out is fio's default, not what the page had before.
const DEFAULTS: &[(&str, &str)] = &[
    ("workload.rw", "read"),
    ("workload.bs", "4k"),
    ("workload.numjobs", "1"),
    ("workload.ioengine", "sync"),
    ("workload.iodepth", "1"),
    ("workload.direct", "false"),
    ("workload.size", "0"),
    ("workload.fsync", "false"),
    ("workload.filename", ""),
];

/// Knob settings from a job file, one per knob: fio's defaults, each replaced by the file's
/// setting where it gives one (a later line wins); plus how many settings the file gave and
/// the options it ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FioJob {
    pub knobs: Vec<(String, String)>,
    pub from_file: usize,
    pub ignored: Vec<String>,
}

impl FioJob {
    fn set(&mut self, knob: &str, value: String) {
        self.from_file += 1;
        match self.knobs.iter_mut().find(|(k, _)| k == knob) {
            Some(slot) => slot.1 = value,
            None => self.knobs.push((knob.to_string(), value)),
        }
    }
}

pub const JOB_FILE_MAX: usize = 8192;

pub fn parse(text: &str) -> Result<FioJob, ScenarioError> {
    if text.len() > JOB_FILE_MAX {
        return Err(ScenarioError::new("fio", format!("the job file has {} bytes; at most {JOB_FILE_MAX} are allowed", text.len())));
    }
    let mut job = FioJob { knobs: DEFAULTS.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect(), ..FioJob::default() };
    let mut jobs = 0;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if section != "global" {
                jobs += 1;
                if jobs > 1 {
                    return Err(ScenarioError::new(
                        "fio",
                        format!("line {}: a second job section [{}]; blkviz runs one job (use numjobs= for copies)", n + 1, clip(section)),
                    ));
                }
                job.set("workload.name", section.chars().take(15).collect());
            }
            continue;
        }
        let (key, value) = line.split_once('=').map_or((line, ""), |(k, v)| (k.trim(), v.trim()));
        let knob = match key {
            "rw" | "readwrite" => "workload.rw",
            "bs" | "blocksize" => "workload.bs",
            "numjobs" => "workload.numjobs",
            "ioengine" => "workload.ioengine",
            "iodepth" => "workload.iodepth",
            "direct" => "workload.direct",
            "size" => "workload.size",
            "end_fsync" | "fsync_on_close" => "workload.fsync",
            "filename" => "workload.filename",
            k if IGNORED.contains(&k) => {
                job.ignored.push(k.to_string());
                continue;
            }
            other => {
                return Err(ScenarioError::new(
                    "fio",
                    format!("line {}: option '{}' is not modelled; known: rw, bs, numjobs, ioengine, iodepth, direct, size, end_fsync, filename (ignored: {})", n + 1, clip(other), IGNORED.join(", ")),
                ))
            }
        };
        let value = match (knob, value) {
            // fio spells these as 0/1; the knobs take true/false.
            ("workload.direct" | "workload.fsync", v) => (v == "1" || v == "true").to_string(),
            ("workload.ioengine", "psync" | "sync" | "pvsync") => "sync".to_string(),
            // /dev/sdb:/dev/mapper/dm-1 → sdb:dm-1 (the knob takes kernel names).
            ("workload.filename", v) => v.split(':').map(|p| p.rsplit('/').next().unwrap_or(p)).collect::<Vec<_>>().join(":"),
            (_, v) => v.to_string(),
        };
        job.set(knob, value);
    }
    if jobs == 0 {
        return Err(ScenarioError::new("fio", "no job section; expected a [name] section after [global]"));
    }
    Ok(job)
}

/// The scenario's workload as a job file: what the sandbox's box shows, so that a link's job
/// can be read and edited again. `parse` of it gives the same workload knobs back.
pub fn job_file(s: &crate::scenario::Scenario) -> String {
    let get = |k: &str| crate::scenario::get_knob(s, k).unwrap_or_default();
    let flag = |k: &str| if get(k) == "true" { "1" } else { "0" };
    let mut out = format!(
        "[global]\nioengine={}\niodepth={}\ndirect={}\n",
        get("workload.ioengine"),
        get("workload.iodepth"),
        flag("workload.direct")
    );
    if get("workload.size") != "0" {
        out += &format!("size={}\n", get("workload.size"));
    }
    if flag("workload.fsync") == "1" {
        out += "end_fsync=1\n";
    }
    if !get("workload.filename").is_empty() {
        out += &format!("filename={}\n", get("workload.filename"));
    }
    out + &format!(
        "\n[{}]\nrw={}\nbs={}\nnumjobs={}\n",
        get("workload.name"),
        get("workload.rw"),
        get("workload.bs"),
        get("workload.numjobs")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_file_becomes_knobs() {
        let j =
            parse("[global]\nioengine=libaio\ndirect=1\n; comment\n[randread]\nrw=randread\nbs=4k\niodepth=32\nnumjobs=4\nruntime=60\n")
                .unwrap();
        assert_eq!(j.from_file, 7);
        let value = |k: &str| j.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        for (k, v) in [
            ("workload.ioengine", "libaio"),
            ("workload.direct", "true"),
            ("workload.name", "randread"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.iodepth", "32"),
            ("workload.numjobs", "4"),
        ] {
            assert_eq!(value(k), Some(v), "{k}");
        }
        // One setting per knob: a link takes each once.
        let mut keys: Vec<&str> = j.knobs.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), j.knobs.len());
        assert_eq!(j.ignored, ["runtime"]);
        // What the file leaves out is fio's default: buffered, psync, one job.
        let plain = parse("[seq]\nrw=write\n").unwrap();
        let last = |k: &str| plain.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!(
            (last("workload.direct"), last("workload.ioengine"), last("workload.rw")),
            (Some("false".into()), Some("sync".into()), Some("write".into()))
        );
    }

    #[test]
    fn a_scenario_writes_back_as_a_job_file_that_reads_the_same() {
        for id in ["anatomy-of-a-request", "nr-requests", "scsi-starved", "dm-sg-lists"] {
            let lesson = crate::lessons::find(id).unwrap();
            let base = lesson.config(&lesson.first_variant().name, &[]).unwrap().scenario;
            let mut again = base.clone();
            for (k, v) in parse(&job_file(&base)).unwrap().knobs {
                crate::scenario::set_knob(&mut again, &k, &v).unwrap();
            }
            assert_eq!(again.workload, base.workload, "{id}:\n{}", job_file(&base));
        }
    }

    #[test]
    fn unknown_options_and_second_jobs_are_named() {
        assert!(parse("[a]\nverify=md5\n").unwrap_err().to_string().contains("'verify' is not modelled"));
        assert!(parse("[a]\nrw=read\n[b]\nrw=write\n").unwrap_err().to_string().contains("second job section [b]"));
        assert!(parse("rw=read\n").unwrap_err().to_string().contains("no job section"));
    }
}
