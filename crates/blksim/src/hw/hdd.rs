//! The 7200 rpm HDD: seek curve, rotation, zoned media rate, the drive's buffer and write
//! cache (not kernel code: the hardware the kernel drives; figures in `calib.rs`).

use crate::calib::*;
use crate::engine::rng::Stream;
use crate::engine::time::{SimTime, NS_PER_S};
use std::collections::VecDeque;

use super::{transfer_ns, Cmd};

/// A single-actuator disk: one command at the interface at a time, and one media timeline.
/// With the write cache on (WCE=1, the SATA default), a write completes when its data is in the
/// cache, and the drive destages its cached writes whenever the media is free, each time the
/// one of the oldest `rpo_window` its head reaches soonest (rotational
/// position reordering); a read waits for the writes cached before it. (NCQ/TCQ reordering of
/// queued commands is `hdd_pick`'s.)
#[derive(Clone, Debug)]
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
}

impl Hdd {
    pub(crate) fn new(write_cache: bool, rpo_window: u32, rng: &mut Stream) -> Hdd {
        assert!(rpo_window >= 1, "a destage chooses among at least one write");
        Hdd {
            phase_ns: rng.below(HDD_REVOLUTION_NS),
            head_sector: 0,
            media_free_at: SimTime::ZERO,
            readahead_from: None,
            buffered: VecDeque::new(),
            buffered_sectors: 0,
            write_cache,
            dirty: VecDeque::new(),
            pending: VecDeque::new(),
            rpo_window,
            oldest_passed: 0,
            dirty_bytes: 0,
            skip_within_track: false,
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
        let done = start + hdd_position_ns(self, start, p.sector, capacity) + transfer_ns(p.bytes, media_rate(p.sector, capacity));
        self.dirty.push_back((done, p.bytes));
        self.media_free_at = done;
        self.head_sector = p.sector + p.bytes / 512;
        true
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

/// A write in the drive's cache, not yet scheduled to the media.
#[derive(Clone, Copy, Debug)]
struct Pending {
    sector: u64,
    bytes: u64,
    cached_at: SimTime,
}

/// Zoned recording: the media rate falls linearly from the outer to the inner edge.
fn media_rate(sector: u64, capacity: u64) -> u64 {
    let span = HDD_MEDIA_OUTER_BYTES_PER_S - HDD_MEDIA_INNER_BYTES_PER_S;
    HDD_MEDIA_OUTER_BYTES_PER_S - crate::engine::time::mul_div(span, sector, capacity)
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
pub(crate) fn hdd_pick(h: &Hdd, queue: &VecDeque<Cmd>, now: SimTime, capacity: u64) -> Option<usize> {
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
/// for the sector to come round. A transfer that continues one that just ended pays neither;
/// with `skip_within_track`, a target less than a track ahead needs no seek, only the wait
/// for it to come under the head (the head stays on its track; track skew hides the switch to
/// the next one); without it any other sector costs at least a track-to-track seek.
fn hdd_position_ns(h: &Hdd, start: SimTime, sector: u64, capacity: u64) -> u64 {
    let distance = h.head_sector.abs_diff(sector);
    if distance == 0 && start == h.media_free_at {
        return 0;
    }
    let rev = HDD_REVOLUTION_NS;
    let sectors_per_track = (media_rate(sector, capacity) * rev / NS_PER_S / 512).max(1);
    let seek = if h.skip_within_track && sector >= h.head_sector && distance < sectors_per_track { 0 } else { seek_ns(distance, capacity) };
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
    // The destages that start before this command is ready have run.
    h.destage_until(ready, capacity);
    if cmd.write && h.write_cache {
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
        h.readahead_from = None;
        return (space_at - now) + transfer_ns(cmd.bytes, SATA_LINK_BYTES_PER_S);
    }
    // A read (or an uncached write) goes to the media after the writes cached before it, as
    // the model has always had it: whether a drive lets a read pass its cached writes is its
    // firmware's choice, unpublished, so the writes still go in their reordered order but first.
    while h.destage_one(None, capacity) {}
    let start = ready.max(h.media_free_at);
    // After a read the drive reads on into its read-ahead segment at media rate while the
    // media is idle. A read that starts inside that segment's reach (where the last read
    // ended, or a short skip past it: a RAID5 member's next chunk after a parity chunk) finds
    // what was read ahead of it in the buffer and the rest under the head; one the head has not
    // yet reached waits for the read-ahead to get there, or seeks if that is sooner. A drive
    // serves such a hit from its segment whatever the gap (inferred: drive firmware is not
    // published; the segment's size is in calib.rs).
    let ahead_bytes = match h.readahead_from {
        Some(from) if !cmd.write && cmd.sector >= from && (cmd.sector - from) * 512 < HDD_READAHEAD_SEGMENT_BYTES => {
            Some((cmd.sector - from) * 512)
        }
        _ => None,
    };
    let done = if let Some(ahead_bytes) = ahead_bytes {
        let idle_ns = start - h.media_free_at;
        let streamed = crate::engine::time::mul_div(idle_ns, rate, NS_PER_S).min(HDD_READAHEAD_SEGMENT_BYTES);
        if streamed > ahead_bytes {
            let buffered = (streamed - ahead_bytes).min(cmd.bytes);
            start + transfer_ns(buffered, SATA_LINK_BYTES_PER_S) + transfer_ns(cmd.bytes - buffered, rate)
        } else {
            let streamed_to_it = h.media_free_at + transfer_ns(ahead_bytes, rate);
            let media_at = streamed_to_it.min(start + hdd_position_ns(h, start, cmd.sector, capacity));
            media_at.max(start) + transfer_ns(cmd.bytes, rate)
        }
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
    use crate::engine::ids::ReqId;
    use crate::engine::time::{NS_PER_MS, NS_PER_US};
    use crate::hw::Disk;
    use crate::scenario::{ControllerCache, DiskKind};

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
        let mut now = SimTime::ZERO;
        let mb = 1 << 20;
        // 64 back-to-back 1 MiB sequential reads, each submitted 20 µs after the last completes.
        for i in 0..64u64 {
            let done = serve_one(d, now, Cmd { req: ReqId(0), sector: i * 2048, bytes: mb, write: false, queued_at: now });
            now = done + 20_000;
        }
        let mb_s = 64.0 * mb as f64 / now.as_secs_f64() / 1e6;
        assert!(mb_s > 110.0 && mb_s < 135.0, "sequential {mb_s} MB/s");
        // Random 4 KiB reads: seek + half a revolution on average, ~80-130 IOPS.
        let mut rng = Stream::new(2, 2);
        let start = now;
        for _ in 0..200 {
            let sector = rng.below(HDD_CAPACITY_SECTORS / 8 - 8) * 8;
            let done = serve_one(d, now, Cmd { req: ReqId(0), sector, bytes: 4096, write: false, queued_at: now });
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
            let d = &mut Disk::new(DiskKind::Hdd, false, ControllerCache::InOrder, &mut rng);
            d.set_skip_within_track(on);
            let a = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: true, queued_at: SimTime::ZERO };
            let done = serve_one(d, SimTime::ZERO, a);
            let b = Cmd { req: ReqId(0), sector: (1 << 20) + 256, bytes: 65536, write: false, queued_at: done };
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
            let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
            d.set_skip_within_track(on);
            let mut now = SimTime::ZERO;
            let mut sector: u64 = 1 << 20;
            let mut worst = 0;
            for i in 0..20 {
                let c = Cmd { req: ReqId(0), sector, bytes: 32768, write: false, queued_at: now };
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
            let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
            let a = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: false, queued_at: SimTime::ZERO };
            let done = serve_one(d, SimTime::ZERO, a);
            let at = done + 300 * NS_PER_US;
            let b = Cmd { req: ReqId(0), sector: (1 << 20) + 128 + skip_sectors, bytes: 65536, write: false, queued_at: at };
            let done2 = serve_one(d, at, b);
            done2 - at
        };
        let rate = media_rate(1 << 20, crate::hw::capacity_sectors(DiskKind::Hdd));
        let streaming = transfer_ns(3 << 19, rate) + transfer_ns(65536, rate);
        let near = after(3 << 10);
        assert!(near <= streaming, "1.5 MiB ahead: {near} ns, streaming there {streaming} ns");
        assert!(near < 12 * NS_PER_MS, "{near}");
        // 3 MiB ahead: a seek (about 1 ms for this distance) and the rotation, whatever it is.
        let far = after(6 << 10);
        assert!(far > NS_PER_MS && far < HDD_REVOLUTION_NS + 3 * NS_PER_MS, "{far}");
    }

    #[test]
    fn a_read_of_what_the_drive_just_wrote_comes_from_its_buffer() {
        let mut rng = Stream::new(4, 4);
        let d = &mut Disk::new(DiskKind::Hdd, true, ControllerCache::InOrder, &mut rng);
        let w = Cmd { req: ReqId(0), sector: 1 << 20, bytes: 65536, write: true, queued_at: SimTime::ZERO };
        let done = serve_one(d, SimTime::ZERO, w);
        // Part of the written range: no positioning, link speed.
        let r = Cmd { req: ReqId(0), sector: (1 << 20) + 8, bytes: 4096, write: false, queued_at: done };
        let hit = serve_one(d, done, r);
        assert!(hit - done < 200 * NS_PER_US, "hit took {} ns", hit - done);
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
