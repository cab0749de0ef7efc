//! What a knob is (`KnobSpec`: its name, the values it takes, how it reads and writes a
//! `Scenario`, the layer it needs and whether it applies live) and `get_knob`/`set_knob`, which
//! the CLI's `--set`, job files, links and the UI share. The knobs themselves, one entry each,
//! are in `knob_table.rs`.

use super::*;

// The table's field accessors (knob_table.rs): a field path, read and written as a `Value`.

/// An integer field (`u8`, `u32` or `u64`), or a byte size.
macro_rules! int {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Int(s.$($f).+ as u64), set: |s, v| { s.$($f).+ = v.int() as _; Ok(()) } }
    };
}

macro_rules! flag {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Bool(s.$($f).+), set: |s, v| { s.$($f).+ = v.flag(); Ok(()) } }
    };
}

/// An enum field, by its serde names.
macro_rules! named {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Text(enum_name(&s.$($f).+)), set: |s, v| { s.$($f).+ = enum_from(v)?; Ok(()) } }
    };
}

macro_rules! text {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Text(s.$($f).+.clone()), set: |s, v| { s.$($f).+ = v.text(); Ok(()) } }
    };
}

macro_rules! seconds {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Seconds(s.$($f).+), set: |s, v| { s.$($f).+ = v.seconds(); Ok(()) } }
    };
}

macro_rules! cpus {
    ($($f:ident).+) => {
        Access { path: &[$(stringify!($f)),+], get: |s| Value::Cpus(s.$($f).+.clone()), set: |s, v| { s.$($f).+ = v.cpus(); Ok(()) } }
    };
}

/// What values a knob takes.
#[derive(Clone, Copy, Debug)]
pub enum KnobKind {
    Int {
        min: u64,
        max: u64,
        unit: &'static str,
    },
    /// A byte size written like fio's `bs`: `4k`, `64k`, `1m`, or plain bytes.
    Size {
        min: u64,
        max: u64,
    },
    Bool,
    Enum(&'static [&'static str]),
    /// Seconds, as a decimal number.
    Seconds {
        min: f64,
        max: f64,
    },
    /// A process name (a kernel comm): printable ASCII without spaces.
    Name {
        max_len: usize,
    },
    /// Device names joined by ':' (fio's `filename`), or empty.
    Devices,
    /// CPU numbers joined by ',', one per HBA, or empty.
    Cpus,
    /// A job's name (as `Name`), or empty for none.
    JobName,
    /// A kernel version the era table covers (`super::era`), or `none`.
    Kernel,
}

impl KnobKind {
    /// What is allowed, for error messages and the knob list.
    pub fn allowed(&self) -> String {
        match *self {
            KnobKind::Int { min, max, unit } => {
                let u = if unit.is_empty() { String::new() } else { format!(" ({unit})") };
                format!("an integer from {min} to {max}{u}")
            }
            KnobKind::Size { min, max } => {
                format!("a size from {} to {} with an optional unit (512, 4k, 64k, 1m), a multiple of 512", fmt_size(min), fmt_size(max))
            }
            KnobKind::Bool => "true or false".into(),
            KnobKind::Enum(names) => format!("one of {}", names.join(", ")),
            KnobKind::Seconds { min, max } => {
                format!("seconds from {min} to {max}")
            }
            KnobKind::Name { max_len } => format!("1 to {max_len} printable ASCII characters without spaces"),
            KnobKind::Devices => "empty (every device in turn) or device names joined by ':', as fio's filename (sda:sdc)".into(),
            KnobKind::Cpus => {
                "empty (HBA n interrupts CPU n mod cores) or one CPU number per HBA joined by ',' (0 for one HBA, 4,4 for two)".into()
            }
            KnobKind::JobName => "empty or a job's name (1 to 15 printable ASCII characters without spaces)".into(),
            KnobKind::Kernel => super::era::ALLOWED.into(),
        }
    }

    /// A value as the user wrote it, checked against what the kind allows (an enum's name is
    /// left to its field's setter, which knows the names serde takes).
    pub fn parse(&self, value: &str) -> Option<Value> {
        let v = value.trim();
        match *self {
            KnobKind::Int { min, max, .. } => v.parse().ok().filter(|n| (min..=max).contains(n)).map(Value::Int),
            KnobKind::Size { min, max } => parse_size(v).filter(|n| (min..=max).contains(n) && n % 512 == 0).map(Value::Int),
            // Any case, as sysfs-minded users type it (TRUE, On).
            KnobKind::Bool => match v.to_ascii_lowercase().as_str() {
                "true" | "1" | "on" | "yes" => Some(Value::Bool(true)),
                "false" | "0" | "off" | "no" => Some(Value::Bool(false)),
                _ => None,
            },
            KnobKind::Enum(_) => Some(Value::Text(v.to_string())),
            KnobKind::Seconds { min, max } => crate::float_parse::parse_f64(v).filter(|x| (min..=max).contains(x)).map(Value::Seconds),
            KnobKind::Name { max_len } => {
                let ok = !v.is_empty() && v.len() <= max_len && v.chars().all(|c| c.is_ascii_graphic());
                ok.then(|| Value::Text(v.to_string()))
            }
            KnobKind::Devices => {
                let ok = v.len() <= 1024
                    && v.split(':').all(|n| !n.is_empty() && n.len() <= 16 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
                (v.is_empty() || ok).then(|| Value::Text(v.to_string()))
            }
            // The range against cores and the count against HBAs are checked in validate().
            KnobKind::Cpus => {
                let cpus: Vec<u32> =
                    if v.is_empty() { Vec::new() } else { v.split(',').map(|c| c.trim().parse::<u32>()).collect::<Result<_, _>>().ok()? };
                let ok = cpus.len() <= limits::HBAS_MAX as usize && cpus.iter().all(|&n| n < limits::CORES_MAX);
                ok.then_some(Value::Cpus(cpus))
            }
            KnobKind::JobName => (v.is_empty() || KnobKind::Name { max_len: 15 }.parse(v).is_some()).then(|| Value::Text(v.to_string())),
            KnobKind::Kernel => super::era::canonical(v).map(Value::Text),
        }
    }
}

/// A knob's value once parsed, as its field takes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer or a byte size.
    Int(u64),
    Bool(bool),
    /// An enum's name, a process name or device names.
    Text(String),
    Seconds(f64),
    Cpus(Vec<u32>),
}

impl Value {
    pub fn int(self) -> u64 {
        match self {
            Value::Int(n) => n,
            other => panic!("an integer knob's value is {other:?}"),
        }
    }
    pub fn flag(self) -> bool {
        match self {
            Value::Bool(b) => b,
            other => panic!("a boolean knob's value is {other:?}"),
        }
    }
    pub fn text(self) -> String {
        match self {
            Value::Text(t) => t,
            other => panic!("a text knob's value is {other:?}"),
        }
    }
    pub fn seconds(self) -> f64 {
        match self {
            Value::Seconds(x) => x,
            other => panic!("a seconds knob's value is {other:?}"),
        }
    }
    pub fn cpus(self) -> Vec<u32> {
        match self {
            Value::Cpus(c) => c,
            other => panic!("a CPU list knob's value is {other:?}"),
        }
    }
}

/// Where a knob lives in a `Scenario`: its field read as a `Value`, and written from one.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The field's path in a `Scenario` (`["queue", "plugging"]`): how a scenario read from a
    /// file (a lesson's front matter) tells which knobs it sets.
    pub path: &'static [&'static str],
    pub get: fn(&Scenario) -> Value,
    /// Err when the field's type refuses the value (a name its enum does not have).
    pub set: fn(&mut Scenario, Value) -> Result<(), ()>,
}

/// Whether a change on a running simulation takes effect at once, as in the kernel, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    /// The stack is built with it: a change restarts the run.
    Restart,
    /// Live in the kernel, and nothing in the running model caches it: the new value is in
    /// force from now on.
    Config,
    /// A store into the running stack's own state (block/blk_sysfs.rs).
    Store(Store),
}

impl Live {
    pub fn is_live(self) -> bool {
        self != Live::Restart
    }
}

/// The stores a live write makes, by the kernel function that makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// queue_requests_store: `nr_requests`.
    QueueRequests,
    /// sdev_store_queue_depth: the disks' tags.
    QueueDepth,
    /// elv_iosched_store: `scheduler` (elevator_switch).
    Elevator,
    /// The elevator's iosched_store: a file under `queue/iosched/`.
    IoschedTunable,
    /// queue_max_sectors_store on dm-N.
    DmMaxSectors,
    /// queue_max_sectors_store on the disks (and LVM's volumes).
    MaxSectors,
    /// Not sysfs: the run's own end (fio's runtime).
    Runtime,
}

/// One knob: a sysfs, fio or kernel-behaviour setting the user may change. Everything the
/// CLI, links, job files, the checks and the page know of a knob is here.
#[derive(Clone, Copy, Debug)]
pub struct KnobSpec {
    pub key: &'static str,
    pub kind: KnobKind,
    pub help: &'static str,
    /// Whether changing it on a running simulation takes effect at once, as in the kernel
    /// (sysfs writes to `nr_requests`, `scheduler`, `max_sectors_kb`), or needs a restart.
    pub live: Live,
    pub access: Access,
    /// Whether it has something to act on in a scenario, or why not (`knob_applies`).
    pub applies: fn(&Scenario) -> Result<(), String>,
    /// Values of an older form still accepted, with the value each means.
    pub values: &'static [(&'static str, &'static str)],
}

impl KnobSpec {
    /// Its value in `s` as text, the way `--set` and links write it.
    pub fn get(&self, s: &Scenario) -> String {
        match (self.access.get)(s) {
            Value::Int(n) if matches!(self.kind, KnobKind::Size { .. }) => fmt_size(n),
            Value::Int(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Text(t) => t,
            Value::Seconds(x) => format!("{x}"),
            Value::Cpus(c) => c.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        }
    }

    /// Sets it in `s` from its text form, checking the value against what it allows.
    pub fn set(&self, s: &mut Scenario, value: &str) -> Result<(), ScenarioError> {
        let bad = || ScenarioError::new(self.key, format!("'{}' is not allowed; expected {}", clip(value), self.kind.allowed()));
        let v = self.values.iter().find(|(old, _)| *old == value.trim()).map_or(value, |(_, meant)| meant);
        let parsed = self.kind.parse(v).ok_or_else(bad)?;
        (self.access.set)(s, parsed).map_err(|()| bad())
    }

    /// Whether it has something to act on in `s`; the reason when not.
    pub fn applies(&self, s: &Scenario) -> Result<(), String> {
        (self.applies)(s)
    }
}

/// An enum field's serde name (`mq-deadline`, `per-bdi`), as knobs and messages write it.
pub fn enum_name<T: Serialize>(v: &T) -> String {
    super::enum_names::serde_name(v).unwrap_or_else(|| panic!("enum knob did not serialize to a string"))
}

/// An enum field from its serde name, for a knob's setter.
pub(super) fn enum_from<T: for<'de> Deserialize<'de>>(v: Value) -> Result<T, ()> {
    super::enum_names::from_serde_name(&v.text())
}

/// The knob `key` names; a job's knob (`job.writer.rw`) is the workload's (`workload.rw`).
pub fn knob_spec(key: &str) -> Option<&'static KnobSpec> {
    KNOBS.iter().find(|k| k.key == key).or_else(|| jobs::job_key(key).map(|(_, spec)| spec))
}

const SIZE_K: u64 = 1024;

fn fmt_size(bytes: u64) -> String {
    if bytes >= 1 << 40 && bytes % (1 << 40) == 0 {
        format!("{}t", bytes >> 40)
    } else if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{}g", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{}m", bytes >> 20)
    } else if bytes >= SIZE_K && bytes % SIZE_K == 0 {
        format!("{}k", bytes / SIZE_K)
    } else {
        bytes.to_string()
    }
}

/// Parses an fio-style size: `4096`, `4k`, `64K`, `1m`, `2g`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, mult) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (s, 1),
        Some((i, _)) => {
            let mult = match s[i..].to_ascii_lowercase().as_str() {
                "k" | "kb" | "kib" => SIZE_K,
                "m" | "mb" | "mib" => SIZE_K * SIZE_K,
                "g" | "gb" | "gib" => SIZE_K * SIZE_K * SIZE_K,
                "t" | "tb" | "tib" => SIZE_K * SIZE_K * SIZE_K * SIZE_K,
                "b" => 1,
                _ => return None,
            };
            (&s[..i], mult)
        }
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// A block size (`bs`) that is no multiple of the 512-byte sector, rounded up to one (the block
/// layer's unit), where the rounded size is one the model takes: the nearest it runs, for fio's
/// `bs=` in a job file and for the sandbox's `bs` knob (each says so beside what was asked).
/// `None` for a size that needs no rounding or that no rounding brings into range.
pub fn bs_rounded_to_sector(value: &str) -> Option<u64> {
    let bytes = parse_size(value)?;
    let up = bytes.div_ceil(512).max(1) * 512;
    (up != bytes && up <= limits::BS_MAX).then_some(up)
}

/// A knob's value as text, the way `--set` and links write it.
pub fn get_knob(s: &Scenario, key: &str) -> Option<String> {
    match KNOBS.iter().find(|k| k.key == key) {
        Some(k) => Some(k.get(s)),
        None => jobs::get_job_knob(s, key),
    }
}

/// Knobs a mistyped key may have meant, as " (did you mean queue.nr_requests?)", or "": the
/// kernel's and fio's own names (`nr_requests`, `queue_depth`, `read_ahead_kb`, `iodepth`)
/// and near spellings (`raid.chunk`) lead to blkviz's, compared without case, '.', '_' or '-'.
pub fn did_you_mean(key: &str) -> String {
    did_you_mean_lowering(key, lower)
}

/// `did_you_mean` with `lower` for each letter's lowercase (the tests compare `lower` with
/// std's full mapping through it).
fn did_you_mean_lowering<I: Iterator<Item = char>>(key: &str, lower: fn(char) -> I) -> String {
    let norm = |s: &str| s.chars().filter(|c| !matches!(c, '.' | '_' | '-')).flat_map(lower).collect::<String>();
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_string();
    let (whole, tail) = (norm(key), norm(&last(key)));
    if tail.len() < 2 {
        return String::new();
    }
    let find = |hit: &dyn Fn(&str, &str) -> bool| -> Vec<&'static str> {
        KNOBS.iter().filter(|k| hit(&norm(k.key), &norm(&last(k.key)))).map(|k| k.key).take(3).collect()
    };
    // The same name first (rw, nr_requests, queue_depth); only without one, a name that holds
    // the other (raid.chunk, chunk).
    let mut hits = find(&|kw, kt| kw == whole || kt == tail);
    if hits.is_empty() && tail.len() >= 4 {
        hits = find(&|kw, kt| (whole.len() >= 6 && kw.ends_with(&whole)) || kt.starts_with(&tail) || (kt.len() >= 5 && tail.contains(kt)));
    }
    if hits.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", hits.join(" or "))
    }
}

/// A letter of a typed key lowered as far as `did_you_mean` can tell: ASCII lowered, and the two
/// other letters whose lowercase holds an ASCII one (the Kelvin sign's `k`, the capital I with a
/// dot's `i` and its dot) as `char::to_lowercase` lowers them; any other letter stays as typed,
/// since a knob's name (ASCII) matches neither it nor its lowercase. std's case table, which
/// `char::to_lowercase` reads, stays out of the page.
fn lower(c: char) -> impl Iterator<Item = char> {
    let (a, b) = match c {
        '\u{212A}' => ('k', None),
        '\u{130}' => ('i', Some('\u{307}')),
        c => (c.to_ascii_lowercase(), None),
    };
    std::iter::once(a).chain(b)
}

/// Sets one knob from its text form, checking the value against the knob's allowed range.
pub fn set_knob(s: &mut Scenario, key: &str, value: &str) -> Result<(), ScenarioError> {
    if !KNOBS.iter().any(|k| k.key == key) {
        if let Some(r) = jobs::set_job_knob(s, key, value) {
            return r;
        }
    }
    let spec = knob_spec(key).ok_or_else(|| {
        let keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
        // The key as given may be anything (a link's, a job file's): quoted clipped, as values
        // are, and an empty one shown as '' so that the message still names it.
        let (field, what) =
            if key.trim().is_empty() { (format!("'{}'", clip(key)), "an empty knob name") } else { (clip(key), "unknown knob") };
        ScenarioError::new(field, format!("{what}{}; allowed knobs are {}", did_you_mean(key), keys.join(", ")))
    })?;
    spec.set(s, value)?;
    // Set by the user (`--set`, a link, a job file, a variant): `kernel` leaves it as it is,
    // whichever was set first.
    s.mark_explicit(spec.key);
    super::era::apply(s);
    Ok(())
}

#[cfg(test)]
mod tests {

    /// `did_you_mean` as it read with `char::to_lowercase` (std's full case mapping).
    fn did_you_mean_unicode(key: &str) -> String {
        super::did_you_mean_lowering(key, char::to_lowercase)
    }

    #[test]
    fn only_two_letters_beyond_ascii_lower_to_ascii_ones() {
        let beyond: Vec<char> =
            (0..=0x10FFFFu32).filter_map(char::from_u32).filter(|c| !c.is_ascii() && c.to_lowercase().any(|l| l.is_ascii())).collect();
        assert_eq!(beyond, ['\u{130}', '\u{212A}']);
        for c in beyond {
            assert!(super::lower(c).eq(c.to_lowercase()), "{c:?}");
        }
    }

    #[test]
    fn did_you_mean_suggests_as_with_the_full_case_mapping() {
        // Knob names and their pieces, cased and broken up by letters beyond ASCII.
        let pieces = [
            "queue",
            "depth",
            "nr_requests",
            "QUEUE",
            "Nr_Requests",
            "read_ahead_kb",
            "chunk",
            "raid",
            ".",
            "_",
            "-",
            "É",
            "ß",
            "Ⱥ",
            "Σ",
            "\u{212A}",
            "\u{130}",
            "i",
            "k",
            "ıo",
            "iodepth",
            "IODEPTH",
            "max_sectors_kb",
            "sched",
            "rw",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut key = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut y = x;
            for _ in 0..(1 + y % 4) {
                y /= 7;
                key.push_str(pieces[(y % pieces.len() as u64) as usize]);
                y /= pieces.len() as u64;
            }
            assert_eq!(super::did_you_mean(&key), did_you_mean_unicode(&key), "{key:?}");
        }
        for key in KNOBS.iter().map(|k| k.key.to_uppercase()) {
            assert_eq!(super::did_you_mean(&key), did_you_mean_unicode(&key), "{key:?}");
        }
    }
    use crate::scenario::{limits, set_knob, Scenario, KNOBS};
    use std::path::Path;

    /// The sources of the core outside its tests: each file up to its first `#[cfg(test)]`
    /// (the test modules close the files), test files left out.
    fn core_sources(dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "tests" {
                    core_sources(&p, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                out.push((p.display().to_string(), code));
            }
        }
    }

    /// A `bs` off the sector rounds up to it; one on it, or one no rounding brings into range,
    /// does not.
    #[test]
    fn a_block_size_off_the_sector_rounds_up_to_it() {
        assert_eq!(super::bs_rounded_to_sector("3000"), Some(3072));
        assert_eq!(super::bs_rounded_to_sector("100"), Some(512));
        assert_eq!(super::bs_rounded_to_sector("4k"), None);
        assert_eq!(super::bs_rounded_to_sector("lots"), None);
        let over = limits::BS_MAX + 1;
        assert_eq!(super::bs_rounded_to_sector(&over.to_string()), None);
        // The knob itself still refuses it: the rounding is the caller's, said beside the box.
        assert!(set_knob(&mut Scenario::default(), "workload.bs", "3000").is_err());
    }

    /// Each knob's name is written once in the core, in its table entry: everything else
    /// (get, set, the layer checks, live writes, job files, messages' fields) reaches the
    /// knob through the entry.
    #[test]
    fn each_knob_name_is_written_once_in_the_core() {
        let mut sources = Vec::new();
        core_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut sources);
        assert!(sources.len() > 20, "the sources were not found");
        for k in KNOBS {
            let literal = format!("\"{}\"", k.key);
            let places: Vec<(&str, usize)> =
                sources.iter().map(|(p, code)| (p.as_str(), code.matches(&literal).count())).filter(|&(_, n)| n > 0).collect();
            let total: usize = places.iter().map(|&(_, n)| n).sum();
            assert_eq!(total, 1, "{literal} is written {total} times: {places:?}");
        }
    }
}
