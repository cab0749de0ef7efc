//! A scenario's checks as a whole (`Scenario::validate`, the only maker of a `Config`): the
//! combinations no single knob's range can refuse (HBAs and disks, paths and stacks, a block
//! larger than the device), and the one-line error every bad input gets.

use super::knob_table as k;
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

/// A count with its noun as a message says it: "1 disk", "3 disks" (every noun the messages
/// count takes an "s").
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Quotes at most 40 characters of user input back in a message, control characters escaped
/// (`\n`, `\u{1b}`), so that the message stays one line however the input was garbled (a
/// link with a newline in a knob's value, say).
pub fn clip(s: &str) -> String {
    clip_max(s, 40)
}

/// A line of a file the user gave, as an error quotes it: long enough to show a whole
/// blkparse record (about 100 characters).
pub fn clip_line(s: &str) -> String {
    clip_max(s, 120)
}

/// A path the user gave, whole (so it can be copied back), as `clip` quotes input: up to
/// PATH_MAX (4096) characters.
pub fn clip_path(path: &str) -> String {
    clip_max(path, 4096)
}

/// As `clip`, at most `max` characters (a path given on the command line is quoted whole, up
/// to PATH_MAX, so it can be copied back).
fn clip_max(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars().take(max) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if s.chars().count() > max {
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
    /// same checks as `--set`), then the cross-field rules, in this order (the first that fails
    /// is the one named).
    pub fn validate(&self) -> Result<Config, ScenarioError> {
        for spec in KNOBS {
            spec.set(&mut Scenario::default(), &spec.get(self))?;
        }
        self.check_hosts_and_paths()?;
        self.check_md_array()?;
        self.check_filename()?;
        self.check_job_fits()?;
        self.check_jobs()?;
        let mut scenario = self.clone();
        era::apply(&mut scenario);
        era::device_default_elevator(&mut scenario);
        era::check_scheduler(&scenario).map_err(|e| ScenarioError::new(k::QUEUE_SCHEDULER.key, e))?;
        super::knob_table_bfq::check_bfq(&scenario).map_err(|e| ScenarioError::new(k::QUEUE_SCHEDULER.key, e))?;
        scenario.check_nvme()?;
        scenario.check_io_uring()?;
        scenario.check_kyber()?;
        // dd reads or writes in order, a block at a time: a job it cannot run (random offsets,
        // a mix, libaio, a queue depth) is fio's, and top, the trace and the diagram name it so.
        let dd = |w: &Workload| w.name == "dd" && (w.rw.is_random() || w.rw.is_mixed() || w.ioengine != IoEngine::Sync || w.iodepth > 1);
        for w in std::iter::once(&mut scenario.workload).chain(scenario.jobs.iter_mut()).filter(|w| dd(w)) {
            w.name = "fio".into();
        }
        Ok(Config { scenario })
    }

    /// io_uring arrived in 5.1: a kernel before it refuses the engine (without a kernel the
    /// sandbox is not era-strict).
    fn check_io_uring(&self) -> Result<(), ScenarioError> {
        let uring = std::iter::once(&self.workload).chain(self.jobs.iter()).any(|w| w.ioengine == IoEngine::IoUring);
        if uring && era::kernel_before(self, "5.1") {
            return Err(ScenarioError::new(
                k::WORKLOAD_IOENGINE.key,
                format!(
                    "io_uring with kernel={}: io_uring arrived in Linux 5.1; set kernel=5.1 or later, or ioengine=libaio",
                    self.kernel.as_deref().unwrap_or("")
                ),
            ));
        }
        Ok(())
    }

    /// An NVMe drive is reached through the NVMe driver, blk-mq only (3.19 on): its queue takes
    /// no legacy elevator, a kernel before 3.19 had no such driver, and dm-multipath's paths
    /// are SCSI devices in the model. Checked after `kernel` has written its knobs.
    fn check_nvme(&self) -> Result<(), ScenarioError> {
        if self.disk.kind != DiskKind::Nvme {
            return Ok(());
        }
        if self.stack == StackKind::Dm {
            return Err(ScenarioError::new(
                k::STACK.key,
                "dm with disk.kind=nvme: the model's dm-multipath reaches its paths through SCSI hosts; with nvme the stack is direct, lvm or md",
            ));
        }
        if era::kernel_before(self, "3.19") {
            return Err(ScenarioError::new(
                k::KERNEL.key,
                format!("{} with disk.kind=nvme: the model's NVMe driver is blk-mq's, from 3.19 on (before it the driver was bio-based); set kernel=3.19 or later, or none", self.kernel.as_deref().unwrap_or("")),
            ));
        }
        if !crate::block::is_mq(self.queue.scheduler) {
            return Err(ScenarioError::new(
                k::QUEUE_SCHEDULER.key,
                format!(
                    "{} with disk.kind=nvme: NVMe has been blk-mq only since 3.19, so its queue takes no legacy elevator (noop, deadline, cfq); set queue.scheduler=none",
                    scheduler_name(self)
                ),
            ));
        }
        Ok(())
    }

    /// Disks, HBAs, paths and CPUs together: each path to a disk is an sd device on an HBA,
    /// whose interrupt goes to a CPU.
    fn check_hosts_and_paths(&self) -> Result<(), ScenarioError> {
        // The stack's own need first: `disks=1` on a RAID5 lesson is refused for RAID5, not
        // for the lesson's 8 HBAs that follow from it.
        if self.stack == StackKind::Md && self.disks < 3 {
            return Err(ScenarioError::new(k::DISKS.key, format!("{} for stack=md; RAID5 needs at least 3", counted(self.disks, "disk"))));
        }
        // Each path to a disk is its own sd device, on the next HBA along.
        let sd_devices = self.disks * if self.stack == StackKind::Dm { self.dm.paths } else { 1 };
        if self.hbas > sd_devices {
            let what = if sd_devices == self.disks {
                counted(self.disks, "disk")
            } else {
                format!("{sd_devices} sd devices ({} × {} paths)", counted(self.disks, "disk"), self.dm.paths)
            };
            return Err(ScenarioError::new(
                k::HBAS.key,
                format!("{} HBAs for {what}; expected at most one HBA per sd device (fewer hbas, or more disks)", self.hbas),
            ));
        }
        if !self.cpu.irq_cpus.is_empty() && self.cpu.irq_cpus.len() != self.hbas as usize {
            return Err(ScenarioError::new(
                k::CPU_IRQ_CPUS.key,
                format!(
                    "{} ({}) for {}; expected one CPU per HBA joined by ',', or empty (HBA n interrupts CPU n mod cores)",
                    counted(self.cpu.irq_cpus.len() as u64, "CPU"),
                    self.cpu.irq_cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
                    counted(self.hbas, "HBA"),
                ),
            ));
        }
        // (Checks of a knob that acts on nothing here would leave no way out: the knob's own
        // field refuses a change.)
        if self.host.nr_hw_queues > self.cpu.cores && k::HOST_NR_HW_QUEUES.applies(self).is_ok() {
            return Err(ScenarioError::new(
                k::HOST_NR_HW_QUEUES.key,
                format!("{} hardware queues need as many CPUs; there are {}", self.host.nr_hw_queues, self.cpu.cores),
            ));
        }
        super::knob_table_tags::check_host_tagset(self)?;
        if self.cpu.sockets == 0 || self.cpu.cores % self.cpu.sockets != 0 {
            return Err(ScenarioError::new(
                k::CPU_SOCKETS.key,
                format!("{} cores do not split evenly into {} sockets", self.cpu.cores, self.cpu.sockets),
            ));
        }
        if let Some(c) = self.cpu.irq_cpus.iter().find(|&&c| c >= self.cpu.cores) {
            return Err(ScenarioError::new(k::CPU_IRQ_CPUS.key, format!("CPU {c} does not exist; expected 0 to {}", self.cpu.cores - 1)));
        }
        if self.dm.paths > 1 && self.stack != StackKind::Dm {
            return Err(ScenarioError::new(
                k::DM_PATHS.key,
                format!("{} paths need stack=dm; expected 1 with stack={}", self.dm.paths, stack_name(self)),
            ));
        }
        if self.disks * self.dm.paths > limits::DISKS_MAX {
            return Err(ScenarioError::new(
                k::DM_PATHS.key,
                format!("{} disks × {} paths is over {} sd devices", self.disks, self.dm.paths, limits::DISKS_MAX),
            ));
        }
        Ok(())
    }

    /// md RAID5's own limits: its chunk, its stripe cache in the box's memory, its members.
    fn check_md_array(&self) -> Result<(), ScenarioError> {
        let md = self.stack == StackKind::Md;
        if md && !self.md.chunk_kb.is_power_of_two() {
            return Err(ScenarioError::new(
                k::MD_CHUNK_KB.key,
                format!("{} is not allowed; expected a power of two from 4 to 65536", self.md.chunk_kb),
            ));
        }
        let heads_max = crate::mm::page_alloc::stripe_heads_max(self);
        if md && self.md.stripe_cache_size as u64 > heads_max {
            return Err(ScenarioError::new(k::MD_STRIPE_CACHE_SIZE.key,
                format!(
                    "{} stripe heads need {} MiB of pages ({} members × 4 KiB each), more than vm.mem_mb {} holds above the kernel's reserve (the kernel would stop growing it, or OOM-kill); expected 17 to {}",
                    self.md.stripe_cache_size,
                    crate::mm::page_alloc::stripe_cache_bytes(self) >> 20,
                    self.disks,
                    self.vm.mem_mb,
                    heads_max.min(32768)
                ),
            ));
        }
        let member_kb = crate::hw::capacity_sectors(self.disk.kind, self.disk.member_drive) / 2;
        if md && self.md.component_size_kb > member_kb {
            return Err(ScenarioError::new(
                k::MD_COMPONENT_SIZE_KB.key,
                format!(
                    "{} KiB is more than a {} member holds; expected 0 (the whole member) up to {member_kb}",
                    self.md.component_size_kb,
                    format!("{:?}", self.disk.kind).to_ascii_lowercase()
                ),
            ));
        }
        Ok(())
    }

    /// fio's filename: each device once, and only devices the jobs can use on this stack.
    pub(super) fn check_filename(&self) -> Result<(), ScenarioError> {
        if !self.workload.filename.is_empty() {
            let top = self.top_device_names();
            let listed: Vec<&str> = self.workload.filename.split(':').collect();
            if let Some((_, n)) = listed.iter().enumerate().find(|(i, n)| listed[..*i].contains(n)) {
                return Err(ScenarioError::new(
                    k::WORKLOAD_FILENAME.key,
                    format!("'{}' is listed twice; expected each device once", clip(n)),
                ));
            }
            if let Some(n) = self.workload.filename.split(':').find(|n| !top.iter().any(|t| t == n)) {
                let shown: Vec<&str> = top.iter().take(8).map(String::as_str).collect();
                let more = if top.len() > 8 { format!(", … ({} in all)", top.len()) } else { String::new() };
                return Err(ScenarioError::new(
                    k::WORKLOAD_FILENAME.key,
                    format!(
                        "'{}' is not a device the jobs can use with stack={}; expected names among {}{more}, joined by ':'",
                        clip(n),
                        format!("{:?}", self.stack).to_ascii_lowercase(),
                        shown.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A job's blocks fit the device it uses.
    pub(super) fn check_job_fits(&self) -> Result<(), ScenarioError> {
        // mdadm -z rounds each member's share down to whole chunks: less than one leaves md0
        // empty, which is the setting's fault, not the job's block size.
        if self.stack == StackKind::Md && self.md.component_size_kb != 0 && self.md.component_size_kb < u64::from(self.md.chunk_kb) {
            return Err(ScenarioError::new(k::MD_COMPONENT_SIZE_KB.key,
                format!(
                    "{} KiB per member holds no whole chunk of {} KiB (md.chunk_kb), so md0 would be empty; expected 0 (the whole member) or at least {}",
                    self.md.component_size_kb, self.md.chunk_kb, self.md.chunk_kb
                ),
            ));
        }
        // A job's block must fit its device (jobs that share a device too small for a block
        // each overlap, as fio's numjobs clones of one job do).
        let capacity = crate::block::genhd::top_capacity_sectors(self) * 512;
        if self.workload.bs > capacity {
            return Err(ScenarioError::new(
                k::WORKLOAD_BS.key,
                format!(
                    "{} bytes is more than the device the jobs use holds ({capacity} bytes with stack={}); expected at most {capacity}",
                    self.workload.bs,
                    format!("{:?}", self.stack).to_ascii_lowercase()
                ),
            ));
        }
        if self.workload.size != 0 && self.workload.size < self.workload.bs {
            return Err(ScenarioError::new(
                k::WORKLOAD_SIZE.key,
                "smaller than workload.bs; expected 0 (time-based) or at least one block",
            ));
        }
        Ok(())
    }
}

/// Whether a knob has something to act on in this scenario. A knob of a layer the stack lacks
/// (`md.chunk_kb` without md, cfq's `iosched.slice_idle` under deadline, blk-mq's hardware
/// queues under a legacy elevator) changes nothing, so a user's setting of it (`--set`, a link,
/// the knob panel) is refused with the reason, as writing
/// `/sys/block/sda/queue/iosched/slice_idle` under deadline fails: the file is not there.
/// Some reasons are the model's own limits (its blk-mq queues dispatch without an elevator,
/// have no request pool and do not plug); those say so. The reason is a clause that follows
/// "changes nothing here:" (the CLI) or "Acts on nothing here:" (the knob panel).
/// Lessons' own variants are not checked here (a variant may keep another's settings).
/// Each knob names its layer in its table entry (`KnobSpec::applies`), one of the functions
/// below.
pub fn knob_applies(s: &Scenario, key: &str) -> Result<(), String> {
    knob_spec(key).map_or(Ok(()), |k| k.applies(s))
}

/// The kind of thing a stack is, for messages: `stack=lvm`.
fn stack_name(s: &Scenario) -> String {
    enum_name(&s.stack)
}

fn scheduler_name(s: &Scenario) -> String {
    enum_name(&s.queue.scheduler)
}

fn kind_name(s: &Scenario) -> String {
    enum_name(&s.disk.kind)
}

fn need(ok: bool, why: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why)
    }
}

/// A legacy request queue (request pool, plugging, blk_delay_queue): the disks' under a legacy
/// elevator, or request-based dm's own queue (also over blk-mq paths).
fn legacy_queue(s: &Scenario) -> bool {
    !crate::block::is_mq(s.queue.scheduler) || s.stack == StackKind::Dm
}

const MQ_NOTE: &str = "the model's blk-mq queues";

/// Knobs of every stack.
pub(super) fn anywhere(_: &Scenario) -> Result<(), String> {
    Ok(())
}

pub(super) fn md_array(s: &Scenario) -> Result<(), String> {
    need(s.stack == StackKind::Md, format!("no md device with stack={}; md's knobs act with stack=md", stack_name(s)))
}

pub(super) fn request_based_dm(s: &Scenario) -> Result<(), String> {
    need(
        s.stack == StackKind::Dm,
        format!(
            "no request-based dm device with stack={}; it acts with stack=dm{}",
            stack_name(s),
            if s.stack == StackKind::Lvm { " (LVM's dm-linear takes its disks' limit: disk.max_sectors_kb)" } else { "" }
        ),
    )
}

pub(super) fn multipath(s: &Scenario) -> Result<(), String> {
    need(s.stack == StackKind::Dm, format!("no dm-multipath device with stack={}; it acts with stack=dm", stack_name(s)))
}

/// Failover and multibus choose among paths: with one there is nothing to choose.
pub(super) fn path_choice(s: &Scenario) -> Result<(), String> {
    multipath(s)?;
    need(
        s.dm.paths > 1,
        "one path per device (dm.paths=1): failover and multibus choose among paths; it acts with dm.paths 2 or more".into(),
    )
}

/// The callout is asked by pdflush's nonblocking writeback only.
pub(super) fn congestion_callout(s: &Scenario) -> Result<(), String> {
    need(
        matches!(s.stack, StackKind::Dm | StackKind::Lvm),
        format!("no dm device with stack={}; it acts with stack=lvm or stack=dm", stack_name(s)),
    )?;
    need(
        s.vm.writeback == Writeback::Pdflush,
        format!(
            "only pdflush's nonblocking writeback asks whether a device is congested; it acts with vm.writeback=pdflush, here {}",
            enum_name(&s.vm.writeback)
        ),
    )
}

pub(super) fn multipath_over_mq(s: &Scenario) -> Result<(), String> {
    need(
        s.stack == StackKind::Dm && crate::block::is_mq(s.queue.scheduler),
        format!(
            "the model has it for dm-multipath over blk-mq paths only (stack=dm with queue.scheduler none or mq-deadline); here stack={}, queue.scheduler={}",
            stack_name(s),
            scheduler_name(s)
        ),
    )
}

pub(super) fn cfq_rules(s: &Scenario) -> Result<(), String> {
    need(
        s.queue.scheduler == Scheduler::Cfq,
        format!("it chooses the model's rules for cfq, and the elevator is {}; it acts with queue.scheduler=cfq", scheduler_name(s)),
    )
}

/// iosched/ holds the current elevator's files only.
pub(super) fn cfq_tunable(s: &Scenario) -> Result<(), String> {
    need(
        s.queue.scheduler == Scheduler::Cfq,
        format!("a cfq tunable, and queue/iosched/ holds only the elevator's own files; queue.scheduler is {}", scheduler_name(s)),
    )
}

pub(super) fn deadline_tunable(s: &Scenario) -> Result<(), String> {
    match s.queue.scheduler {
        Scheduler::Deadline => Ok(()),
        // dm's own (legacy) queue runs deadline for mq-deadline; blk-mq disks run no elevator.
        Scheduler::MqDeadline if s.stack == StackKind::Dm || s.blk_mq.dispatch == MqDispatch::V5_0 => Ok(()),
        Scheduler::MqDeadline => Err(format!("a deadline tunable, and {MQ_NOTE} dispatch without an elevator (mq-deadline runs as none); it acts with queue.scheduler=deadline")),
        _ => Err(format!("a deadline tunable, and queue/iosched/ holds only the elevator's own files; queue.scheduler is {}", scheduler_name(s))),
    }
}

pub(super) fn blk_mq_queues(s: &Scenario) -> Result<(), String> {
    need(
        crate::block::is_mq(s.queue.scheduler),
        format!(
            "a blk-mq setting, and the disks' queues are legacy with queue.scheduler={}; blk-mq is none, mq-deadline or bfq",
            scheduler_name(s)
        ),
    )
}

/// A rule of blk-mq's 5.x dispatch (`blk_mq.dispatch=5.0`, which `kernel` 4.15 and later sets).
pub(super) fn mq_dispatch_5(s: &Scenario) -> Result<(), String> {
    blk_mq_queues(s)?;
    need(
        s.blk_mq.dispatch == MqDispatch::V5_0,
        "a rule of blk-mq's 5.x dispatch, and blk_mq.dispatch=4.0 runs the disks as 4.0 does (no elevator, no task plug on blk-mq)".into(),
    )
}

/// A SCSI host's setting, or a SCSI device's (`queue_depth`): an NVMe drive has neither.
pub(super) fn scsi_host(s: &Scenario) -> Result<(), String> {
    need(
        s.disk.kind != DiskKind::Nvme,
        "a SCSI host's or device's, and disk.kind=nvme is on PCIe with no SCSI host: its driver gives each CPU a queue pair of 1023 tags"
            .into(),
    )
}

/// blk-mq's hardware queues of a SCSI host (`shost->nr_hw_queues`, each queue's vector).
pub(super) fn scsi_blk_mq_queues(s: &Scenario) -> Result<(), String> {
    scsi_host(s)?;
    blk_mq_queues(s)
}

pub(super) fn scsi_request_fn(s: &Scenario) -> Result<(), String> {
    need(
        !crate::block::is_mq(s.queue.scheduler),
        format!(
            "a legacy SCSI request queue's (scsi_request_fn), and queue.scheduler={} makes the disks' queues blk-mq",
            scheduler_name(s)
        ),
    )
}

pub(super) fn request_pool(s: &Scenario) -> Result<(), String> {
    // 5.x's sysfs nr_requests sizes mq-deadline's scheduler tags (blk_mq_update_nr_requests);
    // the model gives them the kernel's default only.
    let sched_tags = if s.queue.scheduler == Scheduler::MqDeadline && s.blk_mq.dispatch == MqDispatch::V5_0 {
        "; mq-deadline's scheduler tags are 2 × min(host.can_queue, 128) per hardware queue, the kernel's default, not set by this knob"
    } else {
        ""
    };
    need(
        legacy_queue(s),
        format!("a legacy request queue's request pool, and every queue here is blk-mq ({MQ_NOTE} have no request pool: their tags are host.can_queue per hardware queue{sched_tags})"),
    )
}

pub(super) fn delay_timer(s: &Scenario) -> Result<(), String> {
    need(legacy_queue(s), "blk_delay_queue's timer on a legacy request queue, and every queue here is blk-mq".into())
}

pub(super) fn plugging(s: &Scenario) -> Result<(), String> {
    need(
        legacy_queue(s),
        format!("{MQ_NOTE} take no queue.plugging (a task's plug on blk-mq is blk_mq.plug), and every queue here is blk-mq"),
    )
}

pub(super) fn controller_cache(s: &Scenario) -> Result<(), String> {
    need(s.disk.kind == DiskKind::Hwraid5, format!("the RAID controller's cache; it acts with disk.kind=hwraid5, here {}", kind_name(s)))
}

pub(super) fn member_drive(s: &Scenario) -> Result<(), String> {
    need(
        s.disk.kind == DiskKind::Hwraid5,
        format!("the RAID controller's member drives; it acts with disk.kind=hwraid5, here {}", kind_name(s)),
    )
}

pub(super) fn rotating(s: &Scenario) -> Result<(), String> {
    need(s.disk.kind.rotational(), format!("a rotating disk's; it acts with disk.kind=hdd or hwraid5, here {}", kind_name(s)))
}

/// A user's settings on top of a scenario: refused, naming the first that acts on nothing in
/// every one of `scenarios` (the variants a command runs: a knob of dm-multipath is fine in a
/// comparison whose other variant runs straight on the disk).
pub fn check_user_knobs(scenarios: &[&Scenario], sets: &[(String, String)]) -> Result<(), ScenarioError> {
    let Some(first) = scenarios.first() else { return Ok(()) };
    for (k, _) in sets {
        if scenarios.iter().all(|s| knob_applies(s, k).is_err()) {
            let why = knob_applies(first, k).err().unwrap_or_default();
            return Err(ScenarioError::new(k.as_str(), format!("changes nothing here: {why}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(sets: &[(&str, &str)]) -> Scenario {
        let mut s = Scenario::default();
        for (k, v) in sets {
            set_knob(&mut s, k, v).unwrap();
        }
        s
    }

    #[test]
    fn a_knob_of_a_layer_the_stack_lacks_acts_on_nothing_and_says_why() {
        let lvm = with(&[("stack", "lvm")]);
        let e = knob_applies(&lvm, "md.chunk_kb").unwrap_err();
        assert!(e.contains("no md device with stack=lvm") && e.contains("stack=md"), "{e}");
        // dm-linear takes its disks' limit: dm.max_sectors_kb is request-based dm's.
        let e = knob_applies(&lvm, "dm.max_sectors_kb").unwrap_err();
        assert!(e.contains("disk.max_sectors_kb"), "{e}");
        // The callout is asked by pdflush's nonblocking writeback only.
        assert!(knob_applies(&lvm, "dm.congestion_callout").unwrap_err().contains("vm.writeback=pdflush"));
        assert!(knob_applies(&with(&[("stack", "lvm"), ("vm.writeback", "pdflush")]), "dm.congestion_callout").is_ok());
        // Failover and multibus choose among paths: with one there is nothing to choose.
        assert!(knob_applies(&with(&[("stack", "dm")]), "dm.path_grouping").unwrap_err().contains("dm.paths 2 or more"));
        assert!(knob_applies(&with(&[("stack", "dm"), ("dm.paths", "2")]), "dm.path_grouping").is_ok());
        assert!(knob_applies(&with(&[("stack", "md"), ("disks", "3")]), "md.chunk_kb").is_ok());
        // iosched/ holds the current elevator's files only.
        let deadline = with(&[("queue.scheduler", "deadline")]);
        let e = knob_applies(&deadline, "iosched.slice_idle").unwrap_err();
        assert!(e.contains("a cfq tunable") && e.contains("deadline"), "{e}");
        assert!(knob_applies(&deadline, "iosched.fifo_batch").is_ok());
        // The model's blk-mq disks dispatch without an elevator; dm's own queue runs deadline.
        assert!(knob_applies(&with(&[("queue.scheduler", "mq-deadline")]), "iosched.read_expire")
            .unwrap_err()
            .contains("mq-deadline runs as none"));
        assert!(knob_applies(&with(&[("queue.scheduler", "mq-deadline"), ("stack", "dm")]), "iosched.read_expire").is_ok());
        // Under 5.x's dispatch mq-deadline sorts on the disks: its tunables act there.
        let mq5 = with(&[("queue.scheduler", "mq-deadline"), ("blk_mq.dispatch", "5.0")]);
        assert!(knob_applies(&mq5, "iosched.read_expire").is_ok());
        assert!(knob_applies(&mq5, "queue.nr_requests").unwrap_err().contains("2 × min(host.can_queue, 128)"));
        assert!(knob_applies(&with(&[("queue.scheduler", "cfq")]), "iosched.fifo_batch").is_err());
        // blk-mq's knobs need blk-mq queues, and clone allocation dm over them.
        assert!(knob_applies(&deadline, "host.nr_hw_queues").is_err());
        let mq = with(&[("queue.scheduler", "none")]);
        assert!(knob_applies(&mq, "host.nr_hw_queues").is_ok());
        assert!(knob_applies(&mq, "dm.clone_alloc").is_err(), "no dm with stack=direct");
        assert!(knob_applies(&with(&[("queue.scheduler", "none"), ("stack", "dm")]), "dm.clone_alloc").is_ok());
        assert!(knob_applies(&mq, "queue.generic_tagging").is_err());
        // The model's blk-mq queues have no request pool and take no queue.plugging; dm's own queue does.
        for k in ["queue.nr_requests", "queue.batch_hard_limit", "queue.plugging", "queue.async_run_cancels_delay", "scsi.run_queue"] {
            assert!(knob_applies(&mq, k).is_err(), "{k}");
        }
        let dm_mq = with(&[("queue.scheduler", "none"), ("stack", "dm")]);
        assert!(knob_applies(&dm_mq, "queue.nr_requests").is_ok() && knob_applies(&dm_mq, "scsi.run_queue").is_err());
        // The disk's own model.
        assert!(knob_applies(&with(&[("disk.kind", "ssd")]), "disk.skip_within_track").is_err());
        assert!(knob_applies(&with(&[("disk.kind", "hwraid5")]), "disk.controller_cache").is_ok());
        assert!(knob_applies(&Scenario::default(), "disk.controller_cache").is_err());
        // Knobs of every stack act everywhere.
        for k in [
            "queue.nr_requests",
            "queue.depth",
            "workload.bs",
            "vm.dirty_ratio",
            "cpu.cores",
            "host.can_queue",
            "stack",
            "disks",
            "queue.plugging",
        ] {
            assert!(knob_applies(&lvm, k).is_ok(), "{k}");
        }
    }

    /// md's stripe cache is the kernel's memory: one the box cannot hold is refused with the
    /// most it holds (2.6.20's grow_one_stripe stops at the allocation that fails).
    #[test]
    fn a_stripe_cache_larger_than_the_box_is_refused_with_what_fits() {
        let md =
            |scs: &str, mem: &str| with(&[("stack", "md"), ("disks", "8"), ("md.stripe_cache_size", scs), ("vm.mem_mb", mem)]).validate();
        let e = md("32768", "1024").unwrap_err();
        assert_eq!(e.field, "md.stripe_cache_size");
        assert!(e.message.contains("1024 MiB of pages (8 members × 4 KiB each)") && e.message.ends_with("expected 17 to 32640"), "{e}");
        assert!(md("32640", "1024").is_ok());
        assert!(md("32768", "2048").is_ok());
        // Without md there is no stripe cache to hold.
        assert!(with(&[("md.stripe_cache_size", "32768"), ("vm.mem_mb", "64")]).validate().is_ok());
    }

    /// Cross-field checks of a knob that acts on nothing here leave no way out (its field is
    /// refused), so they wait until it acts; HBAs count sd devices, one per path.
    #[test]
    fn checks_across_knobs_skip_knobs_that_act_on_nothing_and_count_paths() {
        let legacy_few_cpus = with(&[("host.nr_hw_queues", "4"), ("cpu.cores", "2")]);
        assert!(legacy_few_cpus.validate().is_ok());
        assert_eq!(
            with(&[("host.nr_hw_queues", "4"), ("cpu.cores", "2"), ("queue.scheduler", "none")]).validate().unwrap_err().field,
            "host.nr_hw_queues"
        );
        assert!(with(&[("md.component_size_kb", "100000"), ("disk.kind", "ramlun")]).validate().is_ok());
        assert!(with(&[("stack", "dm"), ("dm.paths", "2"), ("hbas", "2")]).validate().is_ok());
        let e = with(&[("stack", "dm"), ("dm.paths", "2"), ("hbas", "3")]).validate().unwrap_err();
        assert!(e.message.contains("3 HBAs for 2 sd devices (1 disk × 2 paths)"), "{e}");
        // A lesson that pins its HBA's interrupt CPU, with HBAs added: the message shows what
        // is set and both ways out.
        let e = with(&[("stack", "md"), ("disks", "8"), ("md.chunk_kb", "128"), ("md.component_size_kb", "4")]).validate().unwrap_err();
        assert_eq!(e.field, "md.component_size_kb", "{e}");
        assert!(e.message.contains("holds no whole chunk of 128 KiB") && e.message.contains("at least 128"), "{e}");
        let e = with(&[("disks", "4"), ("cpu.irq_cpus", "0"), ("hbas", "2")]).validate().unwrap_err();
        assert_eq!(e.field, "cpu.irq_cpus");
        assert!(e.message.starts_with("1 CPU (0) for 2 HBAs; expected one CPU per HBA joined by ','"), "{e}");
        assert!(e.message.contains("or empty"), "{e}");
        assert!(with(&[("disks", "4"), ("cpu.irq_cpus", "0,1"), ("hbas", "2")]).validate().is_ok());
    }

    #[test]
    fn a_set_must_act_in_one_of_the_scenarios_compared() {
        let dm = with(&[("queue.scheduler", "none"), ("stack", "dm")]);
        let direct = with(&[("queue.scheduler", "none")]);
        let sets = vec![("dm.clone_alloc".to_string(), "nowait".to_string())];
        assert!(check_user_knobs(&[&dm, &direct], &sets).is_ok());
        let e = check_user_knobs(&[&direct], &sets).unwrap_err();
        assert_eq!(e.field, "dm.clone_alloc");
        assert!(e.message.starts_with("changes nothing here: "), "{e}");
    }
}
