//! fio job files: the sandbox's workload. Parses the INI format fio reads (`[global]` and one
//! job section, `key=value` lines, `;` and `#` comments) into knob settings.

use crate::scenario::{clip, ScenarioError};

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

/// Knob settings from a job file, in file order, plus the options it ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FioJob {
    pub knobs: Vec<(String, String)>,
    pub ignored: Vec<String>,
}

pub const JOB_FILE_MAX: usize = 8192;

pub fn parse(text: &str) -> Result<FioJob, ScenarioError> {
    if text.len() > JOB_FILE_MAX {
        return Err(ScenarioError::new("fio", format!("the job file has {} bytes; at most {JOB_FILE_MAX} are allowed", text.len())));
    }
    let mut job = FioJob::default();
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
                job.knobs.push(("workload.name".into(), section.chars().take(15).collect()));
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
        job.knobs.push((knob.to_string(), value));
    }
    if jobs == 0 {
        return Err(ScenarioError::new("fio", "no job section; expected a [name] section after [global]"));
    }
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_file_becomes_knobs() {
        let j =
            parse("[global]\nioengine=libaio\ndirect=1\n; comment\n[randread]\nrw=randread\nbs=4k\niodepth=32\nnumjobs=4\nruntime=60\n")
                .unwrap();
        assert_eq!(
            j.knobs,
            [
                ("workload.ioengine", "libaio"),
                ("workload.direct", "true"),
                ("workload.name", "randread"),
                ("workload.rw", "randread"),
                ("workload.bs", "4k"),
                ("workload.iodepth", "32"),
                ("workload.numjobs", "4")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(j.ignored, ["runtime"]);
    }

    #[test]
    fn unknown_options_and_second_jobs_are_named() {
        assert!(parse("[a]\nverify=md5\n").unwrap_err().to_string().contains("'verify' is not modelled"));
        assert!(parse("[a]\nrw=read\n[b]\nrw=write\n").unwrap_err().to_string().contains("second job section [b]"));
        assert!(parse("rw=read\n").unwrap_err().to_string().contains("no job section"));
    }
}
