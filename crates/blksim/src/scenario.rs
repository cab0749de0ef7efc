//! What a user may ask for: the stack, the devices, the workload (fio terms), the CPU and the
//! knobs (sysfs names). `Scenario` is the serde type; `Scenario::validate` turns it into a
//! `Config` or names the offending field and the allowed range.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Hard limits so that no scenario or link can hang the page.
pub mod limits {
    pub const DISKS_MAX: u32 = 256;
    pub const HBAS_MAX: u32 = 16;
    pub const JOBS_MAX: u32 = 1024;
    pub const CORES_MAX: u32 = 256;
    pub const DURATION_S_MAX: f64 = 3600.0;
    pub const NR_REQUESTS_MAX: u32 = 16384;
    pub const QUEUE_DEPTH_MAX: u32 = 1024;
    pub const CAN_QUEUE_MAX: u32 = 16384;
    pub const BS_MAX: u64 = 16 << 20;
    pub const IODEPTH_MAX: u32 = 1024;
    pub const MAX_SECTORS_KB_MAX: u32 = 32767;
    pub const READ_AHEAD_KB_MAX: u32 = 65536;
    pub const SIZE_MAX: u64 = 1 << 40;
    /// Bios and requests alive at once across the whole run.
    pub const BIOS_LIVE_MAX: usize = 1 << 22;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StackKind {
    /// Jobs use the disks (`sd*`) directly.
    Direct,
    /// LVM2: a bio-based dm-linear volume per disk.
    Lvm,
    /// Request-based dm-multipath over each disk.
    Dm,
    /// md RAID5 over all disks.
    Md,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskKind {
    Hdd,
    Ssd,
    Hwraid5,
    /// An SRP LUN backed by a tmpfs file on the target (seed 002): RAM behind an InfiniBand hop.
    Ramlun,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheduler {
    #[serde(rename = "noop")]
    Noop,
    #[serde(rename = "deadline")]
    Deadline,
    #[serde(rename = "cfq")]
    Cfq,
    #[serde(rename = "none")]
    None,
    #[serde(rename = "mq-deadline")]
    MqDeadline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunQueueMode {
    Direct,
    Kblockd,
    Fixed,
}

/// How submitters plug their queues: the per-task on-stack plug (2.6.39+), under which a
/// step's bios merge before their requests reach the queue; or 2.6.2's queue plug, whose
/// unplug threshold of 4 counted in-flight requests too, so a deep device is never held
/// plugged and each request is dispatched as soon as it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plugging {
    #[serde(rename = "task")]
    Task,
    #[serde(rename = "2.6.2")]
    Legacy,
}

/// dm-multipath's path grouping (`path_grouping_policy` with its selector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathPolicy {
    /// One path per priority group: all I/O on the first path (failover only on a failure).
    #[serde(rename = "failover")]
    Failover,
    /// All paths in one group, used in turn (`round-robin`, `rr_min_io_rq` requests each).
    #[serde(rename = "multibus")]
    Multibus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CloneAlloc {
    Sleep,
    Mempool,
    Nowait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
}

impl Rw {
    pub fn is_write(self) -> bool {
        matches!(self, Rw::Write | Rw::Randwrite)
    }
    pub fn is_random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite)
    }
}

/// What the job's file is: the block device node itself, or a file on a filesystem on it.
/// It decides the bios buffered reads make (see `Sim::submit_readahead`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filesystem {
    /// `dd if=/dev/dm-0`: the block device's page cache, read through buffer heads.
    None,
    /// A file on XFS: `mpage_readpages` builds one bio per contiguous run of pages; writeback
    /// goes through buffer heads, one bio per 4 KiB block (`xfs_submit_page`, 2.6.2).
    Xfs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoEngine {
    Sync,
    Libaio,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiskKnobs {
    pub kind: DiskKind,
    /// The leaf queue's `max_sectors_kb`.
    pub max_sectors_kb: u32,
    /// The drive's volatile write cache (WCE, `/sys/block/sdX/device/scsi_disk/*/cache_type`).
    pub write_cache: bool,
    /// How a hardware RAID5 controller's write-back cache turns writes into stripe writes.
    pub controller_cache: ControllerCache,
}

/// A hardware RAID5 controller's write-back cache policy (`disk.kind = hwraid5` only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerCache {
    /// Writes are kept in arrival order; consecutive writes to one stripe coalesce, and a stripe
    /// is written once the stream has moved past it (whole, or partial with reads). A write that
    /// arrives late for a stripe already passed starts a new partial stripe. Inferred for the
    /// 3ware 8506 from seed 003: out-of-order 4 KiB writes cost it "quite a bit of seeking".
    #[default]
    InOrder,
    /// Any cached writes to a stripe gather; whole stripes go first, and an incomplete stripe is
    /// written only when the cache is full (the "write gathering" of larger controllers).
    Gathering,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueKnobs {
    pub nr_requests: u32,
    /// The device's tag depth (`/sys/block/sdX/device/queue_depth`).
    pub depth: u32,
    pub scheduler: Scheduler,
    pub read_ahead_kb: u32,
    /// Scatter-gather segments per request (`max_segments`): with page-cache pages (one
    /// segment each) a request holds at most this many 4 KiB pages.
    pub max_segments: u32,
    pub plugging: Plugging,
    /// The driver uses the generic block-layer tagging (`blk_queue_init_tags`), whose
    /// `init_tag_map` caps the tag depth at 2 × `nr_requests`.
    pub generic_tagging: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostKnobs {
    pub can_queue: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScsiKnobs {
    pub run_queue: RunQueueMode,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DmKnobs {
    pub max_sectors_kb: u32,
    pub partial_completion: bool,
    pub clone_alloc: CloneAlloc,
    pub congestion_callout: bool,
    /// Paths per dm-multipath device: each is its own `sd` device for the same disk, on
    /// successive HBAs.
    pub paths: u32,
    pub path_grouping: PathPolicy,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdKnobs {
    pub chunk_kb: u32,
    pub stripe_cache_size: u32,
    pub split_aligned_reads: bool,
    /// KiB used of each member (`mdadm -z`, sysfs `md/component_size`); 0: the whole member.
    pub component_size_kb: u64,
}

/// Memory and the dirty-page limits (`/proc/sys/vm/dirty_ratio` and friends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VmKnobs {
    /// Memory available to the page cache, MiB.
    pub mem_mb: u32,
    /// Writers are throttled in `balance_dirty_pages` above this % of memory dirty or under writeback.
    pub dirty_ratio: u32,
    /// Background writeback starts above this %.
    pub dirty_background_ratio: u32,
    /// Who does background writeback, and whether it skips congested devices.
    pub writeback: Writeback,
}

/// The background writeback threads of the era.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writeback {
    /// 2.6.32+: one `flush-MAJ:MIN` thread per backing device; it blocks on a full queue like
    /// any writer.
    #[default]
    PerBdi,
    /// 2.6.0-2.6.31: `pdflush` writes back nonblocking (`wbc->nonblocking`): a device whose
    /// backing_dev_info is write-congested is skipped and pdflush waits in
    /// `blk_congestion_wait(WRITE, HZ/10)`.
    Pdflush,
}

impl Default for VmKnobs {
    fn default() -> Self {
        // 2.6.32+ defaults: dirty_ratio 20, dirty_background_ratio 10.
        VmKnobs { mem_mb: 2048, dirty_ratio: 20, dirty_background_ratio: 10, writeback: Writeback::PerBdi }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuKnobs {
    pub cores: u32,
    /// The CPU that takes each HBA's interrupt (`/proc/irq/N/smp_affinity`), one per HBA.
    /// Empty: HBA i interrupts CPU i mod cores.
    pub irq_cpus: Vec<u32>,
}

/// An fio job description; `numjobs` copies are made, spread over the top-level devices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// The process name shown in top and the trace (`dd`, `fio`, `mkfs.xfs`).
    pub name: String,
    pub rw: Rw,
    /// Block size in bytes.
    pub bs: u64,
    pub numjobs: u32,
    pub ioengine: IoEngine,
    pub iodepth: u32,
    pub direct: bool,
    /// Bytes each job transfers; 0 means time-based (run for the whole duration).
    pub size: u64,
    pub fsync: bool,
    /// fio `filename`: the devices the jobs use, colon-separated, the jobs spread over them in
    /// turn; empty: every top device (sd, dm or md, by the stack) in turn.
    pub filename: String,
    /// Whether the job reads a device node or files on a filesystem (buffered reads only).
    pub filesystem: Filesystem,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    pub stack: StackKind,
    pub disks: u32,
    pub hbas: u32,
    pub disk: DiskKnobs,
    pub queue: QueueKnobs,
    pub host: HostKnobs,
    pub scsi: ScsiKnobs,
    pub dm: DmKnobs,
    pub md: MdKnobs,
    pub cpu: CpuKnobs,
    pub vm: VmKnobs,
    pub workload: Workload,
    /// The default simulated duration in seconds.
    pub duration_s: f64,
}

impl Default for DiskKnobs {
    fn default() -> Self {
        DiskKnobs { kind: DiskKind::Hdd, max_sectors_kb: 512, write_cache: true, controller_cache: ControllerCache::InOrder }
    }
}
impl Default for QueueKnobs {
    fn default() -> Self {
        // BLKDEV_MAX_RQ = 128; a SATA disk's NCQ depth is 31.
        QueueKnobs {
            nr_requests: 128,
            depth: 31,
            scheduler: Scheduler::Noop,
            read_ahead_kb: 128,
            // BLK_MAX_SEGMENTS (include/linux/blkdev.h).
            max_segments: 128,
            plugging: Plugging::Task,
            generic_tagging: false,
        }
    }
}
impl Default for HostKnobs {
    fn default() -> Self {
        HostKnobs { can_queue: 128 }
    }
}
impl Default for ScsiKnobs {
    fn default() -> Self {
        ScsiKnobs { run_queue: RunQueueMode::Direct }
    }
}
impl Default for DmKnobs {
    fn default() -> Self {
        DmKnobs {
            max_sectors_kb: 512,
            partial_completion: true,
            clone_alloc: CloneAlloc::Mempool,
            congestion_callout: false,
            paths: 1,
            path_grouping: PathPolicy::Failover,
        }
    }
}
impl Default for MdKnobs {
    fn default() -> Self {
        MdKnobs { chunk_kb: 64, stripe_cache_size: 256, split_aligned_reads: false, component_size_kb: 0 }
    }
}
impl Default for CpuKnobs {
    fn default() -> Self {
        CpuKnobs { cores: 2, irq_cpus: Vec::new() }
    }
}
impl Default for Workload {
    fn default() -> Self {
        Workload {
            name: "dd".into(),
            rw: Rw::Read,
            bs: 1 << 20,
            numjobs: 1,
            ioengine: IoEngine::Sync,
            iodepth: 1,
            direct: true,
            size: 0,
            fsync: false,
            filename: String::new(),
            filesystem: Filesystem::None,
        }
    }
}
impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            stack: StackKind::Direct,
            disks: 1,
            hbas: 1,
            disk: DiskKnobs::default(),
            queue: QueueKnobs::default(),
            host: HostKnobs::default(),
            scsi: ScsiKnobs::default(),
            dm: DmKnobs::default(),
            md: MdKnobs::default(),
            cpu: CpuKnobs::default(),
            vm: VmKnobs::default(),
            workload: Workload::default(),
            duration_s: 10.0,
        }
    }
}

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
            KnobKind::Seconds { max } => {
                format!("a number of seconds greater than 0 and at most {max}")
            }
            KnobKind::Name { max_len } => format!("1 to {max_len} printable ASCII characters without spaces"),
            KnobKind::Devices => "empty (every device in turn) or device names joined by ':', as fio's filename (sda:sdc)".into(),
            KnobKind::Cpus => {
                "empty (HBA n interrupts CPU n mod cores) or one CPU number per HBA joined by ',' (0 for one HBA, 4,4 for two)".into()
            }
        }
    }
}

/// One knob: a sysfs, fio or kernel-behaviour setting the user may change.
#[derive(Clone, Copy, Debug)]
pub struct KnobSpec {
    pub key: &'static str,
    pub kind: KnobKind,
    pub help: &'static str,
    /// Whether changing it on a running simulation takes effect at once, as in the kernel
    /// (sysfs writes to `nr_requests`, `scheduler`, `max_sectors_kb`), or needs a restart.
    pub live: bool,
}

const SIZE_K: u64 = 1024;

/// Every knob, in the order the UI and `blksim` list them.
pub const KNOBS: &[KnobSpec] = &[
    KnobSpec { key: "stack", kind: KnobKind::Enum(&["direct", "lvm", "dm", "md"]), help: "which layers sit above the disks", live: false },
    KnobSpec {
        key: "disks",
        kind: KnobKind::Int { min: 1, max: limits::DISKS_MAX as u64, unit: "" },
        help: "number of disks",
        live: false,
    },
    KnobSpec {
        key: "hbas",
        kind: KnobKind::Int { min: 1, max: limits::HBAS_MAX as u64, unit: "" },
        help: "number of SCSI hosts (HBAs); disks are spread over them in order",
        live: false,
    },
    KnobSpec {
        key: "dm.max_sectors_kb",
        kind: KnobKind::Int { min: 4, max: limits::MAX_SECTORS_KB_MAX as u64, unit: "KiB" },
        help: "the dm device's queue limit",
        live: true,
    },
    KnobSpec {
        key: "dm.partial_completion",
        kind: KnobKind::Bool,
        help: "update the original request on every clone-bio completion (2.6.32)",
        live: false,
    },
    KnobSpec {
        key: "dm.clone_alloc",
        kind: KnobKind::Enum(&["sleep", "mempool", "nowait"]),
        help: "how request-based dm over blk-mq gets a clone",
        live: false,
    },
    KnobSpec {
        key: "dm.congestion_callout",
        kind: KnobKind::Bool,
        help: "dm reports its member queues' congestion (2.6.6+); pdflush (vm.writeback) skips congested devices",
        live: false,
    },
    KnobSpec {
        key: "dm.paths",
        kind: KnobKind::Int { min: 1, max: 4, unit: "paths per dm device" },
        help: "paths to each disk (one sd device per path, on successive HBAs); stack=dm only",
        live: false,
    },
    KnobSpec {
        key: "dm.path_grouping",
        kind: KnobKind::Enum(&["failover", "multibus"]),
        help: "failover: all I/O on one path; multibus: round-robin over all paths",
        live: false,
    },
    KnobSpec { key: "md.chunk_kb", kind: KnobKind::Int { min: 4, max: 65536, unit: "KiB" }, help: "RAID5 chunk size", live: false },
    KnobSpec {
        key: "md.stripe_cache_size",
        kind: KnobKind::Int { min: 17, max: 32768, unit: "stripe heads" },
        help: "RAID5 stripe cache",
        live: false,
    },
    KnobSpec {
        key: "md.split_aligned_reads",
        kind: KnobKind::Bool,
        help: "split an oversized chunk-aligned read to fit the member (v4.3+)",
        live: false,
    },
    KnobSpec {
        key: "md.component_size_kb",
        kind: KnobKind::Int { min: 0, max: 1 << 32, unit: "KiB; 0: the whole member" },
        help: "space used on each member (mdadm -z): the array, and the jobs' files on it, span only this much of each disk",
        live: false,
    },
    KnobSpec {
        key: "disk.kind",
        kind: KnobKind::Enum(&["hdd", "ssd", "hwraid5", "ramlun"]),
        help: "the device model behind each disk",
        live: false,
    },
    KnobSpec {
        key: "disk.max_sectors_kb",
        kind: KnobKind::Int { min: 4, max: limits::MAX_SECTORS_KB_MAX as u64, unit: "KiB" },
        help: "the member/leaf queue limit",
        live: true,
    },
    KnobSpec {
        key: "disk.write_cache",
        kind: KnobKind::Bool,
        help: "the drive's write cache (WCE): writes complete once in the cache",
        live: false,
    },
    KnobSpec {
        key: "disk.controller_cache",
        kind: KnobKind::Enum(&["in-order", "gathering"]),
        help: "hwraid5: coalesce only consecutive writes to a stripe (in-order), or gather any cached writes into whole stripes",
        live: false,
    },
    KnobSpec {
        key: "queue.nr_requests",
        kind: KnobKind::Int { min: 4, max: limits::NR_REQUESTS_MAX as u64, unit: "requests per direction" },
        help: "request pool size",
        live: true,
    },
    KnobSpec {
        key: "queue.depth",
        kind: KnobKind::Int { min: 1, max: limits::QUEUE_DEPTH_MAX as u64, unit: "tags" },
        help: "device tags (TCQ/NCQ queue_depth)",
        live: true,
    },
    KnobSpec {
        key: "queue.scheduler",
        kind: KnobKind::Enum(&["noop", "deadline", "cfq", "none", "mq-deadline"]),
        help: "the elevator",
        live: true,
    },
    KnobSpec {
        key: "queue.read_ahead_kb",
        kind: KnobKind::Int { min: 0, max: limits::READ_AHEAD_KB_MAX as u64, unit: "KiB" },
        help: "readahead window",
        live: true,
    },
    KnobSpec {
        key: "queue.max_segments",
        kind: KnobKind::Int { min: 1, max: 4096, unit: "segments" },
        help: "scatter-gather segments per request: with one 4 KiB page per segment, a request holds at most this many pages",
        live: false,
    },
    KnobSpec {
        key: "queue.plugging",
        kind: KnobKind::Enum(&["task", "2.6.2"]),
        help: "task: per-task plug, bios merge before dispatch (2.6.39+); 2.6.2: a deep device is never held plugged",
        live: false,
    },
    KnobSpec {
        key: "queue.generic_tagging",
        kind: KnobKind::Bool,
        help: "the driver uses generic block tagging: init_tag_map caps the depth at 2 x nr_requests",
        live: false,
    },
    KnobSpec {
        key: "host.can_queue",
        kind: KnobKind::Int { min: 1, max: limits::CAN_QUEUE_MAX as u64, unit: "commands" },
        help: "commands the HBA takes at once",
        live: false,
    },
    KnobSpec {
        key: "scsi.run_queue",
        kind: KnobKind::Enum(&["direct", "kblockd", "fixed"]),
        help: "scsi_run_queue: before c21e6beb, c21e6beb, or 9937a5e2+466c08c7",
        live: false,
    },
    KnobSpec {
        key: "vm.mem_mb",
        kind: KnobKind::Int { min: 64, max: 1 << 20, unit: "MiB" },
        help: "memory for the page cache",
        live: false,
    },
    KnobSpec {
        key: "vm.dirty_ratio",
        kind: KnobKind::Int { min: 1, max: 100, unit: "%" },
        help: "writers throttle above this share of memory dirty",
        live: true,
    },
    KnobSpec {
        key: "vm.dirty_background_ratio",
        kind: KnobKind::Int { min: 1, max: 100, unit: "%" },
        help: "background writeback starts above this share",
        live: true,
    },
    KnobSpec {
        key: "vm.writeback",
        kind: KnobKind::Enum(&["per-bdi", "pdflush"]),
        help: "per-bdi: flush-MAJ:MIN threads (2.6.32+); pdflush: nonblocking writeback that skips congested devices (2.6.0-2.6.31)",
        live: false,
    },
    KnobSpec {
        key: "workload.name",
        kind: KnobKind::Name { max_len: 15 },
        help: "the process name (fio job name), as top shows it",
        live: false,
    },
    KnobSpec {
        key: "workload.numjobs",
        kind: KnobKind::Int { min: 1, max: limits::JOBS_MAX as u64, unit: "" },
        help: "fio numjobs",
        live: false,
    },
    KnobSpec { key: "workload.rw", kind: KnobKind::Enum(&["read", "write", "randread", "randwrite"]), help: "fio rw", live: false },
    KnobSpec { key: "workload.bs", kind: KnobKind::Size { min: 512, max: limits::BS_MAX }, help: "fio bs", live: false },
    KnobSpec { key: "workload.ioengine", kind: KnobKind::Enum(&["sync", "libaio"]), help: "fio ioengine", live: false },
    KnobSpec {
        key: "workload.iodepth",
        kind: KnobKind::Int { min: 1, max: limits::IODEPTH_MAX as u64, unit: "" },
        help: "fio iodepth (libaio)",
        live: false,
    },
    KnobSpec { key: "workload.direct", kind: KnobKind::Bool, help: "fio direct (O_DIRECT)", live: false },
    KnobSpec {
        key: "workload.size",
        kind: KnobKind::Size { min: 0, max: limits::SIZE_MAX },
        help: "fio size per job; 0 runs for the whole duration",
        live: false,
    },
    KnobSpec { key: "workload.fsync", kind: KnobKind::Bool, help: "fsync when the job ends (fio end_fsync)", live: false },
    KnobSpec {
        key: "workload.filename",
        kind: KnobKind::Devices,
        help: "fio filename: the devices the jobs use, in turn (the stack's top devices: sdX, dm-N or md0)",
        live: false,
    },
    KnobSpec {
        key: "workload.filesystem",
        kind: KnobKind::Enum(&["none", "xfs"]),
        help: "none: the job reads the device node (one bio per page); xfs: files (one bio per contiguous run)",
        live: false,
    },
    KnobSpec { key: "cpu.cores", kind: KnobKind::Int { min: 1, max: limits::CORES_MAX as u64, unit: "" }, help: "CPU cores", live: false },
    KnobSpec {
        key: "cpu.irq_cpus",
        kind: KnobKind::Cpus,
        help: "the CPU each HBA's interrupt goes to (/proc/irq/N/smp_affinity), where its completion softirq runs",
        live: false,
    },
    KnobSpec { key: "duration", kind: KnobKind::Seconds { max: limits::DURATION_S_MAX }, help: "simulated seconds to run", live: false },
];

pub fn knob_spec(key: &str) -> Option<&'static KnobSpec> {
    KNOBS.iter().find(|k| k.key == key)
}

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

/// A knob's value as text, the way `--set` and links write it.
pub fn get_knob(s: &Scenario, key: &str) -> Option<String> {
    fn name<T: Serialize>(v: &T) -> String {
        match serde_json::to_value(v) {
            Ok(serde_json::Value::String(s)) => s,
            other => panic!("enum knob did not serialize to a string: {other:?}"),
        }
    }
    Some(match key {
        "stack" => name(&s.stack),
        "disks" => s.disks.to_string(),
        "hbas" => s.hbas.to_string(),
        "dm.max_sectors_kb" => s.dm.max_sectors_kb.to_string(),
        "dm.partial_completion" => s.dm.partial_completion.to_string(),
        "dm.clone_alloc" => name(&s.dm.clone_alloc),
        "dm.congestion_callout" => s.dm.congestion_callout.to_string(),
        "dm.paths" => s.dm.paths.to_string(),
        "dm.path_grouping" => name(&s.dm.path_grouping),
        "md.chunk_kb" => s.md.chunk_kb.to_string(),
        "md.stripe_cache_size" => s.md.stripe_cache_size.to_string(),
        "md.split_aligned_reads" => s.md.split_aligned_reads.to_string(),
        "md.component_size_kb" => s.md.component_size_kb.to_string(),
        "disk.kind" => name(&s.disk.kind),
        "disk.max_sectors_kb" => s.disk.max_sectors_kb.to_string(),
        "disk.write_cache" => s.disk.write_cache.to_string(),
        "disk.controller_cache" => name(&s.disk.controller_cache),
        "queue.nr_requests" => s.queue.nr_requests.to_string(),
        "queue.depth" => s.queue.depth.to_string(),
        "queue.scheduler" => name(&s.queue.scheduler),
        "queue.read_ahead_kb" => s.queue.read_ahead_kb.to_string(),
        "queue.max_segments" => s.queue.max_segments.to_string(),
        "queue.plugging" => name(&s.queue.plugging),
        "queue.generic_tagging" => s.queue.generic_tagging.to_string(),
        "host.can_queue" => s.host.can_queue.to_string(),
        "scsi.run_queue" => name(&s.scsi.run_queue),
        "vm.mem_mb" => s.vm.mem_mb.to_string(),
        "vm.dirty_ratio" => s.vm.dirty_ratio.to_string(),
        "vm.dirty_background_ratio" => s.vm.dirty_background_ratio.to_string(),
        "vm.writeback" => name(&s.vm.writeback),
        "workload.name" => s.workload.name.clone(),
        "workload.numjobs" => s.workload.numjobs.to_string(),
        "workload.rw" => name(&s.workload.rw),
        "workload.bs" => fmt_size(s.workload.bs),
        "workload.ioengine" => name(&s.workload.ioengine),
        "workload.iodepth" => s.workload.iodepth.to_string(),
        "workload.direct" => s.workload.direct.to_string(),
        "workload.size" => fmt_size(s.workload.size),
        "workload.fsync" => s.workload.fsync.to_string(),
        "workload.filesystem" => name(&s.workload.filesystem),
        "workload.filename" => s.workload.filename.clone(),
        "cpu.cores" => s.cpu.cores.to_string(),
        "cpu.irq_cpus" => s.cpu.irq_cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        "duration" => format!("{}", s.duration_s),
        _ => return None,
    })
}

/// Sets one knob from its text form, checking the value against the knob's allowed range.
pub fn set_knob(s: &mut Scenario, key: &str, value: &str) -> Result<(), ScenarioError> {
    let spec = knob_spec(key).ok_or_else(|| {
        let keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
        ScenarioError::new(key, format!("unknown knob; allowed knobs are {}", keys.join(", ")))
    })?;
    let bad = || ScenarioError::new(key, format!("'{}' is not allowed; expected {}", clip(value), spec.kind.allowed()));
    let int = || -> Result<u64, ScenarioError> {
        match spec.kind {
            KnobKind::Int { min, max, .. } => {
                let v: u64 = value.trim().parse().map_err(|_| bad())?;
                if v < min || v > max {
                    return Err(bad());
                }
                Ok(v)
            }
            _ => unreachable!(),
        }
    };
    let boolean = || -> Result<bool, ScenarioError> {
        match value.trim() {
            "true" | "1" | "on" | "yes" => Ok(true),
            "false" | "0" | "off" | "no" => Ok(false),
            _ => Err(bad()),
        }
    };
    fn enumerated<T: for<'de> Deserialize<'de>>(value: &str, bad: impl Fn() -> ScenarioError) -> Result<T, ScenarioError> {
        serde_json::from_value(serde_json::Value::String(value.trim().to_string())).map_err(|_| bad())
    }
    let size = || -> Result<u64, ScenarioError> {
        match spec.kind {
            KnobKind::Size { min, max } => {
                let v = parse_size(value).ok_or_else(bad)?;
                if v < min || v > max || v % 512 != 0 {
                    return Err(bad());
                }
                Ok(v)
            }
            _ => unreachable!(),
        }
    };
    match key {
        "stack" => s.stack = enumerated(value, bad)?,
        "disks" => s.disks = int()? as u32,
        "hbas" => s.hbas = int()? as u32,
        "dm.max_sectors_kb" => s.dm.max_sectors_kb = int()? as u32,
        "dm.partial_completion" => s.dm.partial_completion = boolean()?,
        "dm.clone_alloc" => s.dm.clone_alloc = enumerated(value, bad)?,
        "dm.congestion_callout" => s.dm.congestion_callout = boolean()?,
        "dm.paths" => s.dm.paths = int()? as u32,
        "dm.path_grouping" => s.dm.path_grouping = enumerated(value, bad)?,
        "md.chunk_kb" => s.md.chunk_kb = int()? as u32,
        "md.stripe_cache_size" => s.md.stripe_cache_size = int()? as u32,
        "md.split_aligned_reads" => s.md.split_aligned_reads = boolean()?,
        "md.component_size_kb" => s.md.component_size_kb = int()?,
        "disk.kind" => s.disk.kind = enumerated(value, bad)?,
        "disk.max_sectors_kb" => s.disk.max_sectors_kb = int()? as u32,
        "disk.write_cache" => s.disk.write_cache = boolean()?,
        "disk.controller_cache" => s.disk.controller_cache = enumerated(value, bad)?,
        "queue.nr_requests" => s.queue.nr_requests = int()? as u32,
        "queue.depth" => s.queue.depth = int()? as u32,
        "queue.scheduler" => s.queue.scheduler = enumerated(value, bad)?,
        "queue.read_ahead_kb" => s.queue.read_ahead_kb = int()? as u32,
        "queue.max_segments" => s.queue.max_segments = int()? as u32,
        "queue.plugging" => s.queue.plugging = enumerated(value, bad)?,
        "queue.generic_tagging" => s.queue.generic_tagging = boolean()?,
        "host.can_queue" => s.host.can_queue = int()? as u32,
        "scsi.run_queue" => s.scsi.run_queue = enumerated(value, bad)?,
        "vm.mem_mb" => s.vm.mem_mb = int()? as u32,
        "vm.dirty_ratio" => s.vm.dirty_ratio = int()? as u32,
        "vm.dirty_background_ratio" => s.vm.dirty_background_ratio = int()? as u32,
        "vm.writeback" => s.vm.writeback = enumerated(value, bad)?,
        "workload.name" => {
            let v = value.trim();
            if v.is_empty() || v.len() > 15 || !v.chars().all(|c| c.is_ascii_graphic()) {
                return Err(bad());
            }
            s.workload.name = v.to_string();
        }
        "workload.numjobs" => s.workload.numjobs = int()? as u32,
        "workload.rw" => s.workload.rw = enumerated(value, bad)?,
        "workload.bs" => s.workload.bs = size()?,
        "workload.ioengine" => s.workload.ioengine = enumerated(value, bad)?,
        "workload.iodepth" => s.workload.iodepth = int()? as u32,
        "workload.direct" => s.workload.direct = boolean()?,
        "workload.size" => s.workload.size = size()?,
        "workload.fsync" => s.workload.fsync = boolean()?,
        "workload.filesystem" => s.workload.filesystem = enumerated(value, bad)?,
        "workload.filename" => {
            let v = value.trim();
            let ok = v.len() <= 1024
                && v.split(':').all(|n| !n.is_empty() && n.len() <= 16 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
            if !v.is_empty() && !ok {
                return Err(bad());
            }
            s.workload.filename = v.to_string();
        }
        "cpu.cores" => s.cpu.cores = int()? as u32,
        "cpu.irq_cpus" => {
            // The range against cores and the count against HBAs are checked in validate().
            let v = value.trim();
            let cpus: Result<Vec<u32>, _> =
                if v.is_empty() { Ok(Vec::new()) } else { v.split(',').map(|c| c.trim().parse::<u32>()).collect() };
            match cpus {
                Ok(c) if c.len() <= limits::HBAS_MAX as usize && c.iter().all(|&n| n < limits::CORES_MAX) => s.cpu.irq_cpus = c,
                _ => return Err(bad()),
            }
        }
        "duration" => {
            let v: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(v > 0.0 && v <= limits::DURATION_S_MAX) {
                return Err(bad());
            }
            s.duration_s = v;
        }
        _ => unreachable!("knob {key} is listed in KNOBS but not handled"),
    }
    Ok(())
}

/// Quotes at most 40 characters of user input back in a message.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
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
    /// Checks every knob against its range (so a scenario from a lesson file or a link gets the
    /// same checks as `--set`), then the cross-field rules.
    /// The devices the jobs can use (the top of the stack), by their kernel names.
    pub fn top_device_names(&self) -> Vec<String> {
        match self.stack {
            StackKind::Direct => (0..self.disks).map(crate::block::sd_name).collect(),
            StackKind::Lvm | StackKind::Dm => (0..self.disks).map(|d| format!("dm-{d}")).collect(),
            StackKind::Md => vec!["md0".to_string()],
        }
    }

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
        let member_kb = crate::disk::capacity_sectors(self.disk.kind) / 2;
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
        if self.workload.size != 0 && self.workload.size < self.workload.bs {
            return Err(ScenarioError::new("workload.size", "smaller than workload.bs; expected 0 (time-based) or at least one block"));
        }
        Ok(Config { scenario: self.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_round_trips_through_its_text_form() {
        let s = Scenario::default();
        for spec in KNOBS {
            let v = get_knob(&s, spec.key).unwrap();
            let mut t = Scenario::default();
            set_knob(&mut t, spec.key, &v).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(get_knob(&t, spec.key).unwrap(), v, "{}", spec.key);
        }
    }

    #[test]
    fn sizes_parse_like_fio() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("k"), None);
        assert_eq!(parse_size("-3"), None);
        assert_eq!(parse_size("99999999999999999999k"), None);
    }

    #[test]
    fn a_negative_depth_names_the_knob_and_the_range() {
        let e = set_knob(&mut Scenario::default(), "queue.depth", "-3").unwrap_err();
        assert_eq!(e.to_string(), "queue.depth: '-3' is not allowed; expected an integer from 1 to 1024 (tags)");
    }

    #[test]
    fn an_unknown_knob_lists_the_allowed_ones() {
        let e = set_knob(&mut Scenario::default(), "queue.colour", "red").unwrap_err();
        assert!(e.to_string().starts_with("queue.colour: unknown knob; allowed knobs are stack, disks"));
    }
}
