//! Device models behind the leaf block devices: a 7200 rpm HDD, a SATA SSD, a RAM-backed LUN
//! and a hardware RAID5 controller over HDDs (`hwraid5`).
//! Which hardware a lesson has is a device model, never a lesson constant.

use crate::calib::*;
use crate::hwraid5::HwRaid5;
use crate::ids::ReqId;
use crate::rng::Stream;
use crate::scenario::{ControllerCache, DiskKind};
use crate::time::{SimTime, NS_PER_S};
use std::collections::VecDeque;

/// A command as the drive sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub req: ReqId,
    pub sector: u64,
    pub bytes: u64,
    pub write: bool,
    /// When the drive received it (for the drive's own aging of queued commands).
    pub queued_at: SimTime,
}

#[derive(Debug)]
enum Model {
    Hdd(Hdd),
    Ssd(Ssd),
    HwRaid5(Box<HwRaid5>),
}

/// The slot a hardware RAID controller's stripe operation completes on: not a host command.
pub const ENGINE_SLOT: u16 = u16::MAX;

/// A single-actuator disk: one command at the interface at a time, in arrival order, and one
/// media timeline. With the write cache on (WCE=1, the SATA default), a write completes when
/// its data is in the cache, and the drive destages it to the media in arrival order; a read
/// waits for the media. (NCQ/TCQ reordering inside the drive is the single-queue issue's work.)
#[derive(Debug)]
pub(crate) struct Hdd {
    /// Rotational phase at time 0: spindles are not synchronised, so each disk starts at its
    /// own angle (drawn from the disk's random stream).
    phase_ns: u64,
    /// Where the head will be when the media timeline is done: the sector after the last one.
    head_sector: u64,
    /// The media is busy (reading, or destaging cached writes) until then.
    media_free_at: SimTime,
    /// The drive's read-ahead continues from here after a read.
    readahead_from: Option<u64>,
    /// What the drive's buffer holds: the sector ranges it last read or was given to write,
    /// oldest first, at most `HDD_BUFFER_BYTES` of them. A read inside one is a cache hit.
    buffered: VecDeque<(u64, u64)>,
    buffered_sectors: u64,
    write_cache: bool,
    /// Cached writes not yet on the media: (time destaged, bytes), in destage order.
    dirty: VecDeque<(SimTime, u64)>,
    dirty_bytes: u64,
}

impl Hdd {
    pub(crate) fn new(write_cache: bool, rng: &mut Stream) -> Hdd {
        Hdd {
            phase_ns: rng.below(HDD_REVOLUTION_NS),
            head_sector: 0,
            media_free_at: SimTime::ZERO,
            readahead_from: None,
            buffered: VecDeque::new(),
            buffered_sectors: 0,
            write_cache,
            dirty: VecDeque::new(),
            dirty_bytes: 0,
        }
    }

    pub(crate) fn head_sector(&self) -> u64 {
        self.head_sector
    }

    fn in_buffer(&self, start: u64, end: u64) -> bool {
        self.buffered.iter().any(|&(a, b)| a <= start && end <= b)
    }

    /// Remembers a range the drive read or took to write (extending the newest range when it
    /// continues it), forgetting the oldest beyond the buffer's size.
    fn remember(&mut self, start: u64, end: u64) {
        match self.buffered.back_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => self.buffered.push_back((start, end)),
        }
        self.buffered_sectors += end - start;
        while self.buffered_sectors > HDD_BUFFER_BYTES / 512 {
            let (a, b) = self.buffered.front_mut().expect("over the size, so not empty");
            let drop = (self.buffered_sectors - HDD_BUFFER_BYTES / 512).min(*b - *a);
            *a += drop;
            self.buffered_sectors -= drop;
            if a == b {
                self.buffered.pop_front();
            }
        }
    }
}

/// A flash or RAM device: a fixed latency per command, then a shared transfer path.
#[derive(Debug)]
struct Ssd {
    /// The shared transfer path is busy until then.
    pipe_free_at: SimTime,
    read_ns: u64,
    write_ns: u64,
    read_rate: u64,
    write_rate: u64,
}

/// A disk: its model, its internal queue and its command slots.
#[derive(Debug)]
pub struct Disk {
    model: Model,
    queue: VecDeque<Cmd>,
    slots: Vec<Option<Cmd>>,
    capacity_sectors: u64,
    /// Time with at least one command in the drive.
    busy_ns_total: u64,
    busy_since: Option<SimTime>,
}

/// A device model's capacity, without building it.
pub fn capacity_sectors(kind: DiskKind) -> u64 {
    match kind {
        DiskKind::Hdd => HDD_CAPACITY_SECTORS,
        DiskKind::Ssd => SSD_CAPACITY_SECTORS,
        DiskKind::Ramlun => RAMLUN_CAPACITY_SECTORS,
        DiskKind::Hwraid5 => HDD_CAPACITY_SECTORS / HWRAID5_CHUNK_SECTORS * HWRAID5_CHUNK_SECTORS * (HWRAID5_MEMBERS as u64 - 1),
    }
}

impl Disk {
    pub fn new(kind: DiskKind, write_cache: bool, controller_cache: ControllerCache, rng: &mut Stream) -> Disk {
        let flash = |read_ns, write_ns, read_rate, write_rate| {
            Model::Ssd(Ssd { pipe_free_at: SimTime::ZERO, read_ns, write_ns, read_rate, write_rate })
        };
        let (model, slots, capacity_sectors) = match kind {
            DiskKind::Ssd => {
                (flash(SSD_READ_NS, SSD_WRITE_NS, SSD_READ_BYTES_PER_S, SSD_WRITE_BYTES_PER_S), SSD_CHANNELS, SSD_CAPACITY_SECTORS)
            }
            DiskKind::Ramlun => {
                (flash(RAMLUN_COMMAND_NS, RAMLUN_COMMAND_NS, RAMLUN_BYTES_PER_S, RAMLUN_BYTES_PER_S), RAMLUN_SLOTS, RAMLUN_CAPACITY_SECTORS)
            }
            DiskKind::Hdd => (Model::Hdd(Hdd::new(write_cache, rng)), 1, HDD_CAPACITY_SECTORS),
            DiskKind::Hwraid5 => {
                let c = HwRaid5::new(HWRAID5_MEMBERS, write_cache, controller_cache, rng);
                let capacity = c.capacity_sectors();
                // As many host commands as the SCSI layer may send it (tagged queueing).
                (Model::HwRaid5(Box::new(c)), crate::scenario::limits::QUEUE_DEPTH_MAX, capacity)
            }
        };
        Disk { model, queue: VecDeque::new(), slots: vec![None; slots as usize], capacity_sectors, busy_ns_total: 0, busy_since: None }
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    /// Commands queued inside the drive plus those on the media.
    pub fn outstanding(&self) -> usize {
        self.queue.len() + self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Where the head is, as a fraction of the stroke (0 = outer edge). SSDs report 0.
    pub fn head_position(&self) -> f64 {
        match &self.model {
            Model::Hdd(h) => h.head_sector as f64 / self.capacity_sectors as f64,
            Model::Ssd(_) => 0.0,
            Model::HwRaid5(c) => c.head_position(),
        }
    }

    pub fn check_invariants(&self) {
        if let Model::HwRaid5(c) = &self.model {
            c.check_invariants();
        }
    }

    /// A hardware RAID controller's stripe operations so far (None for other devices).
    pub fn stripe_ops(&self) -> Option<crate::hwraid5::StripeOps> {
        match &self.model {
            Model::HwRaid5(c) => Some(c.ops),
            _ => None,
        }
    }

    /// Takes a command. Pushes the (slot, completion time) of what starts now onto `started`.
    pub fn submit(&mut self, now: SimTime, cmd: Cmd, started: &mut Vec<(u16, SimTime)>) {
        assert!(cmd.sector + cmd.bytes / 512 <= self.capacity_sectors, "command beyond the end of the disk");
        self.queue.push_back(cmd);
        self.start(now, true, started);
    }

    /// The command in `slot` finished (None: it was a RAID controller's stripe operation).
    /// Pushes what starts next onto `started`.
    pub fn complete(&mut self, now: SimTime, slot: u16, started: &mut Vec<(u16, SimTime)>) -> Option<Cmd> {
        let cmd = if slot == ENGINE_SLOT {
            let Model::HwRaid5(c) = &mut self.model else { unreachable!("a stripe operation on a plain disk") };
            c.destage_done();
            None
        } else {
            Some(self.slots[slot as usize].take().expect("completion for an empty slot"))
        };
        let engine_busy = matches!(&self.model, Model::HwRaid5(c) if c.destaging());
        if !engine_busy && self.slots.iter().all(|s| s.is_none()) {
            if let Some(since) = self.busy_since.take() {
                self.busy_ns_total += now - since;
            }
        }
        self.start(now, false, started);
        cmd
    }

    fn start(&mut self, now: SimTime, arrived_idle: bool, started: &mut Vec<(u16, SimTime)>) {
        let before = started.len();
        if let Model::HwRaid5(_) = self.model {
            self.start_raid(now, started);
        } else if let Some(s) = self.start_next(now, arrived_idle) {
            started.push(s);
        }
        if started.len() > before && self.busy_since.is_none() {
            self.busy_since = Some(now);
        }
    }

    /// The RAID controller takes host commands in arrival order (writes into its cache while
    /// they fit, reads to the members), then starts a stripe operation if it has one to do.
    fn start_raid(&mut self, now: SimTime, started: &mut Vec<(u16, SimTime)>) {
        let Model::HwRaid5(c) = &mut self.model else { unreachable!("not a RAID controller") };
        while let Some(front) = self.queue.front() {
            let Some(slot) = self.slots.iter().position(|s| s.is_none()) else { break };
            let done = if front.write {
                if !c.fits(front.bytes / 512) {
                    break;
                }
                c.accept_write(now, front)
            } else {
                c.read(now, front)
            };
            self.slots[slot] = self.queue.pop_front();
            started.push((slot as u16, done));
        }
        if !c.destaging() {
            let pressed = self.queue.front().is_some_and(|f| f.write);
            if let Some(end) = c.start_destage(now, pressed) {
                started.push((ENGINE_SLOT, end));
            }
        }
    }

    fn start_next(&mut self, now: SimTime, arrived_idle: bool) -> Option<(u16, SimTime)> {
        let slot = self.slots.iter().position(|s| s.is_none())?;
        let pick = match &self.model {
            Model::Hdd(h) => hdd_pick(h, &self.queue, now, self.capacity_sectors)?,
            Model::Ssd(_) => 0,
            Model::HwRaid5(_) => unreachable!("the RAID controller starts commands in start_raid"),
        };
        let cmd = self.queue.remove(pick)?;
        let done = match &mut self.model {
            Model::Hdd(h) => now + hdd_service_ns(h, now, &cmd, arrived_idle, self.capacity_sectors),
            Model::Ssd(s) => {
                let (lat, rate) = if cmd.write { (s.write_ns, s.write_rate) } else { (s.read_ns, s.read_rate) };
                let start = (now + lat).max(s.pipe_free_at);
                s.pipe_free_at = start + transfer_ns(cmd.bytes, rate);
                s.pipe_free_at
            }
            Model::HwRaid5(_) => unreachable!("the RAID controller starts commands in start_raid"),
        };
        self.slots[slot] = Some(cmd);
        Some((slot as u16, done))
    }
}

pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    (bytes as u128 * NS_PER_S as u128 / bytes_per_s as u128) as u64
}

/// Zoned recording: the media rate falls linearly from the outer to the inner edge.
fn media_rate(sector: u64, capacity: u64) -> u64 {
    let span = HDD_MEDIA_OUTER_BYTES_PER_S - HDD_MEDIA_INNER_BYTES_PER_S;
    HDD_MEDIA_OUTER_BYTES_PER_S - (span as u128 * sector as u128 / capacity as u128) as u64
}

/// Seek time over `distance` sectors: √distance up to a third of the stroke (from track-to-track
/// to the average seek), then linear to the full stroke.
pub fn seek_ns(distance: u64, capacity: u64) -> u64 {
    if distance == 0 {
        return 0;
    }
    let x = distance as f64 / capacity as f64;
    let third = 1.0 / 3.0;
    let t = if x <= third {
        HDD_SEEK_TRACK_NS as f64 + (HDD_SEEK_AVG_NS - HDD_SEEK_TRACK_NS) as f64 * (x / third).sqrt()
    } else {
        HDD_SEEK_AVG_NS as f64 + (HDD_SEEK_FULL_NS - HDD_SEEK_AVG_NS) as f64 * (x - third) / (1.0 - third)
    };
    t as u64
}

/// NCQ/TCQ inside the drive: of the commands queued in it, start the one the head reaches
/// soonest (shortest positioning time first). Writes the write cache absorbs need no
/// positioning and go first, in order. A command queued longer than `HDD_NCQ_AGE_MAX_NS` goes
/// next regardless, as drive firmware ages requests to bound starvation.
fn hdd_pick(h: &Hdd, queue: &VecDeque<Cmd>, now: SimTime, capacity: u64) -> Option<usize> {
    if queue.is_empty() {
        return None;
    }
    if let Some(old) = queue.iter().position(|c| now - c.queued_at > HDD_NCQ_AGE_MAX_NS) {
        return Some(old);
    }
    let start = now.max(h.media_free_at);
    let cost = |c: &Cmd| if c.write && h.write_cache { 0 } else { hdd_position_ns(h, start, c.sector, capacity) };
    // min_by_key keeps the first of equal keys: ties go to the oldest command.
    queue.iter().enumerate().min_by_key(|(_, c)| cost(c)).map(|(i, _)| i)
}

/// Positioning from the head's position to `sector`, starting at `start`: seek, then wait
/// for the sector to come round. A transfer that continues one that just ended pays neither.
fn hdd_position_ns(h: &Hdd, start: SimTime, sector: u64, capacity: u64) -> u64 {
    let distance = h.head_sector.abs_diff(sector);
    if distance == 0 && start == h.media_free_at {
        return 0;
    }
    let seek = seek_ns(distance, capacity);
    let rev = HDD_REVOLUTION_NS;
    let sectors_per_track = (media_rate(sector, capacity) * rev / NS_PER_S / 512).max(1);
    let target_ns = (sector % sectors_per_track) * rev / sectors_per_track;
    let head_ns = ((start + seek).ns() + h.phase_ns) % rev;
    seek + (target_ns + rev - head_ns) % rev
}

/// Returns how long the command takes at the interface, from `now`.
pub(crate) fn hdd_service_ns(h: &mut Hdd, now: SimTime, cmd: &Cmd, arrived_idle: bool, capacity: u64) -> u64 {
    let rate = media_rate(cmd.sector, capacity);
    let overhead = if arrived_idle { HDD_COMMAND_OVERHEAD_NS } else { 0 };
    let end = cmd.sector + cmd.bytes / 512;
    let ready = now + overhead;
    // A read of data still in the drive's buffer (just written, or just read) comes from it.
    if !cmd.write && h.in_buffer(cmd.sector, end) {
        return overhead + transfer_ns(cmd.bytes, SATA_LINK_BYTES_PER_S);
    }
    h.remember(cmd.sector, end);
    // Cached writes whose destage has finished free their cache space.
    while h.dirty.front().is_some_and(|&(t, _)| t <= ready) {
        let (_, b) = h.dirty.pop_front().expect("front");
        h.dirty_bytes -= b;
    }
    if cmd.write && h.write_cache {
        // Destage after whatever the media is doing; the command waits only for cache space.
        let start = ready.max(h.media_free_at);
        let destaged = start + hdd_position_ns(h, start, cmd.sector, capacity) + transfer_ns(cmd.bytes, rate);
        let mut space_at = ready;
        let mut free = HDD_WRITE_CACHE_BYTES - h.dirty_bytes;
        for &(t, b) in &h.dirty {
            if free >= cmd.bytes {
                break;
            }
            free += b;
            space_at = t;
        }
        h.dirty.push_back((destaged, cmd.bytes));
        h.dirty_bytes += cmd.bytes;
        h.media_free_at = destaged;
        h.head_sector = end;
        h.readahead_from = None;
        return (space_at - now) + transfer_ns(cmd.bytes, SATA_LINK_BYTES_PER_S);
    }
    let start = ready.max(h.media_free_at);
    // A read that continues where the last read ended finds part of its data in the drive's
    // read-ahead segment, filled at media rate while the media was idle.
    let done = if !cmd.write && h.readahead_from == Some(cmd.sector) {
        let idle_ns = start - h.media_free_at;
        let prefetched = ((idle_ns as u128 * rate as u128 / NS_PER_S as u128) as u64).min(HDD_READAHEAD_SEGMENT_BYTES).min(cmd.bytes);
        start + transfer_ns(prefetched, SATA_LINK_BYTES_PER_S) + transfer_ns(cmd.bytes - prefetched, rate)
    } else {
        start + hdd_position_ns(h, start, cmd.sector, capacity) + transfer_ns(cmd.bytes, rate)
    };
    h.media_free_at = done;
    h.head_sector = end;
    h.readahead_from = if cmd.write { None } else { Some(end) };
    done - now
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    /// Submits to an idle disk: the command starts at once.
    fn submit_one(d: &mut Disk, now: SimTime, cmd: Cmd) -> (u16, SimTime) {
        let mut started = Vec::new();
        d.submit(now, cmd, &mut started);
        assert_eq!(started.len(), 1);
        started[0]
    }

    #[test]
    fn the_seek_curve_passes_through_its_three_points() {
        let c = HDD_CAPACITY_SECTORS;
        assert_eq!(seek_ns(0, c), 0);
        assert!((seek_ns(1, c) as i64 - HDD_SEEK_TRACK_NS as i64).abs() < 10_000);
        assert!((seek_ns(c / 3, c) as i64 - HDD_SEEK_AVG_NS as i64).abs() < 10_000);
        assert!((seek_ns(c, c) as i64 - HDD_SEEK_FULL_NS as i64).abs() < 10_000);
        // Monotonic.
        let mut last = 0;
        for i in 1..100 {
            let s = seek_ns(c / 100 * i, c);
            assert!(s >= last);
            last = s;
        }
    }

    #[test]
    fn sequential_reads_stream_at_media_rate_and_random_reads_pay_seek_and_rotation() {
        let mut rng = Stream::new(1, 1);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
        let mut started = Vec::new();
        let mut now = SimTime::ZERO;
        let mb = 1 << 20;
        // 64 back-to-back 1 MiB sequential reads, each submitted 20 µs after the last completes.
        for i in 0..64u64 {
            let (slot, done) = submit_one(d, now, Cmd { req: ReqId(0), sector: i * 2048, bytes: mb, write: false, queued_at: now });
            d.complete(done, slot, &mut started);
            assert!(started.is_empty());
            now = done + 20_000;
        }
        let mb_s = 64.0 * mb as f64 / now.as_secs_f64() / 1e6;
        assert!(mb_s > 110.0 && mb_s < 135.0, "sequential {mb_s} MB/s");
        // Random 4 KiB reads: seek + half a revolution on average, ~80-130 IOPS.
        let mut rng = Stream::new(2, 2);
        let start = now;
        for _ in 0..200 {
            let sector = rng.below(HDD_CAPACITY_SECTORS / 8 - 8) * 8;
            let (slot, done) = submit_one(d, now, Cmd { req: ReqId(0), sector, bytes: 4096, write: false, queued_at: now });
            d.complete(done, slot, &mut started);
            now = done;
        }
        let iops = 200.0 / (now - start) as f64 * 1e9;
        assert!(iops > 60.0 && iops < 130.0, "random {iops} IOPS");
        assert!(now - start > 200 * 5 * NS_PER_MS);
    }

    #[test]
    fn a_read_of_what_the_drive_just_wrote_comes_from_its_buffer() {
        let mut rng = Stream::new(4, 4);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
        let mut started = Vec::new();
        let w = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: true, queued_at: SimTime::ZERO };
        let (slot, done) = submit_one(d, SimTime::ZERO, w);
        d.complete(done, slot, &mut started);
        // Part of the written range: no positioning, link speed.
        let r = Cmd { req: ReqId(0), sector: (1 << 20) + 8, bytes: 4096, write: false, queued_at: done };
        let (slot, hit) = submit_one(d, done, r);
        d.complete(hit, slot, &mut started);
        assert!(hit - done < 200 * crate::time::NS_PER_US, "hit took {} ns", hit - done);
        // Elsewhere: seek and rotation.
        let r = Cmd { req: ReqId(0), sector: 1 << 28, bytes: 4096, write: false, queued_at: hit };
        let (_, miss) = submit_one(d, hit, r);
        assert!(miss - hit > NS_PER_MS, "miss took {} ns", miss - hit);
    }

    #[test]
    fn the_write_cache_absorbs_writes_until_it_is_full_then_runs_at_media_rate() {
        let mut rng = Stream::new(3, 3);
        let mut cached = Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
        let mut rng = Stream::new(3, 3);
        let mut uncached = Disk::new(DiskKind::Hdd, false, ControllerCache::InOrder, &mut rng);
        let mut times = Vec::new();
        let mut started = Vec::new();
        for d in [&mut cached, &mut uncached] {
            let mut now = SimTime::ZERO;
            let mut first_cache_full = None;
            for i in 0..400u64 {
                let (slot, done) =
                    submit_one(d, now, Cmd { req: ReqId(0), sector: i * 1024, bytes: 512 * 1024, write: true, queued_at: now });
                if done - now > 3 * NS_PER_MS && first_cache_full.is_none() {
                    first_cache_full = Some(i);
                }
                d.complete(done, slot, &mut started);
                now = done + 20_000;
            }
            times.push((now, first_cache_full));
        }
        let mb_s = |t: SimTime| 400.0 * 0.5 * 1.048576 / t.as_secs_f64();
        // With the cache: the first writes go at link speed, then the media rate (~125 MB/s) rules.
        assert!(times[0].1.unwrap() >= HDD_WRITE_CACHE_BYTES / (512 * 1024) - 2);
        assert!(mb_s(times[0].0) > 110.0 && mb_s(times[0].0) < 140.0, "cached {}", mb_s(times[0].0));
        // Without it, each write that arrives after the last finished misses the sector: one
        // revolution lost per command.
        assert!(mb_s(times[1].0) < 60.0, "uncached {}", mb_s(times[1].0));
    }
}
