//! fio job files: the sandbox's workload. Parses the INI format fio reads (`[global]` and job
//! sections, `key=value` lines, `;` and `#` comments) into knob settings. fio's own example job
//! files are taken as they are: every option blkviz models applies, and every other one (an
//! option the model lacks, a value it cannot take, a second job section) is named in
//! `FioJob::not_modelled` and ignored, never dropped silently.

use crate::scenario::knob_table as kt;
use crate::scenario::{clip, KnobKind, KnobSpec, Scenario, ScenarioError};

pub mod engine;
pub mod io_uring;
pub mod job;
pub mod options;
mod parse;
pub use parse::{job_file, parse};

/// fio options that change nothing in the model, accepted so that real job files paste in.
const IGNORED: &[&str] = &["randrepeat", "thread", "invalidate", "overwrite", "directory", "loops", "refill_buffers"];

/// fio's own defaults for the options the model takes (fio(1): rw=read, bs=4k, numjobs=1,
/// ioengine=psync, iodepth=1, direct=0, no end_fsync; blkviz's size 0 runs for the duration,
/// and no filename means every top device): a job file says the whole workload, so what it
/// leaves out is fio's default, not what the page had before.
const DEFAULTS: &[(&KnobSpec, &str)] = &[
    (&kt::WORKLOAD_RW, "read"),
    (&kt::WORKLOAD_BS, "4k"),
    (&kt::WORKLOAD_NUMJOBS, "1"),
    (&kt::WORKLOAD_IOENGINE, "sync"),
    (&kt::WORKLOAD_IODEPTH, "1"),
    (&kt::WORKLOAD_DIRECT, "false"),
    (&kt::WORKLOAD_SIZE, "0"),
    (&kt::WORKLOAD_FSYNC, "false"),
    (&kt::WORKLOAD_FILENAME, ""),
];

/// fio's options that set a knob, by their fio names (fio(1)); `fio_value` turns fio's
/// spelling of a value into the knob's.
const OPTIONS: &[(&[&str], &KnobSpec)] = &[
    (&["rw", "readwrite"], &kt::WORKLOAD_RW),
    (&["bs", "blocksize"], &kt::WORKLOAD_BS),
    (&["numjobs"], &kt::WORKLOAD_NUMJOBS),
    (&["ioengine"], &kt::WORKLOAD_IOENGINE),
    (&["iodepth"], &kt::WORKLOAD_IODEPTH),
    (&["iodepth_batch_submit", "iodepth_batch"], &kt::WORKLOAD_IODEPTH_BATCH_SUBMIT),
    (&["iodepth_batch_complete_min", "iodepth_batch_complete"], &kt::WORKLOAD_IODEPTH_BATCH_COMPLETE_MIN),
    (&["iodepth_batch_complete_max"], &kt::WORKLOAD_IODEPTH_BATCH_COMPLETE_MAX),
    (&["direct"], &kt::WORKLOAD_DIRECT),
    // buffered=0 is direct=1 (fio(1)).
    (&["buffered"], &kt::WORKLOAD_DIRECT),
    (&["size"], &kt::WORKLOAD_SIZE),
    (&["end_fsync", "fsync_on_close"], &kt::WORKLOAD_FSYNC),
    (&["filename"], &kt::WORKLOAD_FILENAME),
    // name= names the job, as its section does.
    (&["name"], &kt::WORKLOAD_NAME),
    // The run stops at runtime, as fio stops its jobs then (runtime=60, 2m, 1h); each job of
    // several stops at its own.
    (&["runtime"], &kt::DURATION),
    (&["rwmixread"], &kt::WORKLOAD_RWMIXREAD),
    // rwmixwrite=N is rwmixread=100-N.
    (&["rwmixwrite"], &kt::WORKLOAD_RWMIXREAD),
    // offset=N% sets workload.offset_pct.
    (&["offset"], &kt::WORKLOAD_OFFSET),
    (&["rate_iops"], &kt::WORKLOAD_RATE_IOPS),
    (&["thinktime"], &kt::WORKLOAD_THINKTIME),
    (&["startdelay"], &kt::WORKLOAD_STARTDELAY),
    (&["ramp_time"], &kt::WORKLOAD_RAMP_TIME),
    (&["group_reporting"], &kt::WORKLOAD_GROUP_REPORTING),
    (&["prio"], &kt::WORKLOAD_PRIO),
    (&["prioclass"], &kt::WORKLOAD_PRIOCLASS),
    (&["stonewall", "wait_for_previous"], &kt::WORKLOAD_STONEWALL),
    (&["wait_for"], &kt::WORKLOAD_WAIT_FOR),
];

/// Knob settings from a job file, one per knob: fio's defaults, each replaced by the file's
/// setting where it gives one (a later line wins); plus how many settings the file gave, the
/// options that change nothing in the model (`ignored`), and what the model cannot do
/// (`not_modelled`: an unknown option, a value out of the model's range, a second job).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FioJob {
    pub knobs: Vec<(String, String)>,
    pub from_file: usize,
    pub ignored: Vec<String>,
    pub not_modelled: Vec<String>,
}

impl FioJob {
    /// What a page or the CLI says about the file beyond the settings it applied: one line.
    pub fn notes(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.not_modelled.is_empty() {
            parts.push(format!("not modelled: {}", self.not_modelled.join(", ")));
        }
        if !self.ignored.is_empty() {
            parts.push(format!("no effect in the model: {}", self.ignored.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// A `filename` that names no device of the stack the job runs on (a file, or a disk
    /// another machine has) is named and dropped: the jobs then use every top device, as
    /// without one. `base` is the scenario the job's settings go onto.
    pub fn fit_devices(&mut self, base: &crate::scenario::Scenario) {
        let mut s = base.clone();
        for (k, v) in &self.knobs {
            if crate::scenario::set_knob(&mut s, k, v).is_err() {
                return;
            }
        }
        // Each job's filename (`workload.filename`, `job.NAME.filename`) on its own.
        let top = s.top_device_names();
        let opt = kt::WORKLOAD_FILENAME.key.trim_start_matches("workload");
        for i in 0..self.knobs.len() {
            let (k, v) = &self.knobs[i];
            if !k.ends_with(opt) || v.is_empty() || v.split(':').all(|n| top.iter().any(|t| t == n)) {
                continue;
            }
            let name = std::mem::take(&mut self.knobs[i].1);
            self.not_modelled(format!("filename={} (no such device in this stack: the jobs use its top devices)", clip(&name)));
        }
    }

    fn not_modelled(&mut self, what: String) {
        if !self.not_modelled.contains(&what) && self.not_modelled.len() < NOT_MODELLED_MAX {
            self.not_modelled.push(what);
        }
    }
}

/// The largest job file read (fio's examples are under 4 KiB).
pub const JOB_FILE_MAX: usize = 16384;
/// Distinct not-modelled items named at most (the rest are counted in the last one).
const NOT_MODELLED_MAX: usize = 24;

/// fio's time value (runtime=60, 500ms, 90s, 2m, 1h, 1d; plain numbers are seconds), in seconds.
fn fio_seconds(v: &str) -> Option<f64> {
    // fio's time suffixes (parse.c `time_mult`, any case): us, ms, s, m, h, d and their long
    // forms; a bare number is seconds for runtime.
    let v = v.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let mult = match unit {
        "" | "s" | "sec" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" | "hour" => 3600.0,
        "d" | "day" => 86400.0,
        _ => return None,
    };
    crate::float_parse::parse_f64(num).filter(|x| x.is_finite()).map(|x| x * mult)
}

/// What fio itself takes for an option the model maps, when `value` is not one of them (fio
/// refuses the job file then: `fio: failed parsing rw=raed`). A value fio takes that the model
/// cannot run (rw=randrw, bs=4k-16k, size=50%) is not refused here: it is named as not modelled.
fn fio_refuses(key: &str, value: &str) -> Option<&'static str> {
    // An inline comment is not the value; fio expands ${VAR} from the environment, which
    // blkviz does not have, so such a value is left to the model's own check.
    // fio reads units in any case.
    let value = value.split(['#', ';']).next().unwrap_or("").trim().to_ascii_lowercase();
    let value = value.as_str();
    if value.contains('$') {
        return None;
    }
    let is_time = |v: &str| {
        let unit = v.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        v.starts_with(|c: char| c.is_ascii_digit())
            && matches!(unit, "" | "us" | "usec" | "ms" | "msec" | "s" | "sec" | "m" | "min" | "h" | "hour" | "d" | "day")
    };
    let is_size = |v: &str| {
        if let Some(hex) = v.strip_prefix("0x") {
            return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
        }
        let unit = v.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        v.starts_with(|c: char| c.is_ascii_digit())
            && matches!(unit.trim_end_matches('b').trim_end_matches('i'), "" | "k" | "m" | "g" | "t" | "p")
    };
    let ok = match key {
        "rw" | "readwrite" => matches!(
            value.split(':').next().unwrap_or(""),
            "read"
                | "write"
                | "randread"
                | "randwrite"
                | "rw"
                | "readwrite"
                | "randrw"
                | "trim"
                | "randtrim"
                | "trimwrite"
                | "randtrimwrite"
        ),
        // A size, or fio's ranges, lists and percentages of one.
        "bs" | "blocksize" | "size" => value.split([',', '-', ':']).all(|v| is_size(v) || v.is_empty()) || value.ends_with('%'),
        "runtime" => is_time(value),
        "numjobs" | "iodepth" => !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()),
        "direct" | "buffered" | "end_fsync" | "fsync_on_close" | "time_based" => matches!(value, "" | "0" | "1" | "true" | "false"),
        _ => true,
    };
    (!ok).then_some(match key {
        "rw" | "readwrite" => "read, write, randread, randwrite, rw, randrw, trim, randtrim or trimwrite",
        "bs" | "blocksize" | "size" => "a size with an optional unit (4k, 64k, 1m, 1g)",
        "runtime" => "a time with an optional unit (60, 90s, 2m, 1h, 1d)",
        "numjobs" | "iodepth" => "a whole number",
        _ => "0 or 1",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_file_becomes_knobs() {
        let j =
            parse("[global]\nioengine=libaio\ndirect=1\n; comment\n[randread]\nrw=randread\nbs=4k\niodepth=32\nnumjobs=4\nruntime=60\n")
                .unwrap();
        assert_eq!(j.from_file, 8);
        let value = |k: &str| j.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        for (k, v) in [
            ("workload.ioengine", "libaio"),
            ("workload.direct", "true"),
            ("workload.name", "randread"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.iodepth", "32"),
            ("workload.numjobs", "4"),
            ("duration", "60"),
        ] {
            assert_eq!(value(k), Some(v), "{k}");
        }
        // One setting per knob: a link takes each once.
        let mut keys: Vec<&str> = j.knobs.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), j.knobs.len());
        assert!(j.ignored.is_empty(), "{:?}", j.ignored);
        // runtime's units, and time_based running for the whole runtime whatever the size.
        let timed = parse("[t]\nsize=1g\ntime_based\nruntime=2m\n").unwrap();
        let get = |k: &str| timed.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!((get("duration"), get("workload.size")), (Some("120".into()), Some("0".into())));
        // In any order, and from [global] over a job's size= (fio-seq-read.fio's layout).
        for text in ["[t]\ntime_based\nsize=1g\n", "[global]\ntime_based\nruntime=900\n[t]\nsize=1g\n"] {
            let j = parse(text).unwrap();
            assert_eq!(j.knobs.iter().find(|(key, _)| key == "workload.size").map(|(_, v)| v.as_str()), Some("0"), "{text}");
        }
        let off = parse("[t]\nsize=1g\ntime_based=0\n").unwrap();
        assert_eq!(off.knobs.iter().find(|(key, _)| key == "workload.size").map(|(_, v)| v.as_str()), Some("1g"));
        // A mixed job, paced: its options apply; through the page cache it is not modelled, and
        // runs with O_DIRECT, saying so.
        let mixed = parse("[m]\nrw=randrw\nrwmixread=70\nrate_iops=500\n").unwrap();
        let knob = |k: &str| mixed.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(
            (knob("workload.rw"), knob("workload.rwmixread"), knob("workload.rate_iops"), knob("workload.direct")),
            (Some("randrw"), Some("70"), Some("500"), Some("true"))
        );
        let named = mixed.not_modelled.join("; ");
        assert!(named.contains("rw=randrw buffered"), "{named}");
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
            let lesson = crate::course::lessons::find(id).unwrap();
            let base = lesson.config(&lesson.first_variant().name, &[]).unwrap().scenario;
            let mut again = base.clone();
            for (k, v) in parse(&job_file(&base)).unwrap().knobs {
                crate::scenario::set_knob(&mut again, &k, &v).unwrap();
            }
            assert_eq!(again.workload, base.workload, "{id}:\n{}", job_file(&base));
        }
    }

    #[test]
    fn unknown_options_and_values_are_named_and_ignored_and_second_jobs_run() {
        let job = parse("[global]\nverify=md5\nioengine=posixaio\nbuffered=0\n[a]\nrw=randwrite\n[b]\nrw=write\nbs=1m\n").unwrap();
        let knob = |k: &str| job.knobs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        // The first job applies, with what the model takes; buffered=0 is direct=1.
        assert_eq!(knob("workload.rw"), Some("randwrite"));
        assert_eq!(knob("workload.direct"), Some("true"));
        assert_eq!(knob("workload.bs"), Some("4k"), "job b's bs is not the first job's");
        // The second job is its own, with [global]'s options.
        assert_eq!((knob("job.b.rw"), knob("job.b.bs"), knob("job.b.direct")), (Some("write"), Some("1m"), Some("true")));
        assert_eq!(job.knobs[0], ("job.count".to_string(), "1".to_string()), "the jobs a scenario had before go");
        // A value the model cannot take is named with what is allowed and what runs in its
        // place: the nearest mode that keeps the job's meaning (posixaio: libaio, at the same
        // iodepth), else fio's default or a later line's value.
        assert_eq!(knob("workload.ioengine"), Some("libaio"));
        let notes = job.notes().unwrap();
        assert!(notes.contains("verify=md5"), "{notes}");
        assert!(notes.contains("expected one of sync, libaio, io_uring; runs ioengine=libaio instead)"), "{notes}");
        // io_uring is an engine of the model's own (fio's io_uring engine), not a nearest mode.
        let uring = parse("[a]\nioengine=io_uring\niodepth=8\n").unwrap();
        assert_eq!(uring.knobs.iter().find(|(n, _)| n == "workload.ioengine").map(|(_, v)| v.as_str()), Some("io_uring"));
        assert!(uring.notes().is_none_or(|n| !n.contains("ioengine")), "{:?}", uring.notes());
        let odd = parse("[a]\nbs=3000\nioengine=pvsync2\n").unwrap();
        let odd_knob = |k: &str| odd.knobs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!((odd_knob("workload.bs").as_deref(), odd_knob("workload.ioengine").as_deref()), (Some("3072"), Some("sync")));
        assert!(odd.notes().unwrap().contains("runs bs=3072 instead)"), "a block size rounded up to the sector, and said so");
        let unknown = parse("[a]\nioengine=spdk\n").unwrap();
        assert!(unknown.notes().unwrap().contains("runs ioengine=sync instead)"), "no nearest mode: fio's default");
        let deep = parse("[a]\nioengine=libaio\niodepth=99999\n").unwrap();
        let depth = deep.knobs.iter().find(|(k, _)| k == "workload.iodepth").map(|(_, v)| v.clone());
        assert_eq!(depth.as_deref(), Some(crate::scenario::limits::IODEPTH_MAX.to_string().as_str()), "the deepest the model takes");
        assert!(deep.notes().unwrap().ends_with(&format!("runs iodepth={} instead)", crate::scenario::limits::IODEPTH_MAX)));
        let later = parse("[a]\nrw=randtrim\nrw=randwrite\n").unwrap().notes().unwrap();
        assert!(later.contains("rw=randtrim (") && later.ends_with("runs rw=randwrite instead)"), "{later}");
        // fio's time units, as fio reads them.
        for (runtime, secs) in [("500ms", "0.5"), ("90s", "90"), ("2m", "120"), ("1H", "3600"), ("250000us", "0.25")] {
            let job = parse(&format!("[a]\nruntime={runtime}\n")).unwrap();
            let d = job.knobs.iter().find(|(k, _)| k == "duration").map(|(_, v)| v.as_str());
            assert_eq!((d, job.notes()), (Some(secs), None), "runtime={runtime}");
        }
        let long = parse("[a]\nruntime=2h\n").unwrap().notes().unwrap();
        assert!(long.ends_with("to 3600; the run keeps its own duration)"), "{long}");
        assert!(parse("rw=read\n").unwrap_err().to_string().contains("no job section"));
        assert_eq!(parse("[a]\nrw=read\n").unwrap().notes(), None);
    }

    #[test]
    fn a_reader_and_a_writer_are_two_jobs_named_as_in_the_file() {
        let text = "[global]\nioengine=libaio\ndirect=1\nruntime=2\n[reader]\nrw=randread\nbs=4k\n[writer]\nrw=write\nbs=64k\nstonewall\nruntime=3\n";
        let job = parse(text).unwrap();
        let mut s = Scenario::default();
        for (k, v) in &job.knobs {
            crate::scenario::set_knob(&mut s, k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        let names: Vec<&str> = s.all_jobs().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["reader", "writer"]);
        assert_eq!((s.workload.bs, s.jobs[0].bs, s.jobs[0].direct, s.jobs[0].fio.stonewall), (4096, 65536, true, true));
        // The writer starts when the reader is done: the run lasts both runtimes.
        assert_eq!((s.workload.fio.runtime, s.jobs[0].fio.runtime, s.duration_s), (2.0, 3.0, 5.0));
        s.validate().unwrap();
        // Written back as a job file, it reads the same.
        let mut again = Scenario::default();
        for (k, v) in parse(&job_file(&s)).unwrap().knobs {
            crate::scenario::set_knob(&mut again, &k, &v).unwrap();
        }
        assert_eq!((again.workload.clone(), again.jobs.clone()), (s.workload.clone(), s.jobs.clone()), "{}", job_file(&s));
        let e = parse("[a]\n[b]\nwait_for=c\n").unwrap_err().to_string();
        assert_eq!(e, "fio: [b] at line 2: wait_for=c names no job before it; expected one of: a");
    }

    #[test]
    fn values_fio_itself_refuses_are_errors_naming_the_line() {
        // fio stops at these ("failed parsing"): so does the job file, rather than run defaults.
        for (text, names) in [
            ("[a]\nrw=raed\n", "line 2: rw=raed"),
            ("[a]\nbs=4kk\n", "line 2: bs=4kk"),
            ("[a]\n\nruntime=abc\n", "line 3: runtime=abc"),
            ("[a]\niodepth=x\n", "iodepth=x"),
            ("[a]\ndirect=maybe\n", "direct=maybe"),
            ("[job\nrw=read\n", "line 1: '[job'"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(names) && e.contains("expected"), "{text:?}: {e}");
        }
        // An option fio does not know is a typo: refused with its line and the likely option.
        for (text, says) in [
            ("[a]\nrw=randrw\nrwmixred=70\n", "line 3: 'rwmixred' is not an fio option; did you mean rwmixread?"),
            ("[global]\niodepht=4\n[a]\n", "line 2: 'iodepht' is not an fio option; did you mean iodepth?"),
            ("[a]\nfrobnicate=1\n", "line 2: 'frobnicate' is not an fio option; expected one of fio's options"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("fio: {says}")), "{text:?}: {e}");
        }
        // More job sections than the model runs: the line of the first too many.
        let many: String = (0..70).map(|i| format!("[j{i}]\n")).collect();
        assert_eq!(parse(&many).unwrap_err().to_string(), "fio: line 65: [j64] is job section 65; at most 64 job sections are allowed");
        // Values fio takes that the model cannot run are named, not refused.
        for text in ["[a]\nrw=randrw\n", "[a]\nbs=4k-16k\n", "[a]\nsize=50%\n", "[a]\nrw=randread:8\n", "[a]\nbs=64m\n"] {
            let job = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert!(job.notes().is_some_and(|n| n.contains("not modelled")), "{text:?}: {:?}", job.notes());
        }
        // And the values the model takes, in fio's spellings, pass.
        parse("[a]\nrw=randwrite\nbs=4KiB\nsize=1g\nruntime=2m\niodepth=32\ndirect=1\ntime_based\n").unwrap();
        // As fio's own examples write them: inline comments, ${VAR}, lists, offsets, days.
        parse("[a]\nnumjobs=1 # one\nbs=${FIO_BS}\nblocksize=512,512,16384\nrw=read:-8k\nsize=102404k;100Mb+4k\nruntime=365d\n").unwrap();
        parse("[a]\nruntime=60sec\nruntime=5min\nruntime=90S\nbs=0x1000\nbs=4K\nrw=randtrimwrite\n").unwrap();
    }

    #[test]
    fn an_inline_comment_ends_the_value_as_fio_s_strip_blank_end_ends_it() {
        // tiobench-example.fio: `numjobs=4\t; 4 simultaneous threads for each job`.
        let job = parse("[j]\nrw=read\nnumjobs=4\t; 4 simultaneous threads\nsize=102404k ; 100Mb+4k\niodepth=8 # eight\n").unwrap();
        let knob = |k: &str| job.knobs.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!(knob("workload.numjobs").as_deref(), Some("4"));
        assert_eq!(knob("workload.iodepth").as_deref(), Some("8"));
        assert!(knob("workload.size").is_some_and(|v| v.starts_with("102404")), "{:?}", knob("workload.size"));
        assert_eq!(job.notes(), None, "nothing refused or dropped");
    }
}
