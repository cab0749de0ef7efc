//! Device models behind the leaf block devices: a 7200 rpm HDD and a SATA SSD.
//! Which hardware a lesson has is a device model, never a lesson constant.

use crate::calib::*;
use crate::ids::ReqId;
use crate::rng::Stream;
use crate::scenario::DiskKind;
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
}

/// A single-actuator disk: one command at the interface at a time, in arrival order, and one
/// media timeline. With the write cache on (WCE=1, the SATA default), a write completes when
/// its data is in the cache, and the drive destages it to the media in arrival order; a read
/// waits for the media. (NCQ/TCQ reordering inside the drive is the single-queue issue's work.)
#[derive(Debug)]
struct Hdd {
    /// Rotational phase at time 0: spindles are not synchronised, so each disk starts at its
    /// own angle (drawn from the disk's random stream).
    phase_ns: u64,
    /// Where the head will be when the media timeline is done: the sector after the last one.
    head_sector: u64,
    /// The media is busy (reading, or destaging cached writes) until then.
    media_free_at: SimTime,
    /// The drive's read-ahead continues from here after a read.
    readahead_from: Option<u64>,
    write_cache: bool,
    /// Cached writes not yet on the media: (time destaged, bytes), in destage order.
    dirty: VecDeque<(SimTime, u64)>,
    dirty_bytes: u64,
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

impl Disk {
    pub fn new(kind: DiskKind, write_cache: bool, rng: &mut Stream) -> Disk {
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
            // A hardware RAID5 controller is not modelled yet: it runs as a plain HDD (reported
            // as a model gap).
            DiskKind::Hdd | DiskKind::Hwraid5 => (
                Model::Hdd(Hdd {
                    phase_ns: rng.below(HDD_REVOLUTION_NS),
                    head_sector: 0,
                    media_free_at: SimTime::ZERO,
                    readahead_from: None,
                    write_cache,
                    dirty: VecDeque::new(),
                    dirty_bytes: 0,
                }),
                1,
                HDD_CAPACITY_SECTORS,
            ),
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
        }
    }

    /// Takes a command. Returns the (slot, completion time) of a command that starts now.
    pub fn submit(&mut self, now: SimTime, cmd: Cmd) -> Option<(u16, SimTime)> {
        assert!(cmd.sector + cmd.bytes / 512 <= self.capacity_sectors, "command beyond the end of the disk");
        self.queue.push_back(cmd);
        self.start_next(now, true)
    }

    /// The media finished the command in `slot`. Returns it, and the next command started, if any.
    pub fn complete(&mut self, now: SimTime, slot: u16) -> (Cmd, Option<(u16, SimTime)>) {
        let cmd = self.slots[slot as usize].take().expect("completion for an empty slot");
        if self.slots.iter().all(|s| s.is_none()) {
            if let Some(since) = self.busy_since.take() {
                self.busy_ns_total += now - since;
            }
        }
        let next = self.start_next(now, false);
        (cmd, next)
    }

    fn start_next(&mut self, now: SimTime, arrived_idle: bool) -> Option<(u16, SimTime)> {
        let slot = self.slots.iter().position(|s| s.is_none())?;
        let pick = match &self.model {
            Model::Hdd(h) => hdd_pick(h, &self.queue, now, self.capacity_sectors)?,
            Model::Ssd(_) => 0,
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
        };
        if self.busy_since.is_none() {
            self.busy_since = Some(now);
        }
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
fn hdd_service_ns(h: &mut Hdd, now: SimTime, cmd: &Cmd, arrived_idle: bool, capacity: u64) -> u64 {
    let rate = media_rate(cmd.sector, capacity);
    let overhead = if arrived_idle { HDD_COMMAND_OVERHEAD_NS } else { 0 };
    let end = cmd.sector + cmd.bytes / 512;
    let ready = now + overhead;
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
        let mut d = Disk::new(DiskKind::Hdd, true, &mut rng);
        let mut now = SimTime::ZERO;
        let mb = 1 << 20;
        // 64 back-to-back 1 MiB sequential reads, each submitted 20 µs after the last completes.
        for i in 0..64u64 {
            let (slot, done) = d.submit(now, Cmd { req: ReqId(0), sector: i * 2048, bytes: mb, write: false, queued_at: now }).unwrap();
            let (_, next) = d.complete(done, slot);
            assert!(next.is_none());
            now = done + 20_000;
        }
        let mb_s = 64.0 * mb as f64 / now.as_secs_f64() / 1e6;
        assert!(mb_s > 110.0 && mb_s < 135.0, "sequential {mb_s} MB/s");
        // Random 4 KiB reads: seek + half a revolution on average, ~80-130 IOPS.
        let mut rng = Stream::new(2, 2);
        let start = now;
        for _ in 0..200 {
            let sector = rng.below(HDD_CAPACITY_SECTORS / 8 - 8) * 8;
            let (slot, done) = d.submit(now, Cmd { req: ReqId(0), sector, bytes: 4096, write: false, queued_at: now }).unwrap();
            d.complete(done, slot);
            now = done;
        }
        let iops = 200.0 / (now - start) as f64 * 1e9;
        assert!(iops > 60.0 && iops < 130.0, "random {iops} IOPS");
        assert!(now - start > 200 * 5 * NS_PER_MS);
    }

    #[test]
    fn the_write_cache_absorbs_writes_until_it_is_full_then_runs_at_media_rate() {
        let mut rng = Stream::new(3, 3);
        let mut cached = Disk::new(DiskKind::Hdd, true, &mut rng);
        let mut rng = Stream::new(3, 3);
        let mut uncached = Disk::new(DiskKind::Hdd, false, &mut rng);
        let mut times = Vec::new();
        for d in [&mut cached, &mut uncached] {
            let mut now = SimTime::ZERO;
            let mut first_cache_full = None;
            for i in 0..400u64 {
                let (slot, done) =
                    d.submit(now, Cmd { req: ReqId(0), sector: i * 1024, bytes: 512 * 1024, write: true, queued_at: now }).unwrap();
                if done - now > 3 * NS_PER_MS && first_cache_full.is_none() {
                    first_cache_full = Some(i);
                }
                d.complete(done, slot);
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
