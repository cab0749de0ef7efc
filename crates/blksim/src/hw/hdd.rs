//! The 7200 rpm HDD: seek curve, rotation, zoned media rate, the drive's buffer and write
//! cache (not kernel code: the hardware the kernel drives; figures in `calib.rs`).

use crate::calib::*;
use crate::engine::rng::Stream;
use crate::engine::time::{SimTime, NS_PER_S};
use crate::scenario::Prefetch;
use std::collections::VecDeque;

use super::hdd_buffer::Segments;
use super::{transfer_ns, Cmd};

/// What an HDD is built of (each drive's figures, and their sources, are in `calib.rs`). The
/// buffer's segments and the write cache are the same for every drive (`HDD_SEGMENT_BYTES`,
/// `HDD_BUFFER_BYTES`, `HDD_WRITE_CACHE_BYTES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HddSpec {
    /// One revolution of the spindle.
    pub revolution_ns: u64,
    /// The seek curve's three points: one track, a third of the stroke (the sheets' average
    /// seek), the full stroke.
    pub seek_track_ns: u64,
    pub seek_avg_ns: u64,
    pub seek_full_ns: u64,
    /// Zoned recording: the media rate at the outer and at the inner edge.
    pub media_outer_bytes_per_s: u64,
    pub media_inner_bytes_per_s: u64,
    pub capacity_sectors: u64,
    /// The link to the host (after 8b/10b coding): what a read from the buffer moves at.
    pub link_bytes_per_s: u64,
}

impl HddSpec {
    /// Zoned recording: the media rate falls linearly from the outer to the inner edge.
    fn media_rate(&self, sector: u64, capacity: u64) -> u64 {
        let span = self.media_outer_bytes_per_s - self.media_inner_bytes_per_s;
        self.media_outer_bytes_per_s - crate::engine::time::mul_div(span, sector, capacity)
    }

    /// Seek time over `distance` sectors: √distance up to a third of the stroke (from
    /// track-to-track to the average seek), then linear to the full stroke.
    pub fn seek_ns(&self, distance: u64, capacity: u64) -> u64 {
        if distance == 0 {
            return 0;
        }
        let x = distance as f64 / capacity as f64;
        let third = 1.0 / 3.0;
        let (track, avg, full) = (self.seek_track_ns as f64, self.seek_avg_ns as f64, self.seek_full_ns as f64);
        let t = if x <= third { track + (avg - track) * (x / third).sqrt() } else { avg + (full - avg) * (x - third) / (1.0 - third) };
        t as u64
    }
}

/// A single-actuator disk: one command at the interface at a time, and one media timeline.
/// With the write cache on (WCE=1, the SATA default), a write completes when its data is in the
/// cache, and the drive destages its cached writes whenever the media is free, each time the
/// one of the oldest `rpo_window` its head reaches soonest (rotational
/// position reordering); a read waits for the writes cached before it. (NCQ/TCQ reordering of
/// queued commands is `hdd_pick`'s.)
#[derive(Clone, Debug)]
pub(crate) struct Hdd {
    spec: HddSpec,
    /// Rotational phase at time 0: spindles are not synchronised, so each disk starts at its
    /// own angle (drawn from the disk's random stream).
    phase_ns: u64,
    /// Where the head will be when the media timeline is done: the sector after the last one.
    head_sector: u64,
    /// The media is busy (reading, or destaging cached writes) until then.
    media_free_at: SimTime,
    /// The drive's buffer in segments. The active segment's run ends at `head_sector` when
    /// the media comes free, and its read-ahead goes on from there while the media is idle.
    pub(crate) segs: Segments,
    write_cache: bool,
    /// Cached writes whose destage is scheduled: (time destaged, bytes), in destage order.
    dirty: VecDeque<(SimTime, u64)>,
    /// Cached writes not yet scheduled to the media, oldest first.
    pending: VecDeque<Pending>,
    /// How many of the oldest cached writes a destage chooses among (1: arrival order).
    rpo_window: u32,
    /// How many destages have passed over the oldest pending write.
    oldest_passed: u32,
    /// Bytes in the write cache: pending plus scheduled and not yet on the media.
    dirty_bytes: u64,
    /// A target less than a track ahead is reached without a seek (`disk.skip_within_track`).
    pub(crate) skip_within_track: bool,
    /// What the read-ahead does when a read needs the head elsewhere (`disk.prefetch`).
    pub(crate) prefetch: Prefetch,
}

impl Hdd {
    pub(crate) fn new(spec: HddSpec, write_cache: bool, rpo_window: u32, rng: &mut Stream) -> Hdd {
        assert!(rpo_window >= 1, "a destage chooses among at least one write");
        Hdd {
            spec,
            phase_ns: rng.below(spec.revolution_ns),
            head_sector: 0,
            media_free_at: SimTime::ZERO,
            segs: Segments::default(),
            write_cache,
            dirty: VecDeque::new(),
            pending: VecDeque::new(),
            rpo_window,
            oldest_passed: 0,
            dirty_bytes: 0,
            skip_within_track: false,
            prefetch: Prefetch::Stop,
        }
    }

    pub(crate) fn head_sector(&self) -> u64 {
        self.head_sector
    }

    /// Runs the destage of cached writes that start before `t`: whenever the media is free,
    /// the cached write among the oldest `rpo_window` that the head reaches
    /// soonest; the oldest goes once that many destages have passed it over (bounded
    /// starvation, as `HDD_NCQ_AGE_MAX_NS` bounds it for queued commands: a full cache's writes
    /// all wait longer than that, so age in time cannot tell them apart). A destage that starts
    /// before `t` runs to its end.
    pub(crate) fn destage_until(&mut self, t: SimTime, capacity: u64) {
        while self.destage_one(Some(t), capacity) {}
    }

    /// Schedules one cached write to the media if one can start (before `before`, if given).
    fn destage_one(&mut self, before: Option<SimTime>, capacity: u64) -> bool {
        let Some(oldest) = self.pending.front().map(|p| p.cached_at) else { return false };
        let start = self.media_free_at.max(oldest);
        if before.is_some_and(|t| start >= t) {
            return false;
        }
        // The destage stops the read-ahead where it has got to.
        self.stop_readahead(start, capacity);
        let window = (self.rpo_window as usize).min(self.pending.len());
        let pick = if self.oldest_passed >= self.rpo_window {
            0
        } else {
            // Only writes already cached when the media comes free; min_by_key keeps the oldest
            // of equal costs.
            (0..window)
                .filter(|&i| self.pending[i].cached_at <= start)
                .min_by_key(|&i| hdd_position_ns(self, start, self.pending[i].sector, capacity))
                .expect("the oldest is cached by start")
        };
        self.oldest_passed = if pick == 0 { 0 } else { self.oldest_passed + 1 };
        let p = self.pending.remove(pick).expect("picked from the pending writes");
        let done =
            start + hdd_position_ns(self, start, p.sector, capacity) + transfer_ns(p.bytes, self.spec.media_rate(p.sector, capacity));
        self.dirty.push_back((done, p.bytes));
        self.media_free_at = done;
        self.head_sector = p.sector + p.bytes / 512;
        true
    }

    /// Stops the active segment's read-ahead at `at` (a new command, or a destage, preempts
    /// it): what it read while the media was idle stays in the segment, and the head is where
    /// it stopped.
    fn stop_readahead(&mut self, at: SimTime, capacity: u64) {
        self.readahead_until(at, false, capacity);
    }

    /// Ends the active segment's read-ahead for a command that needs the head at `at`. With
    /// `disk.prefetch=stream` and `for_read` (a read the buffer does not hold), a detected
    /// stream's read-ahead first fills its segment: the head leaves only then (the media is
    /// busy until then). Otherwise, or for any other read-ahead, it stops at `at`.
    fn readahead_until(&mut self, at: SimTime, for_read: bool, capacity: u64) {
        let Some(a) = self.segs.active.take() else { return };
        let stream = std::mem::take(&mut self.segs.active_stream);
        let seg = self.segs.get(a);
        let room = (seg.host_end + super::hdd_buffer::SEGMENT_SECTORS).saturating_sub(seg.end);
        let rate = self.spec.media_rate(seg.end, capacity);
        let fills = for_read && stream && self.prefetch == Prefetch::Stream;
        let until = if fills { at.max(self.media_free_at + transfer_ns(room * 512, rate)) } else { at };
        if until <= self.media_free_at {
            return;
        }
        let read = (crate::engine::time::mul_div(until - self.media_free_at, rate, NS_PER_S) / 512).min(room);
        let end = (seg.end + read).min(capacity);
        self.segs.extend(a, end);
        self.head_sector = end;
        self.media_free_at = until;
    }
}

/// A write in the drive's cache, not yet scheduled to the media.
#[derive(Clone, Copy, Debug)]
struct Pending {
    sector: u64,
    bytes: u64,
    cached_at: SimTime,
}

/// NCQ/TCQ inside the drive: of the commands queued in it, start the one the head reaches
/// soonest (shortest positioning time first). Writes the write cache absorbs and reads a
/// buffer segment holds need no positioning and go first, in order. A command queued longer than `HDD_NCQ_AGE_MAX_NS` goes
/// next regardless, as drive firmware ages requests to bound starvation.
pub(crate) fn hdd_pick(h: &Hdd, queue: &VecDeque<Cmd>, now: SimTime, capacity: u64) -> Option<usize> {
    if queue.is_empty() {
        return None;
    }
    if let Some(old) = queue.iter().position(|c| now - c.queued_at > HDD_NCQ_AGE_MAX_NS) {
        return Some(old);
    }
    let start = now.max(h.media_free_at);
    let cost = |c: &Cmd| if c.write && h.write_cache && !c.fua { 0 } else { access_ns(h, start, c, capacity) };
    // min_by_key keeps the first of equal keys: ties go to the oldest command.
    queue.iter().enumerate().min_by_key(|(_, c)| cost(c)).map(|(i, _)| i)
}

/// How soon the drive can start on a command at `start`: nothing for a read a segment holds,
/// else the positioning. (The choice does not weigh where the active read-ahead is heading:
/// firmware that would is not described in the sources.)
fn access_ns(h: &Hdd, start: SimTime, c: &Cmd, capacity: u64) -> u64 {
    if !c.write && h.segs.hit(c.sector, c.sector + c.bytes / 512).is_some() {
        return 0;
    }
    hdd_position_ns(h, start, c.sector, capacity)
}

fn in_reach(h: &Hdd, a: usize, sector: u64) -> bool {
    let seg = h.segs.get(a);
    seg.start <= sector && sector < seg.end + super::hdd_buffer::SEGMENT_SECTORS
}

/// Positioning from the head's position to `sector`, starting at `start`: seek, then wait
/// for the sector to come round. A transfer that continues one that just ended pays neither;
/// with `skip_within_track`, a target less than a track ahead needs no seek, only the wait
/// for it to come under the head (the head stays on its track; track skew hides the switch to
/// the next one); without it any other sector costs at least a track-to-track seek.
fn hdd_position_ns(h: &Hdd, start: SimTime, sector: u64, capacity: u64) -> u64 {
    let distance = h.head_sector.abs_diff(sector);
    if distance == 0 && start == h.media_free_at {
        return 0;
    }
    let rev = h.spec.revolution_ns;
    let sectors_per_track = sectors_per_track(h, sector, capacity);
    let seek =
        if h.skip_within_track && sector >= h.head_sector && distance < sectors_per_track { 0 } else { h.spec.seek_ns(distance, capacity) };
    let target_ns = (sector % sectors_per_track) * rev / sectors_per_track;
    let head_ns = ((start + seek).ns() + h.phase_ns) % rev;
    seek + (target_ns + rev - head_ns) % rev
}

/// Returns how long the command takes at the interface, from `now`.
pub(crate) fn hdd_service_ns(h: &mut Hdd, now: SimTime, cmd: &Cmd, arrived_idle: bool, capacity: u64) -> u64 {
    let overhead = if arrived_idle { HDD_COMMAND_OVERHEAD_NS } else { 0 };
    let end = cmd.sector + cmd.bytes / 512;
    let ready = now + overhead;
    // A read of data a segment holds (just written, read, or read ahead) comes from it.
    if !cmd.write {
        if let Some(i) = h.segs.hit(cmd.sector, end) {
            return buffer_hit_ns(h, i, now, overhead, cmd, end, capacity);
        }
    }
    // The destages that start before this command is ready have run.
    h.destage_until(ready, capacity);
    if cmd.write {
        h.stop_readahead(ready, capacity);
        h.segs.write(cmd.sector, end, h.dirty_bytes + if h.write_cache && !cmd.fua { cmd.bytes } else { 0 });
    }
    // A FUA write is not left in the cache: it goes to the media as an uncached write does.
    if cmd.write && h.write_cache && !cmd.fua {
        // The command waits only for cache space: destages free it as they finish, and more
        // are scheduled while the finished ones do not free enough.
        let mut space_at = ready;
        loop {
            while h.dirty.front().is_some_and(|&(t, _)| t <= space_at) {
                let (_, b) = h.dirty.pop_front().expect("front");
                h.dirty_bytes -= b;
            }
            if h.dirty_bytes + cmd.bytes <= HDD_WRITE_CACHE_BYTES.max(cmd.bytes) {
                break;
            }
            match h.dirty.front() {
                Some(&(t, _)) => space_at = t,
                None => assert!(h.destage_one(None, capacity), "a full cache has writes to destage"),
            }
        }
        h.pending.push_back(Pending { sector: cmd.sector, bytes: cmd.bytes, cached_at: space_at });
        h.dirty_bytes += cmd.bytes;
        assert!(h.pending.len() as u64 <= HDD_WRITE_CACHE_BYTES / 512, "write cache over its bound");
        return (space_at - now) + transfer_ns(cmd.bytes, h.spec.link_bytes_per_s);
    }
    // A read (or an uncached write) goes to the media after the writes cached before it, as
    // the model has always had it: whether a drive lets a read pass its cached writes is its
    // firmware's choice, unpublished, so the writes still go in their reordered order but first.
    while h.destage_one(None, capacity) {}
    let start = ready.max(h.media_free_at);
    if cmd.write {
        let done =
            start + hdd_position_ns(h, start, cmd.sector, capacity) + transfer_ns(cmd.bytes, h.spec.media_rate(cmd.sector, capacity));
        h.media_free_at = done;
        h.head_sector = end;
        return done - now;
    }
    let done = match h.segs.active {
        Some(a) if in_reach(h, a, cmd.sector) => read_on_ns(h, a, start, cmd, end, capacity),
        _ => read_miss_ns(h, start, cmd, end, capacity),
    };
    done - now
}

/// A read a segment holds, at link speed. In the active segment, data the media is still
/// bringing in (its minimum prefetch) is sent as it arrives. A read from another segment
/// needs no media, so the active segment's read-ahead goes on (INFERRED: manuals say a new
/// command stops the read-ahead, IBM's DDRS-39130 "terminated immediately a new command
/// arrives", to free the head for it; one served from the buffer does not need the head).
fn buffer_hit_ns(h: &mut Hdd, i: usize, now: SimTime, overhead: u64, cmd: &Cmd, end: u64, capacity: u64) -> u64 {
    let mut done = now + overhead + transfer_ns(cmd.bytes, h.spec.link_bytes_per_s);
    if h.segs.active == Some(i) {
        let seg = h.segs.get(i);
        let behind = transfer_ns((seg.end - end) * 512, h.spec.media_rate(end, capacity));
        // The sector the request ends at arrives `behind` before the media comes free.
        if h.media_free_at.ns() > behind {
            done = done.max(SimTime::ZERO + (h.media_free_at.ns() - behind));
        }
    }
    let seg = h.segs.get_mut(i);
    seg.host_end = seg.host_end.max(end);
    h.segs.touch(i);
    done - now
}

/// A read that starts where the active segment's read-ahead is heading (where the last read
/// ended, or a short skip past it: a RAID5 member's next chunk after a parity chunk) finds
/// what was read ahead of it in the buffer and the rest under the head; one the head has not
/// yet reached waits for the read-ahead to get there, or seeks if that is sooner. A drive
/// serves such a hit from its segment whatever the gap (inferred: drive firmware is not
/// published). The read-ahead reads at most a segment past the host's last read.
fn read_on_ns(h: &mut Hdd, a: usize, start: SimTime, cmd: &Cmd, end: u64, capacity: u64) -> SimTime {
    let rate = h.spec.media_rate(cmd.sector, capacity);
    let seg = h.segs.get(a);
    // The part of the command the segment already holds goes over the link; the rest starts
    // where the segment ends, or ahead of it.
    let first = cmd.sector.max(seg.end);
    let held = transfer_ns((first - cmd.sector) * 512, h.spec.link_bytes_per_s);
    let bytes = (end - first) * 512;
    let ahead_bytes = (first - seg.end) * 512;
    let room = (seg.host_end + super::hdd_buffer::SEGMENT_SECTORS).saturating_sub(seg.end) * 512;
    let idle_ns = start - h.media_free_at;
    let streamed = crate::engine::time::mul_div(idle_ns, rate, NS_PER_S).min(room);
    let done = if streamed > ahead_bytes {
        let buffered = (streamed - ahead_bytes).min(bytes);
        start + held + transfer_ns(buffered, h.spec.link_bytes_per_s) + transfer_ns(bytes - buffered, rate)
    } else {
        let streamed_to_it = h.media_free_at + transfer_ns(ahead_bytes, rate);
        let media_at = streamed_to_it.min(start + hdd_position_ns(h, start, first, capacity));
        media_at.max(start + held) + transfer_ns(bytes, rate)
    };
    h.media_free_at = done;
    h.head_sector = end;
    let seg = h.segs.get_mut(a);
    seg.end = end;
    seg.host_end = end;
    h.segs.extend(a, end);
    h.segs.touch(a);
    h.segs.active = Some(a);
    h.segs.active_stream = true;
    done
}

/// A read the buffer does not hold: the active read-ahead stops where it has got to (a new
/// command preempts it: SCSI mode page 08h's minimum pre-fetch of zero, of which IBM's
/// DDRS-39130 manual says "read ahead should be terminated immediately a new command arrives";
/// the value a 2010 SATA drive's firmware uses is not published, so zero is INFERRED; with
/// `disk.prefetch=stream` a detected stream's read-ahead first fills its segment), and the head
/// goes to the read. A read that continues a segment's run (a stream
/// the drive followed before, then left for another) goes on in that segment; any other takes
/// the least recently used one. After it, the new active segment reads ahead while the media
/// is idle.
fn read_miss_ns(h: &mut Hdd, start: SimTime, cmd: &Cmd, end: u64, capacity: u64) -> SimTime {
    h.readahead_until(start, true, capacity);
    let start = start.max(h.media_free_at);
    let rate = h.spec.media_rate(cmd.sector, capacity);
    let continued = h.segs.continued(cmd.sector, end);
    let (i, from) = match continued {
        Some(i) => (i, h.segs.get(i).end),
        None => (h.segs.take(cmd.sector, end, h.dirty_bytes), cmd.sector),
    };
    let done = start + hdd_position_ns(h, start, from, capacity) + transfer_ns((end - from) * 512, rate);
    h.segs.extend(i, end);
    let seg = h.segs.get_mut(i);
    seg.host_end = end;
    h.segs.touch(i);
    h.segs.active = Some(i);
    h.segs.active_stream = continued.is_some();
    h.media_free_at = done;
    h.head_sector = end;
    done
}

fn sectors_per_track(h: &Hdd, sector: u64, capacity: u64) -> u64 {
    (h.spec.media_rate(sector, capacity) * h.spec.revolution_ns / NS_PER_S / 512).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ids::ReqId;
    use crate::engine::time::{NS_PER_MS, NS_PER_US};
    use crate::hw::Disk;
    use crate::scenario::{ControllerCache, DiskKind, MemberDrive};

    /// Submits to an idle disk: the command starts at once.
    fn submit_one(d: &mut Disk, now: SimTime, cmd: Cmd) -> (u16, SimTime) {
        let mut started = Vec::new();
        d.submit(now, cmd, &mut started);
        assert_eq!(started.len(), 1);
        started[0]
    }

    /// Submits `cmd` to an idle disk and completes it: when it is done.
    fn serve_one(d: &mut Disk, now: SimTime, cmd: Cmd) -> SimTime {
        let (slot, done) = submit_one(d, now, cmd);
        let mut started = Vec::new();
        d.complete(done, slot, &mut started);
        assert!(started.is_empty(), "nothing was queued behind it");
        done
    }

    #[test]
    fn the_seek_curve_passes_through_its_three_points() {
        let c = HDD_CAPACITY_SECTORS;
        assert_eq!(HDD_2010.seek_ns(0, c), 0);
        assert!((HDD_2010.seek_ns(1, c) as i64 - HDD_SEEK_TRACK_NS as i64).abs() < 10_000);
        assert!((HDD_2010.seek_ns(c / 3, c) as i64 - HDD_SEEK_AVG_NS as i64).abs() < 10_000);
        assert!((HDD_2010.seek_ns(c, c) as i64 - HDD_SEEK_FULL_NS as i64).abs() < 10_000);
        // A short stroke is cheaper than a full one: a tenth of the stroke costs under half
        // the full stroke's time, a hundredth under a third of it (the square-root part).
        assert!(HDD_2010.seek_ns(c / 10, c) < HDD_SEEK_FULL_NS / 2);
        assert!(HDD_2010.seek_ns(c / 100, c) < HDD_SEEK_FULL_NS / 3);
        // Monotonic.
        let mut last = 0;
        for i in 1..100 {
            let s = HDD_2010.seek_ns(c / 100 * i, c);
            assert!(s >= last);
            last = s;
        }
    }

    #[test]
    fn sequential_reads_stream_at_media_rate_and_random_reads_pay_seek_and_rotation() {
        let mut rng = Stream::new(1, 1);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        let mut now = SimTime::ZERO;
        let mb = 1 << 20;
        // 64 back-to-back 1 MiB sequential reads, each submitted 20 µs after the last completes.
        for i in 0..64u64 {
            let done = serve_one(d, now, Cmd { req: ReqId(0), sector: i * 2048, bytes: mb, write: false, fua: false, queued_at: now });
            now = done + 20_000;
        }
        let mb_s = 64.0 * mb as f64 / now.as_secs_f64() / 1e6;
        assert!(mb_s > 110.0 && mb_s < 135.0, "sequential {mb_s} MB/s");
        // Random 4 KiB reads: seek + half a revolution on average, ~80-130 IOPS.
        let mut rng = Stream::new(2, 2);
        let start = now;
        for _ in 0..200 {
            let sector = rng.below(HDD_CAPACITY_SECTORS / 8 - 8) * 8;
            let done = serve_one(d, now, Cmd { req: ReqId(0), sector, bytes: 4096, write: false, fua: false, queued_at: now });
            now = done;
        }
        let iops = 200.0 / (now - start) as f64 * 1e9;
        assert!(iops > 60.0 && iops < 130.0, "random {iops} IOPS");
        assert!(now - start > 200 * 5 * NS_PER_MS);
    }

    #[test]
    fn a_short_forward_skip_waits_for_the_rotation_only_with_skip_within_track() {
        // Write 64 KiB through to the media (no write cache: no read-ahead follows a write),
        // then read the 64 KiB after the next 64 KiB.
        let skip = |on: bool| {
            let mut rng = Stream::new(5, 5);
            let d = &mut Disk::new(DiskKind::Hdd, false, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
            d.set_skip_within_track(on);
            let a = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: true, fua: false, queued_at: SimTime::ZERO };
            let done = serve_one(d, SimTime::ZERO, a);
            let b = Cmd { req: ReqId(0), sector: (1 << 20) + 256, bytes: 65536, write: false, fua: false, queued_at: done };
            let done2 = serve_one(d, done, b);
            done2 - done
        };
        // On: the 64 KiB gap passes under the head (~0.5 ms) and 64 KiB is read (~0.5 ms).
        assert!(skip(true) < 2 * NS_PER_MS, "{}", skip(true));
        // Off: a track-to-track seek, and the sector has gone by: most of a revolution.
        assert!(skip(false) > 8 * NS_PER_MS, "{}", skip(false));
    }

    #[test]
    fn a_raid5_member_s_reads_past_each_parity_chunk_come_from_the_drive_s_read_ahead() {
        // One reader's member: 32 KiB read, 16 KiB of parity skipped, the next 32 KiB asked for
        // 0.3 ms after the last completed (the host's round trip): the drive has read on past
        // the gap meanwhile, with or without skip_within_track. Without its read-ahead the
        // skipped-to sector has gone by and each read waits most of a revolution (8.3 ms).
        for on in [false, true] {
            let mut rng = Stream::new(7, 7);
            let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
            d.set_skip_within_track(on);
            let mut now = SimTime::ZERO;
            let mut sector: u64 = 1 << 20;
            let mut worst = 0;
            for i in 0..20 {
                let c = Cmd { req: ReqId(0), sector, bytes: 32768, write: false, fua: false, queued_at: now };
                let done = serve_one(d, now, c);
                if i > 0 {
                    worst = worst.max(done - now);
                }
                now = done + 300 * NS_PER_US;
                sector += 64 + 32;
            }
            // 32 KiB at the media rate (~0.25 ms) and the 16 KiB skipped (~0.1 ms), at most.
            assert!(worst < NS_PER_MS, "skip_within_track {on}: a read past a parity chunk took {worst} ns");
        }
    }

    #[test]
    fn a_skip_the_read_ahead_has_not_reached_waits_for_it_or_seeks_whichever_is_sooner() {
        // 1.5 MiB past the last read, 0.3 ms later: the read-ahead has 37 KiB of it; streaming
        // on to it takes some 12 ms more, a seek and rotation less. Beyond the segment (3 MiB)
        // the read-ahead does not serve it: positioning as for any read.
        let after = |skip_sectors: u64| {
            let mut rng = Stream::new(9, 9);
            let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
            let a = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: false, fua: false, queued_at: SimTime::ZERO };
            let done = serve_one(d, SimTime::ZERO, a);
            let at = done + 300 * NS_PER_US;
            let b = Cmd { req: ReqId(0), sector: (1 << 20) + 128 + skip_sectors, bytes: 65536, write: false, fua: false, queued_at: at };
            let done2 = serve_one(d, at, b);
            done2 - at
        };
        let rate = HDD_2010.media_rate(1 << 20, crate::hw::capacity_sectors(DiskKind::Hdd, MemberDrive::Hdd));
        let streaming = transfer_ns(3 << 19, rate) + transfer_ns(65536, rate);
        let near = after(3 << 10);
        assert!(near <= streaming, "1.5 MiB ahead: {near} ns, streaming there {streaming} ns");
        assert!(near < 12 * NS_PER_MS, "{near}");
        // 3 MiB ahead: a seek (about 1 ms for this distance) and the rotation, whatever it is.
        let far = after(6 << 10);
        assert!(far > NS_PER_MS && far < HDD_2010.revolution_ns + 3 * NS_PER_MS, "{far}");
    }

    #[test]
    fn a_fua_write_goes_to_the_media_before_it_completes_and_a_cached_one_does_not() {
        let mut rng = Stream::new(4, 4);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        let w = |sector, fua, at| Cmd { req: ReqId(0), sector, bytes: 4096, write: true, fua, queued_at: at };
        let cached = serve_one(d, SimTime::ZERO, w(1 << 28, false, SimTime::ZERO));
        assert!(cached - SimTime::ZERO < 200 * NS_PER_US, "a cached write took {} ns", cached - SimTime::ZERO);
        // Far from the last write: the FUA write pays the destage before it, then its own
        // seek and rotation.
        let fua = serve_one(d, cached, w(1 << 20, true, cached));
        assert!(fua - cached > 2 * NS_PER_MS, "a FUA write took {} ns", fua - cached);
    }

    #[test]
    fn a_read_of_what_the_drive_just_wrote_comes_from_its_buffer() {
        let mut rng = Stream::new(4, 4);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        let w = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: true, fua: false, queued_at: SimTime::ZERO };
        let done = serve_one(d, SimTime::ZERO, w);
        // Part of the written range: no positioning, link speed.
        let r = Cmd { req: ReqId(0), sector: (1 << 20) + 8, bytes: 4096, write: false, fua: false, queued_at: done };
        let hit = serve_one(d, done, r);
        assert!(hit - done < 200 * NS_PER_US, "hit took {} ns", hit - done);
        // Elsewhere: seek and rotation.
        let r = Cmd { req: ReqId(0), sector: 1 << 28, bytes: 4096, write: false, fua: false, queued_at: hit };
        let (_, miss) = submit_one(d, hit, r);
        assert!(miss - hit > NS_PER_MS, "miss took {} ns", miss - hit);
    }

    #[test]
    fn the_write_cache_absorbs_writes_until_it_is_full_then_runs_at_media_rate() {
        let mut rng = Stream::new(3, 3);
        let mut cached = Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        let mut rng = Stream::new(3, 3);
        let mut uncached = Disk::new(DiskKind::Hdd, false, ControllerCache::InOrder, MemberDrive::Hdd, &mut rng);
        let mut times = Vec::new();
        let mut started = Vec::new();
        for d in [&mut cached, &mut uncached] {
            let mut now = SimTime::ZERO;
            let mut first_cache_full = None;
            for i in 0..400u64 {
                let (slot, done) =
                    submit_one(d, now, Cmd { req: ReqId(0), sector: i * 1024, bytes: 512 * 1024, write: true, fua: false, queued_at: now });
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

    /// Reads `bytes` at `sector` on a drive that is idle at `now`: when it is done.
    fn read(h: &mut Hdd, now: SimTime, sector: u64, bytes: u64) -> SimTime {
        let c = Cmd { req: ReqId(0), sector, bytes, write: false, fua: false, queued_at: now };
        now + hdd_service_ns(h, now, &c, true, HDD_CAPACITY_SECTORS)
    }

    #[test]
    fn several_streams_each_keep_their_read_ahead_in_a_segment_of_their_own() {
        // Four streams a quarter of the disk apart, each read 64 KiB at a time; between two
        // reads of the drive 2 ms pass idle (a host that thinks), so each read's segment reads
        // ahead some 250 KB before the next command stops it. The second round finds every
        // stream's next 64 KiB in its own segment: link speed, no seek. One read-ahead stream
        // would keep only the last stream's.
        let mut rng = Stream::new(11, 11);
        let h = &mut Hdd::new(HDD_2010, true, HDD_WRITE_CACHE_RPO_WINDOW, &mut rng);
        let base = |k: u64| k * (HDD_CAPACITY_SECTORS / 4) + 4096;
        let mut now = SimTime::ZERO;
        for k in 0..4 {
            now = read(h, now, base(k), 65536) + 2 * NS_PER_MS;
        }
        for k in 0..4 {
            let done = read(h, now, base(k) + 128, 65536);
            assert!(done - now < 500 * NS_PER_US, "stream {k}: its next 64 KiB took {} ns", done - now);
            now = done + 2 * NS_PER_MS;
        }
        assert_eq!(h.segs.len(), 4);
    }

    #[test]
    fn a_new_command_stops_the_read_ahead_where_it_has_got_to() {
        // Stream A reads 64 KiB; 20 µs later a read elsewhere arrives and the head leaves A's
        // run. A's segment keeps what was read ahead in those 20 µs (under 3 KB), so A's next
        // 64 KiB is not in it: the head comes back, a seek and a rotation. Left idle for 2 ms
        // instead, A's read-ahead would have reached it.
        let next_of_a = |gap_ns: u64| {
            let mut rng = Stream::new(12, 12);
            let h = &mut Hdd::new(HDD_2010, true, HDD_WRITE_CACHE_RPO_WINDOW, &mut rng);
            let a = 1 << 20;
            let done = read(h, SimTime::ZERO, a, 65536);
            let done = read(h, done + gap_ns, a + (HDD_CAPACITY_SECTORS / 2), 4096);
            let at = done + 20 * NS_PER_US;
            read(h, at, a + 128, 65536) - at
        };
        assert!(next_of_a(20 * NS_PER_US) > NS_PER_MS, "{}", next_of_a(20 * NS_PER_US));
        assert!(next_of_a(2 * NS_PER_MS) < 500 * NS_PER_US, "{}", next_of_a(2 * NS_PER_MS));
    }

    #[test]
    fn the_buffer_holds_at_most_its_segments_and_reuses_the_least_recently_used() {
        // Twenty streams, each read once with the drive idle 2 ms after: never more segments
        // than the buffer has, and the first streams' segments went to the later ones, while
        // the last stream's read-ahead is still there.
        let mut rng = Stream::new(13, 13);
        let h = &mut Hdd::new(HDD_2010, true, HDD_WRITE_CACHE_RPO_WINDOW, &mut rng);
        let base = |k: u64| k * (HDD_CAPACITY_SECTORS / 20) + 4096;
        let mut now = SimTime::ZERO;
        for k in 0..20 {
            now = read(h, now, base(k), 65536) + 2 * NS_PER_MS;
            assert!(h.segs.len() <= HDD_BUFFER_SEGMENTS as usize);
        }
        assert_eq!(h.segs.len(), HDD_BUFFER_SEGMENTS as usize);
        let done = read(h, now, base(19) + 128, 65536);
        assert!(done - now < 500 * NS_PER_US, "the newest stream's next read took {} ns", done - now);
        let now = done + 20 * NS_PER_US;
        let done = read(h, now, base(0) + 128, 65536);
        assert!(done - now > NS_PER_MS, "the oldest stream's next read took {} ns", done - now);
    }

    #[test]
    fn with_prefetch_stream_a_detected_stream_fills_its_segment_before_the_head_leaves() {
        // Stream A reads 64 KiB twice (the second continues the first: a stream), then a read
        // far away comes at once. With `stream` the head first reads A's segment full (2 MiB,
        // some 16 ms), so the far read ends after that, and A's next 1 MiB comes from the
        // buffer at link speed; with `stop` the far read starts at once and A's next 64 KiB
        // needs the head back (a seek and a rotation).
        let run = |p: Prefetch| {
            let mut rng = Stream::new(14, 14);
            let h = &mut Hdd::new(HDD_2010, true, HDD_WRITE_CACHE_RPO_WINDOW, &mut rng);
            h.prefetch = p;
            let a = 1 << 20;
            let done = read(h, SimTime::ZERO, a, 65536);
            let done = read(h, done, a + 128, 65536);
            let far = read(h, done, a + HDD_CAPACITY_SECTORS / 2, 4096);
            let mut now = far;
            let mut worst = 0;
            for k in 0..16 {
                let next = read(h, now, a + 256 + k * 128, 65536);
                worst = worst.max(next - now);
                now = next;
            }
            (far - done, worst)
        };
        let fill = transfer_ns(HDD_SEGMENT_BYTES, HDD_2010.media_rate(1 << 20, HDD_CAPACITY_SECTORS));
        let (far, worst) = run(Prefetch::Stream);
        assert!(far > fill, "stream: the far read took {far} ns, filling the segment {fill} ns");
        assert!(worst < 500 * NS_PER_US, "stream: A's next 1 MiB, the slowest 64 KiB took {worst} ns");
        let (far, worst) = run(Prefetch::Stop);
        assert!(far < fill, "stop: the far read took {far} ns");
        assert!(worst > NS_PER_MS, "stop: A's next 64 KiB took {worst} ns");
    }

    #[test]
    fn cached_writes_hold_segments_of_the_buffer() {
        // 8 MB of cached writes not yet destaged leave the reads half the segments.
        let mut segs = crate::hw::hdd_buffer::Segments::default();
        for k in 0..HDD_BUFFER_SEGMENTS as u64 {
            segs.take(k << 24, (k << 24) + 128, HDD_WRITE_CACHE_BYTES);
        }
        let held = HDD_WRITE_CACHE_BYTES.div_ceil(HDD_SEGMENT_BYTES) as usize;
        assert_eq!(segs.len(), HDD_BUFFER_SEGMENTS as usize - held);
    }
}
