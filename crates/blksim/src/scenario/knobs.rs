//! The knob table: every setting a user may change, by its sysfs, procfs or fio name, with
//! its range (`KNOBS`), and `get_knob`/`set_knob`, which the CLI's `--set`, links and the UI share.

use super::*;

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
        help: "the dm device's queue limit (request-based dm; within its paths' disk.max_sectors_kb, which stack onto it when its table is loaded)",
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
    KnobSpec { key: "md.chunk_kb", kind: KnobKind::Int { min: 4, max: 65536, unit: "KiB, a power of two" }, help: "RAID5 chunk size", live: false },
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
        key: "disk.skip_within_track",
        kind: KnobKind::Bool,
        help: "hdd (and a RAID controller's member disks): a sector less than a track ahead is reached without a seek, after the rotation to it, as a drive does (default); off: at least a track-to-track seek, then nearly a revolution (the model before, for comparison). A read within reach of the drive's read-ahead after a read is served by it either way",
        live: false,
    },
    KnobSpec {
        key: "disk.controller_cache",
        kind: KnobKind::Enum(&["in-order", "gathering"]),
        help: "hwraid5: a write joins its stripe's cached entry until the stream passes the stripe, which then goes to disk (in-order, inferred for the 3ware 8506), or any cached writes gather into whole stripes (gathering)",
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
        help: "the elevator, and with it the disks' queue type: noop, deadline and cfq run a legacy request queue (scsi_request_fn); none and mq-deadline make the disks blk-mq as 4.0 has it, with no elevator on them (mq-deadline, 4.11+, sorts only on request-based dm's own queue)",
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
        kind: KnobKind::Enum(&["task", "2.6.2", "2.6.20"]),
        help: "task: per-task plug, bios merge before dispatch (2.6.39+); 2.6.2: a deep device is never held plugged; 2.6.20: an idle queue plugs until 4 requests wait, 3 ms pass or someone unplugs it",
        live: false,
    },
    KnobSpec {
        key: "queue.cfq",
        kind: KnobKind::Enum(&["simple", "2.6.20"]),
        help: "cfq's rules: simple (one request at a time from the active queue's slice, its FIFO looked at once a slice as 2.6.30-2.6.39's cfq_check_fifo does); 2.6.20 (block/cfq-iosched.c of 2.6.20: quanta of 4 onto a sector-sorted dispatch list, and a process thinking longer than slice_idle loses its idle window)",
        live: false,
    },
    KnobSpec {
        key: "queue.generic_tagging",
        kind: KnobKind::Bool,
        help: "the driver uses generic block tagging: init_tag_map caps the depth at 2 x nr_requests",
        live: false,
    },
    KnobSpec {
        key: "queue.batch_hard_limit",
        kind: KnobKind::Bool,
        help: "get_request refuses batchers past 3/2 x nr_requests (\"only allow batching queuers to allocate up to 50% over the defined limit\", ll_rw_blk.c 2.6.13-rc1 on); false: 2.6.2-2.6.12, where a batcher takes its whole batch (2.6.11's get_request has no cap)",
        live: false,
    },
    KnobSpec {
        key: "queue.async_run_cancels_delay",
        kind: KnobKind::Bool,
        help: "blk_run_queue_async cancels a pending blk_delay_queue timer and runs now (\"block: don't delay blk_run_queue_async\", 3.0-rc; inferred absent in 2.6.39-rc, where the run waits for the timer)",
        live: false,
    },
    KnobSpec {
        key: "queue.rq_affinity",
        kind: KnobKind::Int { min: 0, max: 2, unit: "" },
        help: "rq_affinity (__blk_complete_request): 0 complete where the interrupt came in; 1 (QUEUE_FLAG_SAME_COMP, default from 2.6.28) by IPI to the first CPU of the submitter's cache group when the interrupted CPU is in another; 2 (QUEUE_FLAG_SAME_FORCE, 3.1) to the submitting CPU itself",
        live: false,
    },
    KnobSpec {
        key: "iosched.slice_idle",
        kind: KnobKind::Int { min: 0, max: 1000, unit: "ms" },
        help: "cfq (cfq-iosched.c): how long an emptied sync queue waits for its process's next request before the slice ends; 0: never idle (cfq_should_idle)",
        live: true,
    },
    KnobSpec {
        key: "iosched.quantum",
        kind: KnobKind::Int { min: 1, max: 64, unit: "requests" },
        help: "cfq: requests a queue may have at the driver while other queues wait (2.6.20: a queue's dispatch round)",
        live: true,
    },
    KnobSpec {
        key: "iosched.slice_sync",
        kind: KnobKind::Int { min: 1, max: 1000, unit: "ms" },
        help: "cfq: a sync (read, O_DIRECT) queue's time slice",
        live: true,
    },
    KnobSpec {
        key: "iosched.slice_async",
        kind: KnobKind::Int { min: 1, max: 1000, unit: "ms" },
        help: "cfq: the async (writeback) queue's time slice",
        live: true,
    },
    KnobSpec {
        key: "iosched.fifo_expire_sync",
        kind: KnobKind::Int { min: 1, max: 10000, unit: "ms" },
        help: "cfq: a sync request's FIFO expiry",
        live: true,
    },
    KnobSpec {
        key: "iosched.fifo_expire_async",
        kind: KnobKind::Int { min: 1, max: 10000, unit: "ms" },
        help: "cfq: an async request's FIFO expiry",
        live: true,
    },
    KnobSpec {
        key: "iosched.fifo_batch",
        kind: KnobKind::Int { min: 0, max: 1024, unit: "requests" },
        help: "deadline (deadline-iosched.c): requests dispatched in sector order before the FIFO is checked again (0 acts as 1)",
        live: true,
    },
    KnobSpec {
        key: "iosched.read_expire",
        kind: KnobKind::Int { min: 0, max: 60000, unit: "ms" },
        help: "deadline: a read's FIFO expiry",
        live: true,
    },
    KnobSpec {
        key: "iosched.write_expire",
        kind: KnobKind::Int { min: 0, max: 60000, unit: "ms" },
        help: "deadline: a write's FIFO expiry",
        live: true,
    },
    KnobSpec {
        key: "iosched.writes_starved",
        kind: KnobKind::Int { min: 0, max: 1024, unit: "read batches" },
        help: "deadline: read batches chosen over waiting writes before a write batch must go",
        live: true,
    },
    KnobSpec {
        key: "host.can_queue",
        kind: KnobKind::Int { min: 1, max: limits::CAN_QUEUE_MAX as u64, unit: "commands" },
        help: "commands the HBA takes at once",
        live: false,
    },
    KnobSpec {
        key: "host.link_mb_s",
        kind: KnobKind::Int { min: 0, max: 100_000, unit: "MB/s" },
        help: "what the HBA's link moves, the narrowest of its PCIe slot and its SAS port (an LSI SAS2008 behind an expander's x4 SAS 2.0 wide port: 2400); completions wait for it; 0: unbounded",
        live: false,
    },
    KnobSpec {
        key: "host.nr_hw_queues",
        kind: KnobKind::Int { min: 1, max: 16, unit: "hardware queues per LUN" },
        help: "blk-mq hardware queues per LUN, each with can_queue tags (ib_srp ch_count, 3.19+); the CPUs are split evenly among them",
        live: false,
    },
    KnobSpec {
        key: "host.irq_per_hw_queue",
        kind: KnobKind::Bool,
        help: "each blk-mq hardware queue's completions interrupt the first of its CPUs (ib_srp 3.19+: channel i's own completion queue on vector i, reaped until empty per interrupt; the vector's CPU is inferred); false: all interrupt the HBA's CPU (cpu.irq_cpus)",
        live: false,
    },
    KnobSpec {
        key: "blk_mq.rerun_after_splice",
        kind: KnobKind::Bool,
        help: "run a hardware queue again after splicing a BUSY run's leftovers onto hctx->dispatch (9ba52e5812e5, v4.1; v4.0: false)",
        live: false,
    },
    KnobSpec {
        key: "dm.polling_interval",
        kind: KnobKind::Int { min: 0, max: 3600, unit: "s; 0: no multipathd" },
        help: "multipathd's path checker: one read per path, first after this, doubling after each good check up to 4x (multipath.conf polling_interval)",
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
        help: "the box's memory: the page cache holds it, less md's stripe cache (its pages are the kernel's)",
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
        key: "vm.bdi_dirty_limit",
        kind: KnobKind::Enum(&["equal", "writeout"]),
        help: "equal: the dirty limit split equally among the devices written to; writeout: each device's share of recent page writeout (bdi_dirty_limit, 2.6.24-3.1)",
        live: false,
    },
    KnobSpec {
        key: "vm.readahead",
        kind: KnobKind::Enum(&["ondemand", "2.6.20"]),
        help: "ondemand: read_ahead_kb windows, the next started at the newest (2.6.23+); 2.6.20: current and ahead windows growing to read_ahead_kb, the ahead one dropped while the device is read-congested",
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
        key: "cpu.sockets",
        kind: KnobKind::Int { min: 1, max: limits::CORES_MAX as u64, unit: "sockets" },
        help: "CPU sockets (cache groups), the cores split evenly: rq_affinity completes a request on the first core of its submitter's socket (blk_cpu_to_group, CONFIG_SCHED_MC)",
        live: false,
    },
    KnobSpec {
        key: "cpu.irq_cpus",
        kind: KnobKind::Cpus,
        help: "the CPU each HBA's interrupt goes to (/proc/irq/N/smp_affinity), where its completion softirq runs",
        live: false,
    },
    KnobSpec {
        key: "cpu.kblockd_highpri",
        kind: KnobKind::Bool,
        help: "kblockd's workers run at nice -20 (WQ_HIGHPRI, 4.0 blk_dev_init) and preempt the thread running on their CPU when woken; false: a woken kblockd worker waits for that thread's slice (the 2.6 lessons)",
        live: false,
    },
    KnobSpec {
        key: "cpu.scheduler",
        kind: KnobKind::Enum(&["fifo", "fair"]),
        help: "fifo: run queues in wake order, a thread keeps its CPU for its slice; fair: CFS as 2.6.39 runs it, least vruntime first, and a woken sleeper preempts a thread that has run a wakeup granularity longer",
        live: false,
    },
    KnobSpec {
        key: "cpu.load_balance",
        kind: KnobKind::Enum(&["off", "2.6.32"]),
        help: "off: a thread changes CPU only when it wakes; 2.6.32: CFS's load balancer (kernel/sched.c 2.6.32.69): every tick rebalance_domains over the MC (socket) and NODE domains pulls runnable, cache-cold threads from the busiest CPU (find_busiest_group, task_hot 0.5 ms), and a CPU going idle pulls one sooner (idle_balance)",
        live: false,
    },
    KnobSpec {
        key: "cpu.wake_idle",
        kind: KnobKind::Enum(&["no-work", "idle_cpu"]),
        help: "which CPU a woken thread takes as idle (select_idle_sibling): no-work: one running nothing, interrupt and softirq work included (blkviz's first rule, no kernel's; the lessons keep it and their scoreboard caveats say what rests on it); idle_cpu: the kernel's idle_cpu() (the idle task current, none queued), so a CPU reaping completions on its idle task is idle and the woken thread stays there",
        live: false,
    },
    KnobSpec { key: "duration", kind: KnobKind::Seconds { min: limits::DURATION_S_MIN, max: limits::DURATION_S_MAX }, help: "simulated seconds to run: the run stops there, in the page as in blksim run (fio's runtime); in the page, an end past the clock applies live, one before it restarts the run", live: true },
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
        "disk.skip_within_track" => s.disk.skip_within_track.to_string(),
        "disk.controller_cache" => name(&s.disk.controller_cache),
        "queue.nr_requests" => s.queue.nr_requests.to_string(),
        "queue.depth" => s.queue.depth.to_string(),
        "queue.scheduler" => name(&s.queue.scheduler),
        "queue.read_ahead_kb" => s.queue.read_ahead_kb.to_string(),
        "queue.max_segments" => s.queue.max_segments.to_string(),
        "queue.plugging" => name(&s.queue.plugging),
        "queue.cfq" => name(&s.queue.cfq),
        "queue.generic_tagging" => s.queue.generic_tagging.to_string(),
        "queue.batch_hard_limit" => s.queue.batch_hard_limit.to_string(),
        "queue.async_run_cancels_delay" => s.queue.async_run_cancels_delay.to_string(),
        "queue.rq_affinity" => s.queue.rq_affinity.to_string(),
        "iosched.slice_idle" => s.queue.iosched.slice_idle.to_string(),
        "iosched.quantum" => s.queue.iosched.quantum.to_string(),
        "iosched.slice_sync" => s.queue.iosched.slice_sync.to_string(),
        "iosched.slice_async" => s.queue.iosched.slice_async.to_string(),
        "iosched.fifo_expire_sync" => s.queue.iosched.fifo_expire_sync.to_string(),
        "iosched.fifo_expire_async" => s.queue.iosched.fifo_expire_async.to_string(),
        "iosched.fifo_batch" => s.queue.iosched.fifo_batch.to_string(),
        "iosched.read_expire" => s.queue.iosched.read_expire.to_string(),
        "iosched.write_expire" => s.queue.iosched.write_expire.to_string(),
        "iosched.writes_starved" => s.queue.iosched.writes_starved.to_string(),
        "host.link_mb_s" => s.host.link_mb_s.to_string(),
        "host.can_queue" => s.host.can_queue.to_string(),
        "host.nr_hw_queues" => s.host.nr_hw_queues.to_string(),
        "host.irq_per_hw_queue" => s.host.irq_per_hw_queue.to_string(),
        "blk_mq.rerun_after_splice" => s.blk_mq.rerun_after_splice.to_string(),
        "dm.polling_interval" => s.dm.polling_interval.to_string(),
        "scsi.run_queue" => name(&s.scsi.run_queue),
        "vm.mem_mb" => s.vm.mem_mb.to_string(),
        "vm.dirty_ratio" => s.vm.dirty_ratio.to_string(),
        "vm.dirty_background_ratio" => s.vm.dirty_background_ratio.to_string(),
        "vm.writeback" => name(&s.vm.writeback),
        "vm.readahead" => name(&s.vm.readahead),
        "vm.bdi_dirty_limit" => name(&s.vm.bdi_dirty_limit),
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
        "cpu.sockets" => s.cpu.sockets.to_string(),
        "cpu.irq_cpus" => s.cpu.irq_cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        "cpu.kblockd_highpri" => s.cpu.kblockd_highpri.to_string(),
        "cpu.scheduler" => name(&s.cpu.scheduler),
        "cpu.load_balance" => name(&s.cpu.load_balance),
        "cpu.wake_idle" => name(&s.cpu.wake_idle),
        "duration" => format!("{}", s.duration_s),
        _ => return None,
    })
}

/// Knobs a mistyped key may have meant, as " (did you mean queue.nr_requests?)", or "": the
/// kernel's and fio's own names (`nr_requests`, `queue_depth`, `read_ahead_kb`, `iodepth`)
/// and near spellings (`raid.chunk`) lead to blkviz's, compared without case, '.', '_' or '-'.
pub fn did_you_mean(key: &str) -> String {
    let norm = |s: &str| s.chars().filter(|c| !matches!(c, '.' | '_' | '-')).flat_map(char::to_lowercase).collect::<String>();
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

/// Sets one knob from its text form, checking the value against the knob's allowed range.
pub fn set_knob(s: &mut Scenario, key: &str, value: &str) -> Result<(), ScenarioError> {
    let spec = knob_spec(key).ok_or_else(|| {
        let keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
        // The key as given may be anything (a link's, a job file's): quoted clipped, as values
        // are, and an empty one shown as '' so that the message still names it.
        let (field, what) =
            if key.trim().is_empty() { (format!("'{}'", clip(key)), "an empty knob name") } else { (clip(key), "unknown knob") };
        ScenarioError::new(field, format!("{what}{}; allowed knobs are {}", did_you_mean(key), keys.join(", ")))
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
        // Any case, as sysfs-minded users type it (TRUE, On).
        match value.trim().to_ascii_lowercase().as_str() {
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
        "disk.skip_within_track" => s.disk.skip_within_track = boolean()?,
        "disk.controller_cache" => s.disk.controller_cache = enumerated(value, bad)?,
        "queue.nr_requests" => s.queue.nr_requests = int()? as u32,
        "queue.depth" => s.queue.depth = int()? as u32,
        "queue.scheduler" => s.queue.scheduler = enumerated(value, bad)?,
        "queue.read_ahead_kb" => s.queue.read_ahead_kb = int()? as u32,
        "queue.max_segments" => s.queue.max_segments = int()? as u32,
        "queue.plugging" => s.queue.plugging = enumerated(value, bad)?,
        "queue.cfq" => s.queue.cfq = enumerated(value, bad)?,
        "queue.generic_tagging" => s.queue.generic_tagging = boolean()?,
        "queue.batch_hard_limit" => s.queue.batch_hard_limit = boolean()?,
        "queue.async_run_cancels_delay" => s.queue.async_run_cancels_delay = boolean()?,
        // Before 2.6.32's sysfs value 2 existed it was a boolean: true and false still read.
        "queue.rq_affinity" => {
            s.queue.rq_affinity = match value.trim() {
                "true" => 1,
                "false" => 0,
                _ => int()? as u8,
            }
        }
        "iosched.slice_idle" => s.queue.iosched.slice_idle = int()? as u32,
        "iosched.quantum" => s.queue.iosched.quantum = int()? as u32,
        "iosched.slice_sync" => s.queue.iosched.slice_sync = int()? as u32,
        "iosched.slice_async" => s.queue.iosched.slice_async = int()? as u32,
        "iosched.fifo_expire_sync" => s.queue.iosched.fifo_expire_sync = int()? as u32,
        "iosched.fifo_expire_async" => s.queue.iosched.fifo_expire_async = int()? as u32,
        "iosched.fifo_batch" => s.queue.iosched.fifo_batch = int()? as u32,
        "iosched.read_expire" => s.queue.iosched.read_expire = int()? as u32,
        "iosched.write_expire" => s.queue.iosched.write_expire = int()? as u32,
        "iosched.writes_starved" => s.queue.iosched.writes_starved = int()? as u32,
        "host.link_mb_s" => s.host.link_mb_s = int()? as u32,
        "host.can_queue" => s.host.can_queue = int()? as u32,
        "host.nr_hw_queues" => s.host.nr_hw_queues = int()? as u32,
        "host.irq_per_hw_queue" => s.host.irq_per_hw_queue = boolean()?,
        "blk_mq.rerun_after_splice" => s.blk_mq.rerun_after_splice = boolean()?,
        "dm.polling_interval" => s.dm.polling_interval = int()? as u32,
        "scsi.run_queue" => s.scsi.run_queue = enumerated(value, bad)?,
        "vm.mem_mb" => s.vm.mem_mb = int()? as u32,
        "vm.dirty_ratio" => s.vm.dirty_ratio = int()? as u32,
        "vm.dirty_background_ratio" => s.vm.dirty_background_ratio = int()? as u32,
        "vm.writeback" => s.vm.writeback = enumerated(value, bad)?,
        "vm.readahead" => s.vm.readahead = enumerated(value, bad)?,
        "vm.bdi_dirty_limit" => s.vm.bdi_dirty_limit = enumerated(value, bad)?,
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
        "cpu.sockets" => s.cpu.sockets = int()? as u32,
        "cpu.kblockd_highpri" => s.cpu.kblockd_highpri = boolean()?,
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
        "cpu.scheduler" => s.cpu.scheduler = enumerated(value, bad)?,
        "cpu.load_balance" => s.cpu.load_balance = enumerated(value, bad)?,
        "cpu.wake_idle" => s.cpu.wake_idle = enumerated(value, bad)?,
        "duration" => {
            let v: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(limits::DURATION_S_MIN..=limits::DURATION_S_MAX).contains(&v) {
                return Err(bad());
            }
            s.duration_s = v;
        }
        _ => unreachable!("knob {key} is listed in KNOBS but not handled"),
    }
    Ok(())
}
