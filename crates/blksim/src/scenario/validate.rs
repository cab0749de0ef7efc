//! A scenario's checks as a whole (`Scenario::validate`, the only maker of a `Config`): the
//! combinations no single knob's range can refuse (HBAs and disks, paths and stacks, a block
//! larger than the device), and the one-line error every bad input gets.

use super::*;
use std::fmt;

/// A bad field, a bad knob or a bad value: names what is wrong and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The offending knob key or field path (`queue.depth`, `workload.bs`).
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Quotes at most 40 characters of user input back in a message, control characters escaped
/// (`\n`, `\u{1b}`), so that the message stays one line however the input was garbled (a
/// fuzzed link with a newline in a knob's value printed two lines: found by `scripts/soak`).
pub fn clip(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(40) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// A validated scenario. Only `Scenario::validate` makes one.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub scenario: Scenario,
}

impl Scenario {
    /// The devices the jobs can use (the top of the stack), by their kernel names.
    pub fn top_device_names(&self) -> Vec<String> {
        match self.stack {
            StackKind::Direct => (0..self.disks).map(crate::drivers::scsi::sd::sd_name).collect(),
            StackKind::Lvm | StackKind::Dm => (0..self.disks).map(|d| format!("dm-{d}")).collect(),
            StackKind::Md => vec!["md0".to_string()],
        }
    }

    /// Checks every knob against its range (so a scenario from a lesson file or a link gets the
    /// same checks as `--set`), then the cross-field rules.
    pub fn validate(&self) -> Result<Config, ScenarioError> {
        for spec in KNOBS {
            let v = get_knob(self, spec.key).expect("every listed knob has a getter");
            let mut probe = Scenario::default();
            set_knob(&mut probe, spec.key, &v)?;
        }
        if self.hbas > self.disks {
            return Err(ScenarioError::new(
                "hbas",
                format!("{} HBAs for {} disks; expected at most one HBA per disk", self.hbas, self.disks),
            ));
        }
        if !self.cpu.irq_cpus.is_empty() && self.cpu.irq_cpus.len() != self.hbas as usize {
            return Err(ScenarioError::new(
                "cpu.irq_cpus",
                format!("expected one CPU per HBA ({}), got {}", self.hbas, self.cpu.irq_cpus.len()),
            ));
        }
        if self.host.nr_hw_queues > self.cpu.cores {
            return Err(ScenarioError::new(
                "host.nr_hw_queues",
                format!("{} hardware queues need as many CPUs; there are {}", self.host.nr_hw_queues, self.cpu.cores),
            ));
        }
        if self.cpu.sockets == 0 || self.cpu.cores % self.cpu.sockets != 0 {
            return Err(ScenarioError::new(
                "cpu.sockets",
                format!("{} cores do not split evenly into {} sockets", self.cpu.cores, self.cpu.sockets),
            ));
        }
        if let Some(c) = self.cpu.irq_cpus.iter().find(|&&c| c >= self.cpu.cores) {
            return Err(ScenarioError::new("cpu.irq_cpus", format!("CPU {c} does not exist; expected 0 to {}", self.cpu.cores - 1)));
        }
        if self.dm.paths > 1 && self.stack != StackKind::Dm {
            return Err(ScenarioError::new(
                "dm.paths",
                format!("{} paths need stack=dm; expected 1 with stack={}", self.dm.paths, get_knob(self, "stack").unwrap_or_default()),
            ));
        }
        if self.disks * self.dm.paths > limits::DISKS_MAX {
            return Err(ScenarioError::new(
                "dm.paths",
                format!("{} disks × {} paths is over {} sd devices", self.disks, self.dm.paths, limits::DISKS_MAX),
            ));
        }
        if self.stack == StackKind::Md && self.disks < 3 {
            return Err(ScenarioError::new("disks", format!("{} disks for stack=md; RAID5 needs at least 3", self.disks)));
        }
        if !self.md.chunk_kb.is_power_of_two() {
            return Err(ScenarioError::new(
                "md.chunk_kb",
                format!("{} is not allowed; expected a power of two from 4 to 65536", self.md.chunk_kb),
            ));
        }
        let member_kb = crate::hw::capacity_sectors(self.disk.kind) / 2;
        if self.md.component_size_kb > member_kb {
            return Err(ScenarioError::new(
                "md.component_size_kb",
                format!(
                    "{} KiB is more than a {} member holds; expected 0 (the whole member) up to {member_kb}",
                    self.md.component_size_kb,
                    format!("{:?}", self.disk.kind).to_lowercase()
                ),
            ));
        }
        if !self.workload.filename.is_empty() {
            let top = self.top_device_names();
            let listed: Vec<&str> = self.workload.filename.split(':').collect();
            if let Some((_, n)) = listed.iter().enumerate().find(|(i, n)| listed[..*i].contains(n)) {
                return Err(ScenarioError::new("workload.filename", format!("'{}' is listed twice; expected each device once", clip(n))));
            }
            if let Some(n) = self.workload.filename.split(':').find(|n| !top.iter().any(|t| t == n)) {
                let shown: Vec<&str> = top.iter().take(8).map(String::as_str).collect();
                let more = if top.len() > 8 { format!(", … ({} in all)", top.len()) } else { String::new() };
                return Err(ScenarioError::new(
                    "workload.filename",
                    format!(
                        "'{}' is not a device the jobs can use with stack={}; expected names among {}{more}, joined by ':'",
                        clip(n),
                        format!("{:?}", self.stack).to_lowercase(),
                        shown.join(", ")
                    ),
                ));
            }
        }
        // A job's block must fit its device (jobs that share a device too small for a block
        // each overlap, as fio's numjobs clones of one job do).
        let capacity = crate::block::genhd::top_capacity_sectors(self) * 512;
        if self.workload.bs > capacity {
            return Err(ScenarioError::new(
                "workload.bs",
                format!(
                    "{} bytes is more than the device the jobs use holds ({capacity} bytes with stack={}); expected at most {capacity}",
                    self.workload.bs,
                    format!("{:?}", self.stack).to_lowercase()
                ),
            ));
        }
        if self.workload.size != 0 && self.workload.size < self.workload.bs {
            return Err(ScenarioError::new("workload.size", "smaller than workload.bs; expected 0 (time-based) or at least one block"));
        }
        let mut scenario = self.clone();
        // dd reads or writes in order, a block at a time: a job it cannot run (random offsets,
        // libaio, a queue depth) is fio's, and top, the trace and the diagram name it so.
        let w = &scenario.workload;
        if w.name == "dd" && (w.rw.is_random() || w.ioengine != IoEngine::Sync || w.iodepth > 1) {
            scenario.workload.name = "fio".into();
        }
        Ok(Config { scenario })
    }
}
