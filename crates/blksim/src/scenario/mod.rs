//! What a user may ask for: the stack, the devices, the workload (fio terms), the CPU and the
//! knobs (sysfs names). `Scenario` is the serde type; `Scenario::validate` turns it into a
//! `Config` or names the offending field and the allowed range.

use serde::{Deserialize, Serialize};

#[macro_use]
mod knobs;
mod cpu;
mod enum_names;
pub mod era;
pub mod jobs;
pub mod knob_table;
pub mod knob_table_bfq;
pub mod knob_table_disk;
pub mod knob_table_dm;
pub mod knob_table_readahead;
pub use knob_table_mq::MqPlug;
pub use knob_table_readahead::Readahead;
pub mod knob_table_hwraid;
pub mod knob_table_kyber;
pub mod knob_table_md;
pub mod knob_table_mq;
pub mod knob_table_tags;
pub mod knob_table_uring;
mod validate;
pub use cpu::*;
pub use knob_table::KNOBS;
pub use knobs::*;
pub use validate::{check_user_knobs, clip, clip_line, clip_path, counted, knob_applies, Config, ScenarioError};

/// Hard limits so that no scenario or link can hang the page.
pub mod limits {
    pub const DISKS_MAX: u32 = 256;
    pub const HBAS_MAX: u32 = 16;
    /// fio processes (every job section's `numjobs` clones together).
    pub const JOBS_MAX: u32 = 1024;
    /// Job sections of a scenario (a job file's `[name]` sections, `jobs`).
    pub const JOB_SECTIONS_MAX: u32 = 64;
    pub const CORES_MAX: u32 = 256;
    /// A microsecond: the simulation counts whole nanoseconds, and a shorter span runs nothing.
    pub const DURATION_S_MIN: f64 = 1e-6;
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
    /// The most seeds `blksim sweep --seeds` (and a fidelity row's `seeds`) may ask for.
    pub const SWEEP_SEEDS_MAX: u64 = 10_000;
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
    /// A Samsung 830 class SATA 6 Gb/s SSD (`ssd` is the Intel X25-M G2 class).
    Ssd830,
    /// A Samsung 970 EVO Plus class NVMe SSD on PCIe 3.0 x4, through the NVMe driver (a queue
    /// pair per CPU), not SCSI. blk-mq only.
    Nvme,
}

impl DiskKind {
    /// Whether its media rotate (`QUEUE_FLAG_NONROT` clear): cfq, the 5.x plug, the seek knobs.
    pub fn rotational(self) -> bool {
        matches!(self, DiskKind::Hdd | DiskKind::Hwraid5)
    }
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
    #[serde(rename = "kyber")]
    Kyber,
    #[serde(rename = "bfq")]
    Bfq,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunQueueMode {
    Direct,
    Kblockd,
    Fixed,
}

/// How submitters plug their queues: the per-task on-stack plug (2.6.39+), under which a
/// step's bios merge before their requests reach the queue; 2.6.2's queue plug, whose
/// unplug threshold of 4 counted in-flight requests too, so a deep device is never held
/// plugged and each request is dispatched as soon as it is made; or 2.6.20's queue plug
/// (2.6.10-2.6.38), which counts only the requests not yet issued: a request added to an
/// empty queue plugs it, and it is unplugged at 4 waiting requests, after 3 ms (kblockd),
/// when a completion runs the queue, or when someone calls its `unplug_fn` (md's
/// `unplug_slaves`, `sync_page`, `get_request_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plugging {
    #[serde(rename = "task")]
    Task,
    #[serde(rename = "2.6.2")]
    Legacy,
    #[serde(rename = "2.6.20")]
    Queue,
}

/// cfq's rules (`block/cfq-iosched.c`): blkviz's simplified cfq (requests taken one at a time
/// from the active queue's slice), or 2.6.20's: a queue's quantum of 4 goes onto the dispatch
/// list, sorted there by `elv_dispatch_sort`; a queue whose process thinks longer than
/// `slice_idle` (every sync request samples the time since its last completion, capped at
/// 2 × `slice_idle`, valid after 3 samples) loses its idle window, so its slice ends at once
/// and the next queue's requests join the same sorted list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CfqRules {
    #[serde(rename = "simple")]
    Simple,
    #[serde(rename = "2.6.20")]
    V2620,
}

/// dm-multipath's path grouping (`path_grouping_policy` with its selector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathPolicy {
    /// One path per priority group: all I/O on the first path (failover only on a failure).
    #[serde(rename = "failover")]
    Failover,
    /// All paths in one group, used in turn (`round-robin`: `rr_min_io_rq` requests each
    /// under request-based dm, `dm.rr_min_io` bios each under bio-based dm).
    #[serde(rename = "multibus")]
    Multibus,
}

/// Where dm-multipath chooses a path (`dm.mpath`): per bio, up to 2.6.30 (`multipath_map` on
/// each bio from `__map_bio`, the clone sent to that path's own queue); or per request, from
/// 2.6.31 (bios merge into requests in dm's own queue, `dm_request_fn` clones each onto a path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MpathMode {
    #[serde(rename = "bio")]
    Bio,
    #[serde(rename = "request")]
    Request,
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
    /// fio's `rw`/`readwrite`: sequential, reads and writes mixed in `rwmixread`'s proportion.
    Rw,
    /// Random, reads and writes mixed in `rwmixread`'s proportion.
    Randrw,
}

impl Rw {
    /// Writes only (a mixed job is neither a reader nor a writer).
    pub fn is_write(self) -> bool {
        matches!(self, Rw::Write | Rw::Randwrite)
    }
    pub fn is_random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }
    pub fn is_mixed(self) -> bool {
        matches!(self, Rw::Rw | Rw::Randrw)
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
    /// io_uring (5.1+), fio's engine of the 5.x era (`fio::io_uring`): one `io_uring_enter`
    /// submits the I/Os fio queued (`iodepth_batch_submit`), completions are reaped from the CQ
    /// ring without a system call, and a full queue sleeps until `iodepth_batch_complete_min`
    /// completions are in. SQPOLL, polled I/O (`hipri`) and the punt of a submission that would
    /// block to io-wq workers are not modelled.
    #[serde(rename = "io_uring")]
    IoUring,
}

impl IoEngine {
    /// An engine that keeps up to `iodepth` I/Os in flight from one thread.
    pub fn is_async(self) -> bool {
        self != IoEngine::Sync
    }
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
    /// An HDD (and a hardware RAID controller's members) reaches a sector less than a track
    /// ahead of its head without a seek, waiting only for it to come round, as a drive does: on
    /// by default. Off: any other sector costs at least a track-to-track seek, so a short
    /// forward skip waits almost a whole revolution (the earlier model, kept for comparison).
    pub skip_within_track: bool,
    /// An HDD's firmware read-ahead policy (and a hardware RAID controller's members').
    pub prefetch: Prefetch,
    /// The drives behind a hardware RAID controller (`disk.member_drive`).
    pub member_drive: MemberDrive,
}

/// The drive model of a hardware RAID controller's members (`disk.member_drive`): a property
/// of the setup modelled, each value a drive built from its own spec in `calib`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberDrive {
    /// The 2010 7200 rpm drive `disk.kind=hdd` is (`calib::HDD_2010`).
    #[default]
    Hdd,
    /// Western Digital's Raptor WD360GD, 10,000 rpm (`calib::HDD_WD360GD`).
    Wd360gd,
}

/// What an HDD's read-ahead does when another command needs the head (`disk.prefetch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prefetch {
    /// The new command stops it where it has got to: SCSI mode page 08h's minimum pre-fetch of
    /// zero ("read ahead should be terminated immediately a new command arrives", IBM's
    /// DDRS-39130 and HGST's Ultrastar manuals).
    #[default]
    Stop,
    /// A detected stream's read-ahead (after a read that continues its segment's run) goes on
    /// until its segment is full before the head leaves it; any other read-ahead stops as above.
    Stream,
}

/// A hardware RAID5 controller's write-back cache policy (`disk.kind = hwraid5` only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerCache {
    /// A write joins its stripe's cached entry (looked up by address) while the entry is open;
    /// an entry closes when the stripe is whole or the host stream has moved past it, and
    /// closed entries are written in arrival order (whole, or partial with reads). A write that
    /// arrives late for a closed stripe starts a new partial stripe. An INFERRED destage rule
    /// for the 3ware 8506, whose 2.25 MB SRAM stages writes rather than caching them; seed 003:
    /// out-of-order 4 KiB writes cost it "quite a bit of seeking".
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
    /// cfq's era (`queue.cfq`): see `CfqRules`.
    pub cfq: CfqRules,
    /// The driver uses the generic block-layer tagging (`blk_queue_init_tags`), whose
    /// `init_tag_map` caps the tag depth at 2 × `nr_requests`.
    pub generic_tagging: bool,
    /// `get_request` caps batchers at 3/2 of `nr_requests` (2.6.13-rc1 on; 2.6.2-2.6.12 had no
    /// cap: a batcher took its whole batch).
    pub batch_hard_limit: bool,
    /// `blk_run_queue_async` cancels a pending `blk_delay_queue` timer and runs now ("block:
    /// don't delay blk_run_queue_async", Shaohua Li, 3.0-rc); false: 2.6.39-rc (c21e6beb's
    /// era), where `queue_delayed_work` finds the delay work pending and does nothing.
    pub async_run_cancels_delay: bool,
    /// `rq_affinity`: 0 completes where the interrupt came in; 1 (`QUEUE_FLAG_SAME_COMP`, the
    /// default from 2.6.28) moves a completion by IPI to the first CPU of the submitter's cache
    /// group when the interrupted CPU is in another group (`__blk_complete_request`,
    /// `blk_cpu_to_group`); 2 (`QUEUE_FLAG_SAME_FORCE`, 5757a6d7, 3.1) to the submitting CPU
    /// itself unless the interrupt came in there.
    pub rq_affinity: u8,
    /// The elevator's tunables (`queue/iosched/`).
    pub iosched: IoschedKnobs,
    /// kyber's tunables (`queue/iosched/` under kyber).
    pub kyber: knob_table_kyber::KyberKnobs,
}

/// `/sys/block/sdX/queue/iosched/`: cfq's and deadline's tunables, in the units sysfs shows
/// (milliseconds, counts); each elevator reads its own. The defaults are the kernel's
/// (`calib.rs`). cfq's `low_latency` (2.6.32) and `group_idle` (2.6.37) are not modelled;
/// bfq's are its own (`bfq_*`, the knobs `bfq.*`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IoschedKnobs {
    pub slice_idle: u32,
    pub quantum: u32,
    pub slice_sync: u32,
    pub slice_async: u32,
    pub fifo_expire_sync: u32,
    pub fifo_expire_async: u32,
    pub fifo_batch: u32,
    pub read_expire: u32,
    pub write_expire: u32,
    pub writes_starved: u32,
    pub bfq_slice_idle: u32,
    pub bfq_timeout_sync: u32,
    pub bfq_max_budget: u32,
    pub bfq_low_latency: bool,
}

impl Default for IoschedKnobs {
    fn default() -> Self {
        use crate::calib::*;
        use crate::engine::time::NS_PER_MS;
        let ms = |ns: u64| (ns / NS_PER_MS) as u32;
        IoschedKnobs {
            slice_idle: ms(CFQ_SLICE_IDLE_NS),
            quantum: CFQ_QUANTUM,
            slice_sync: ms(CFQ_SLICE_SYNC_NS),
            slice_async: ms(CFQ_SLICE_ASYNC_NS),
            fifo_expire_sync: ms(CFQ_FIFO_EXPIRE_SYNC_NS),
            fifo_expire_async: ms(CFQ_FIFO_EXPIRE_ASYNC_NS),
            fifo_batch: DEADLINE_FIFO_BATCH,
            read_expire: ms(DEADLINE_READ_EXPIRE_NS),
            write_expire: ms(DEADLINE_WRITE_EXPIRE_NS),
            writes_starved: DEADLINE_WRITES_STARVED,
            bfq_slice_idle: ms(BFQ_SLICE_IDLE_NS),
            bfq_timeout_sync: ms(BFQ_TIMEOUT_SYNC_NS),
            bfq_max_budget: 0,
            bfq_low_latency: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostKnobs {
    pub can_queue: u32,
    /// What the host's link moves per second, MB/s (10^6 bytes): the narrowest of its PCIe
    /// slot and its SAS port (see `calib::SAS2_X4_WIDE_PORT_MB_S`); 0: unbounded.
    pub link_mb_s: u32,
    /// blk-mq hardware queues per LUN (`shost->nr_hw_queues`; ib_srp's `ch_count`), each with
    /// a map of `can_queue` tags in the host's tag set, over an equal share of the CPUs.
    pub nr_hw_queues: u32,
    /// Each hardware queue's completions interrupt their own CPU, the first of that queue's
    /// CPUs (ib_srp 3.19+ `srp_create_target`: channel i, serving hardware queue i, has its own
    /// completion queue on completion vector i, and `srp_recv_completion` reaps it until empty
    /// in one interrupt; which CPU takes vector i is irqbalance's choice: INFERRED). False:
    /// every completion interrupts the HBA's CPU (`cpu.irq_cpus`).
    pub irq_per_hw_queue: bool,
    /// `shost->host_tagset` (5.10+, `BLK_MQ_F_TAG_HCTX_SHARED`): one map of `can_queue` driver
    /// tags for all the host's hardware queues (`scenario/knob_table_tags.rs`).
    pub host_tagset: bool,
}

/// blk-mq rules that changed between kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlkMqKnobs {
    /// After splicing a BUSY run's leftovers onto `hctx->dispatch`, run the queue again
    /// (9ba52e5812e5, v4.1); v4.0 does not.
    pub rerun_after_splice: bool,
    /// How a hardware queue is run: 4.0's (`__blk_mq_run_hw_queue`, no elevator, BUSY stops
    /// the queue) or 5.x's (`blk_mq_sched_dispatch_requests`: the elevator's hooks, scheduler
    /// tags, SCSI's dispatch budget, `SCHED_RESTART`).
    pub dispatch: MqDispatch,
    /// Which hardware queues `blk_mq_run_hw_queues` and `blk_mq_delay_run_hw_queues` run for an
    /// elevator that is not multiqueue-aware (`blk_mq.run_hw_queues`, `knob_table_mq.rs`).
    pub run_hw_queues: RunHwQueues,
    /// How an arm of a hardware queue's `run_work` meets one already pending
    /// (`blk_mq.run_work`, `knob_table_mq.rs`).
    pub run_work: RunWork,
    /// Which blk-mq requests a task's plug holds (`blk_mq.plug`, `knob_table_mq.rs`).
    pub plug: MqPlug,
}

/// `blk_mq.run_work`: `queue` (`queue_delayed_work_on`: a pending run keeps its time), `mod`
/// (4.18+, `kblockd_mod_delayed_work_on`: every arm replaces the pending one, so a 3 ms arm
/// takes a queued run off kblockd's list and puts it on the next jiffies), `mod_unless_pending`
/// (5.18+, 8f5fea65b06d: `blk_mq_delay_run_hw_queues` skips a queue whose run is pending).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunWork {
    #[serde(rename = "queue")]
    Queue,
    #[serde(rename = "mod")]
    Mod,
    #[serde(rename = "mod_unless_pending")]
    ModUnlessPending,
}

/// `blk_mq.run_hw_queues`: every hardware queue (to 5.11), or for a single-queue elevator only
/// the current CPU's and those with requests on `hctx->dispatch` (5.12+, `blk_mq_get_sq_hctx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunHwQueues {
    #[serde(rename = "all")]
    All,
    #[serde(rename = "sq_hctx")]
    SqHctx,
}

/// Which blk-mq dispatch the disks run (`blk_mq.dispatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MqDispatch {
    #[serde(rename = "4.0")]
    V4_0,
    #[serde(rename = "5.0")]
    V5_0,
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
    /// Bio-based or request-based dm-multipath.
    pub mpath: MpathMode,
    /// Bio-based round-robin's repeat count: bios down a path before the next (`rr_min_io`).
    pub rr_min_io: u32,
    /// multipathd's path checker (`polling_interval` in multipath.conf, seconds): one read
    /// per path, the interval doubling after each good check up to 4 × this. 0: no multipathd.
    pub polling_interval: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdKnobs {
    pub chunk_kb: u32,
    pub stripe_cache_size: u32,
    /// `chunk_aligned_read` and `raid5_mergeable_bvec` (2.6.20+): a read inside one chunk
    /// bypasses the stripe cache. Off, every read goes through stripe heads.
    pub aligned_reads: bool,
    pub split_aligned_reads: bool,
    /// KiB used of each member (`mdadm -z`, sysfs `md/component_size`); 0: the whole member.
    pub component_size_kb: u64,
}

/// Memory and the dirty-page limits (`/proc/sys/vm/dirty_ratio` and friends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VmKnobs {
    /// The box's memory, MiB: the page cache's, less md's stripe cache (`mm::page_alloc`).
    pub mem_mb: u32,
    /// Writers are throttled in `balance_dirty_pages` above this % of memory dirty or under writeback.
    pub dirty_ratio: u32,
    /// Background writeback starts above this %.
    pub dirty_background_ratio: u32,
    /// Who does background writeback, and whether it skips congested devices.
    pub writeback: Writeback,
    /// How buffered reads read ahead.
    pub readahead: Readahead,
    /// How a device node's readahead window becomes bios (`vm.blkdev_readahead`).
    pub blkdev_readahead: knob_table_readahead::BlkdevReadahead,
    /// How the dirty limit is split among the devices written to.
    pub bdi_dirty_limit: BdiDirtyLimit,
}

/// How `balance_dirty_pages` splits the dirty threshold among backing devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BdiDirtyLimit {
    /// Equal shares for the devices written to (a simplification; 2.6.2 had one global limit,
    /// the same thing for one device).
    #[default]
    Equal,
    /// 2.6.24-3.1 `bdi_dirty_limit`: the threshold times the device's share of recent
    /// writeout (`bdi_writeout_fraction`: `lib/proportions.c`, page completions counted per
    /// device, halved every half period of `2^(calc_period_shift() - 1)` pages).
    Writeout,
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
        VmKnobs {
            mem_mb: 2048,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            writeback: Writeback::PerBdi,
            readahead: Readahead::Ondemand,
            blkdev_readahead: knob_table_readahead::BlkdevReadahead::Readpage,
            bdi_dirty_limit: BdiDirtyLimit::Equal,
        }
    }
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
    /// fio `sync=1`: the job opens its file O_SYNC (`workload.sync`).
    pub sync: bool,
    /// fio `filename`: the devices the jobs use, colon-separated, the jobs spread over them in
    /// turn; empty: every top device (sd, dm or md, by the stack) in turn.
    pub filename: String,
    /// Whether the job reads a device node or files on a filesystem (buffered reads only).
    pub filesystem: Filesystem,
    /// fio's options of a job among several: its mix, pace, start, end and priority.
    pub fio: jobs::JobOptions,
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
    pub blk_mq: BlkMqKnobs,
    pub scsi: ScsiKnobs,
    pub dm: DmKnobs,
    pub md: MdKnobs,
    pub cpu: CpuKnobs,
    pub vm: VmKnobs,
    pub io_uring: knob_table_uring::IoUringKnobs,
    /// The first job (fio's first job section; the `workload.*` knobs).
    pub workload: Workload,
    /// The job sections after the first, in the job file's order (the `job.NAME.*` knobs).
    /// Always serialized, even empty: the worker's messages are bincode, which cannot skip.
    pub jobs: Vec<Workload>,
    /// The default simulated duration in seconds.
    pub duration_s: f64,
    /// `kernel=VERSION`: the kernel whose rules (`era::ERA`) the era knobs not set explicitly
    /// follow; None: every knob at its own default.
    pub kernel: Option<String>,
    /// The knobs set explicitly, by key, sorted: by the front matter, `--set`, a link, a job
    /// file, a variant or a scoreboard row. `kernel` leaves them as they are.
    pub explicit: Vec<String>,
}

impl Scenario {
    /// Notes that `key` was set explicitly (`kernel` leaves it as it is).
    pub fn mark_explicit(&mut self, key: &str) {
        if let Err(at) = self.explicit.binary_search_by(|k| k.as_str().cmp(key)) {
            assert!(self.explicit.len() < KNOBS.len(), "every knob is marked once at most");
            self.explicit.insert(at, key.to_string());
        }
    }
}

impl Default for DiskKnobs {
    fn default() -> Self {
        DiskKnobs {
            kind: DiskKind::Hdd,
            max_sectors_kb: 512,
            write_cache: true,
            controller_cache: ControllerCache::InOrder,
            skip_within_track: true,
            prefetch: Prefetch::Stop,
            member_drive: MemberDrive::Hdd,
        }
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
            cfq: CfqRules::Simple,
            generic_tagging: false,
            batch_hard_limit: true,
            async_run_cancels_delay: true,
            rq_affinity: 1,
            iosched: IoschedKnobs::default(),
            kyber: knob_table_kyber::KyberKnobs::default(),
        }
    }
}
impl Default for HostKnobs {
    fn default() -> Self {
        HostKnobs { can_queue: 128, link_mb_s: 0, nr_hw_queues: 1, irq_per_hw_queue: false, host_tagset: false }
    }
}
impl Default for BlkMqKnobs {
    fn default() -> Self {
        BlkMqKnobs {
            rerun_after_splice: true,
            dispatch: MqDispatch::V4_0,
            run_hw_queues: RunHwQueues::All,
            run_work: RunWork::Queue,
            plug: MqPlug::Off,
        }
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
            mpath: MpathMode::Request,
            rr_min_io: crate::calib::MULTIPATH_DEFAULT_MINIO,
            polling_interval: 0,
        }
    }
}
impl Default for MdKnobs {
    fn default() -> Self {
        MdKnobs { chunk_kb: 64, stripe_cache_size: 256, aligned_reads: true, split_aligned_reads: false, component_size_kb: 0 }
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
            sync: false,
            filename: String::new(),
            filesystem: Filesystem::None,
            fio: jobs::JobOptions::default(),
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
            blk_mq: BlkMqKnobs::default(),
            scsi: ScsiKnobs::default(),
            dm: DmKnobs::default(),
            md: MdKnobs::default(),
            cpu: CpuKnobs::default(),
            vm: VmKnobs::default(),
            io_uring: knob_table_uring::IoUringKnobs::default(),
            workload: Workload::default(),
            jobs: Vec::new(),
            duration_s: 10.0,
            kernel: None,
            explicit: Vec::new(),
        }
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
    fn booleans_read_in_any_case_and_say_what_they_take() {
        for (v, want) in [("TRUE", "true"), ("On", "true"), ("yes", "true"), ("False", "false"), ("0", "false")] {
            let mut s = Scenario::default();
            set_knob(&mut s, "disk.write_cache", v).unwrap_or_else(|e| panic!("{v}: {e}"));
            assert_eq!(get_knob(&s, "disk.write_cache").unwrap(), want, "{v}");
        }
        let e = set_knob(&mut Scenario::default(), "disk.write_cache", "maybe").unwrap_err();
        assert!(e.message.contains("true or false"), "{e}");
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
