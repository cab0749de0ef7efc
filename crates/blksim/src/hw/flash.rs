//! Flash and RAM-backed LUNs (not kernel code; figures in `calib.rs`).
//!
//! `Nand` is a SATA SSD as SSDs are built: the SATA link, a controller that spends a fixed
//! time on each command and moves data at its own rate, and N channels with dies on each. A
//! read senses each page in its die (tR), moves it over the die's channel, then over the link;
//! a write crosses the link into the controller's buffer and is programmed (tPROG) from there.
//! Dies, channels, the controller and the link each serve one thing at a time, so throughput
//! grows with the request's size (more channels at once) and with the queue's depth (more dies
//! at once) until one of them is full. Dies and the controller take commands in the order they
//! come; the channels and the link either do too, or (`FlashSpec::reorder`) move each page as
//! soon as it is ready and the bus has room, so data ready early passes data still being sensed.
//!
//! `RamLun` is a fixed latency per command, then one shared transfer path.

use super::{transfer_ns, Cmd};
use crate::engine::time::SimTime;
use std::collections::VecDeque;

/// What an SSD is built of (the figures for each drive, and their sources, are in `calib.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashSpec {
    /// The SATA link's payload rate (after 8b/10b coding).
    pub link_bytes_per_s: u64,
    /// The controller's work on one command (decode, FTL lookup, completion), one at a time.
    pub command_ns: u64,
    /// The controller's data path (DMA and ECC engine) toward the host, and from it.
    pub read_path_bytes_per_s: u64,
    pub write_path_bytes_per_s: u64,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub page_bytes: u64,
    /// Planes per die: a program writes one page in each at once (multi-plane program).
    pub planes: u32,
    /// Sensing a page into the die's page register.
    pub t_r_ns: u64,
    /// Programming a page from the register.
    pub t_prog_ns: u64,
    /// One channel's bus (the die's register to the controller).
    pub channel_bytes_per_s: u64,
    /// The FTL's work for a write that does not continue the last one, one at a time.
    pub random_write_ns: u64,
    /// Pages the drive reads ahead of a read that continues the last.
    pub readahead_pages: u32,
    /// The channels and the link move data in the order it is ready (any command's that fits
    /// a gap), not in the order the commands came.
    pub reorder: bool,
}

/// The busy intervals a reordering bus keeps at most: more than the commands any drive holds
/// (an NVMe drive's 1023 per queue pair) times the pages of the largest request.
const LANE_INTERVALS_MAX: usize = 1 << 20;

/// A bus (a channel, the link): serves one transfer at a time, either after the last one
/// reserved (arrival order) or in the first gap that holds it (reordering).
#[derive(Clone, Debug, Default)]
struct Lane {
    /// Arrival order: when the last transfer reserved ends.
    free_at: SimTime,
    /// Reordering: the transfers reserved from now on, sorted and disjoint (start, end).
    busy: VecDeque<(SimTime, SimTime)>,
}

impl Lane {
    /// Reserves `dur` from `earliest` on: when the transfer ends.
    fn take(&mut self, earliest: SimTime, dur: u64, reorder: bool) -> SimTime {
        if !reorder {
            self.free_at = earliest.max(self.free_at) + dur;
            return self.free_at;
        }
        let mut start = earliest;
        let mut i = self.busy.partition_point(|&(_, e)| e <= start);
        while let Some(&(s, e)) = self.busy.get(i) {
            if start + dur <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        let end = start + dur;
        // Joined to a neighbour it touches, else a new interval.
        let joins_before = i > 0 && self.busy[i - 1].1 == start;
        let joins_after = self.busy.get(i).is_some_and(|&(s, _)| s == end);
        match (joins_before, joins_after) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
        assert!(self.busy.len() <= LANE_INTERVALS_MAX, "a bus's reservations over their bound");
        end
    }

    /// Forgets the transfers over by `now` (nothing is reserved before now).
    fn forget_before(&mut self, now: SimTime) {
        while self.busy.front().is_some_and(|&(_, e)| e <= now) {
            self.busy.pop_front();
        }
    }
}

/// An SSD's state: when each part is free next, the read-ahead buffer and the write buffer.
#[derive(Clone, Debug)]
pub(crate) struct Nand {
    spec: FlashSpec,
    capacity_pages: u64,
    command_free_at: SimTime,
    link: Lane,
    ftl_free_at: SimTime,
    channels: Vec<Lane>,
    die_free_at: Vec<SimTime>,
    /// Where the last read and the last write ended (sectors).
    last_read_end: Option<u64>,
    last_write_end: Option<u64>,
    /// The read-ahead buffer: pages `ra_first..` in order, each with when it is in the buffer.
    ra_first: u64,
    ra_ready: VecDeque<SimTime>,
    /// The write buffer: when each buffered page's program ends (one page per die at most).
    programs: VecDeque<SimTime>,
    /// The die the next page is programmed on: the FTL appends in die order (log-structured).
    next_program_die: usize,
    /// Bytes written into the open program unit (a page on each plane of one die) so far.
    open_unit_bytes: u64,
}

impl Nand {
    pub(crate) fn new(spec: FlashSpec, capacity_sectors: u64) -> Nand {
        assert!(spec.channels > 0 && spec.dies_per_channel > 0 && spec.page_bytes >= 512, "an SSD needs channels, dies and pages");
        let dies = (spec.channels * spec.dies_per_channel) as usize;
        Nand {
            spec,
            capacity_pages: capacity_sectors * 512 / spec.page_bytes,
            command_free_at: SimTime::ZERO,
            link: Lane::default(),
            ftl_free_at: SimTime::ZERO,
            channels: vec![Lane::default(); spec.channels as usize],
            die_free_at: vec![SimTime::ZERO; dies],
            last_read_end: None,
            last_write_end: None,
            ra_first: 0,
            ra_ready: VecDeque::new(),
            programs: VecDeque::new(),
            next_program_die: 0,
            open_unit_bytes: 0,
        }
    }

    fn dies(&self) -> usize {
        self.die_free_at.len()
    }

    /// When a command started at `now` is done.
    pub(crate) fn service(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        // The controller takes commands one at a time.
        if self.spec.reorder {
            self.link.forget_before(now);
            self.channels.iter_mut().for_each(|c| c.forget_before(now));
        }
        let start = now.max(self.command_free_at);
        self.command_free_at = start + self.spec.command_ns;
        let decoded = self.command_free_at;
        if cmd.write {
            self.write(now, decoded, cmd)
        } else {
            self.read(decoded, cmd)
        }
    }

    /// The channel and die a logical page lives on: pages striped across the channels first,
    /// then across the dies of each channel. INFERRED: no drive documents its mapping; a
    /// sequential run striped this way is what lets one large read use every channel.
    fn place(&self, page: u64) -> (usize, usize) {
        let ch = (page % self.spec.channels as u64) as usize;
        let die = ((page / self.spec.channels as u64) % self.spec.dies_per_channel as u64) as usize;
        (ch, ch * self.spec.dies_per_channel as usize + die)
    }

    /// Senses `bytes` of a page from `t` on and moves them over its channel: when they are in
    /// the controller. The die holds the page in its register until the channel has moved it.
    fn read_page(&mut self, page: u64, bytes: u64, t: SimTime) -> SimTime {
        let (ch, die) = self.place(page);
        let sensed = t.max(self.die_free_at[die]) + self.spec.t_r_ns;
        let moved = self.channels[ch].take(sensed, transfer_ns(bytes, self.spec.channel_bytes_per_s), self.spec.reorder);
        self.die_free_at[die] = moved;
        moved
    }

    /// The host's rate for data toward it (the slower of the link and the data path), and from it.
    fn host_rate(&self, write: bool) -> u64 {
        let path = if write { self.spec.write_path_bytes_per_s } else { self.spec.read_path_bytes_per_s };
        path.min(self.spec.link_bytes_per_s)
    }

    /// A read: each page from the read-ahead buffer or the flash, then over the link in order.
    fn read(&mut self, decoded: SimTime, cmd: &Cmd) -> SimTime {
        let page = self.spec.page_bytes;
        let (from, to) = (cmd.sector * 512, cmd.sector * 512 + cmd.bytes);
        let (first, last) = (from / page, (to - 1) / page);
        let rate = self.host_rate(false);
        let mut link = decoded;
        for p in first..=last {
            let bytes = to.min((p + 1) * page) - from.max(p * page);
            let ready = match self.buffered(p) {
                Some(t) => t.max(decoded),
                None => self.read_page(p, bytes, decoded),
            };
            link = self.link.take(link.max(ready), transfer_ns(bytes, rate), self.spec.reorder);
        }
        // What the buffer held before the read's end has been read (a page read in part
        // stays). A read that continues the last one makes the drive read the stripe after
        // it (one page per channel, `readahead_pages`), queued on the dies behind the read's
        // own pages.
        let keep = to / page;
        self.drop_buffered_before(keep);
        if self.last_read_end == Some(cmd.sector) {
            self.read_ahead(keep, last + 1 + self.spec.readahead_pages as u64, decoded);
        }
        self.last_read_end = Some(to / 512);
        link
    }

    /// When page `p` is in the read-ahead buffer, if it is there.
    fn buffered(&self, p: u64) -> Option<SimTime> {
        let i = p.checked_sub(self.ra_first)?;
        self.ra_ready.get(usize::try_from(i).ok()?).copied()
    }

    fn drop_buffered_before(&mut self, p: u64) {
        while !self.ra_ready.is_empty() && self.ra_first < p {
            self.ra_ready.pop_front();
            self.ra_first += 1;
        }
        if self.ra_ready.is_empty() {
            self.ra_first = p;
        }
    }

    /// Reads the pages `from..to` into the buffer (those not there yet), starting at `t`:
    /// they take their dies and channels as any read does.
    fn read_ahead(&mut self, from: u64, to: u64, t: SimTime) {
        if self.ra_first != from {
            self.ra_ready.clear();
            self.ra_first = from;
        }
        let to = to.min(self.capacity_pages);
        while self.ra_first + (self.ra_ready.len() as u64) < to {
            let p = self.ra_first + self.ra_ready.len() as u64;
            let ready = self.read_page(p, self.spec.page_bytes, t);
            self.ra_ready.push_back(ready);
        }
        assert!(self.ra_ready.len() <= self.spec.readahead_pages as usize + 1, "read-ahead beyond its buffer");
    }

    /// A write: a random one waits its turn in the FTL; the data crosses the link into the
    /// buffer. The FTL appends what is written (log-structured) and programs a die when a unit
    /// (a page on each of its planes) is full, the dies in turn; the buffer holds one unit per
    /// die. The command is done when its data is in the buffer (the drive's write cache), once
    /// the buffer has room for it.
    fn write(&mut self, now: SimTime, decoded: SimTime, cmd: &Cmd) -> SimTime {
        let mut ready = decoded;
        if self.spec.random_write_ns > 0 && self.last_write_end != Some(cmd.sector) {
            let ftl_start = decoded.max(self.ftl_free_at);
            self.ftl_free_at = ftl_start + self.spec.random_write_ns;
            ready = self.ftl_free_at;
        }
        self.last_write_end = Some(cmd.sector + cmd.bytes / 512);
        // The buffer frees a unit when its program ends.
        while self.programs.front().is_some_and(|&t| t <= now) {
            self.programs.pop_front();
        }
        let link_end = self.link.take(ready, transfer_ns(cmd.bytes, self.host_rate(true)), self.spec.reorder);
        let mut done = link_end;
        let unit = self.spec.page_bytes * self.spec.planes as u64;
        self.open_unit_bytes += cmd.bytes;
        while self.open_unit_bytes >= unit {
            self.open_unit_bytes -= unit;
            let die = self.next_program_die;
            self.next_program_die = (die + 1) % self.dies();
            let ch = die / self.spec.dies_per_channel as usize;
            let moved = self.channels[ch].take(
                link_end.max(self.die_free_at[die]),
                transfer_ns(unit, self.spec.channel_bytes_per_s),
                self.spec.reorder,
            );
            self.die_free_at[die] = moved + self.spec.t_prog_ns;
            self.programs.push_back(self.die_free_at[die]);
            // A full buffer: the command waits for the oldest program to end.
            while self.programs.len() > self.dies() {
                let oldest = self.programs.pop_front().expect("the buffer is not empty");
                done = done.max(oldest);
            }
        }
        done
    }
}

/// A RAM-backed LUN: a fixed latency per command, then its turn on one shared transfer path.
#[derive(Clone, Debug)]
pub(crate) struct RamLun {
    /// The shared transfer path is busy until then.
    pipe_free_at: SimTime,
    command_ns: u64,
    bytes_per_s: u64,
}

impl RamLun {
    pub(crate) fn new(command_ns: u64, bytes_per_s: u64) -> RamLun {
        RamLun { pipe_free_at: SimTime::ZERO, command_ns, bytes_per_s }
    }

    /// When a command started at `now` is done: the latency, then its turn on the path.
    pub(crate) fn service(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        let start = (now + self.command_ns).max(self.pipe_free_at);
        self.pipe_free_at = start + transfer_ns(cmd.bytes, self.bytes_per_s);
        self.pipe_free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::{SSD_830, SSD_CAPACITY_SECTORS, SSD_X25M_G2};
    use crate::engine::ids::ReqId;
    use crate::engine::time::NS_PER_S;

    fn read(sector: u64, bytes: u64) -> Cmd {
        Cmd { req: ReqId(0), sector, bytes, write: false, queued_at: SimTime::ZERO }
    }

    /// Spread-out 4 KiB sectors, none continuing another (a fixed stride, not a sequence).
    fn scattered(i: u64) -> u64 {
        (i * 7_919 * 8 + i * 13 * 8) % (SSD_CAPACITY_SECTORS - 8)
    }

    /// Reads `n` commands from `sector(i)`, `depth` at a time, each next command sent when
    /// one finishes; returns the time the last is done.
    fn run(d: &mut Nand, n: u64, depth: usize, bytes: u64, sector: impl Fn(u64) -> u64) -> SimTime {
        let mut in_flight: Vec<SimTime> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut last = SimTime::ZERO;
        for i in 0..n {
            if in_flight.len() == depth {
                in_flight.sort();
                now = now.max(in_flight.remove(0));
            }
            let done = d.service(now, &read(sector(i), bytes));
            last = last.max(done);
            in_flight.push(done);
        }
        last
    }

    fn iops(n: u64, t: SimTime) -> u64 {
        n * NS_PER_S / t.ns()
    }

    /// Uniformly spread 4 KiB sectors (a hashed sequence: reads land on dies at random, so
    /// some find their die busy, as fio's random offsets do).
    fn random(i: u64, capacity: u64) -> u64 {
        let x = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let x = (x ^ (x >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (x ^ (x >> 29)) % (capacity / 8 - 1) * 8
    }

    #[test]
    fn a_reordering_bus_fills_the_first_gap_that_holds_a_transfer() {
        let t = SimTime;
        let mut lane = Lane::default();
        assert_eq!(lane.take(t(100), 10, true), t(110));
        assert_eq!(lane.take(t(0), 50, true), t(50), "ready first, it goes before");
        assert_eq!(lane.take(t(40), 60, true), t(170), "50..100 is too short: after 110");
        assert_eq!(lane.take(t(40), 50, true), t(100), "the gap 50..100 holds it exactly");
        assert_eq!(lane.busy, [(t(0), t(170))], "touching intervals join");
        lane.forget_before(t(170));
        assert!(lane.busy.is_empty());
        // In arrival order the same transfers queue behind each other.
        let mut fifo = Lane::default();
        assert_eq!(fifo.take(t(100), 10, false), t(110));
        assert_eq!(fifo.take(t(0), 50, false), t(160));
    }

    #[test]
    fn reordering_lets_reads_on_free_dies_pass_one_waiting_on_a_busy_die() {
        use crate::calib::{NVME_970_EVO_PLUS, NVME_CAPACITY_SECTORS};
        let cap = NVME_CAPACITY_SECTORS;
        let at = |spec: FlashSpec, depth: usize| iops(20_000, run(&mut Nand::new(spec, cap), 20_000, depth, 4096, |i| random(i, cap)));
        let in_order = FlashSpec { reorder: false, ..NVME_970_EVO_PLUS };
        // QD1: nothing to pass, the same either way: command, tR, channel, link (~55 µs).
        assert_eq!(at(NVME_970_EVO_PLUS, 1), at(in_order, 1));
        assert!((17_000..19_000).contains(&at(NVME_970_EVO_PLUS, 1)), "QD1: {}", at(NVME_970_EVO_PLUS, 1));
        // QD128: in arrival order a read behind a busy die holds up its channel and the link
        // for every read after it; reordered, the 32 dies stay nearly busy.
        let (reordered, fifo) = (at(NVME_970_EVO_PLUS, 128), at(in_order, 128));
        assert!(reordered > 3 * fifo / 2, "QD128: {reordered} reordered, {fifo} in arrival order");
        assert!((450_000..605_000).contains(&reordered), "QD128: {reordered} IOPS (32 dies: at most ~605,000)");
    }

    #[test]
    fn a_deep_queue_of_random_reads_uses_the_channels_at_once() {
        let qd1 = iops(2_000, run(&mut Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS), 2_000, 1, 4096, scattered));
        let qd32 = iops(2_000, run(&mut Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS), 2_000, 32, 4096, scattered));
        // At QD1 each read pays command, tR, the channel and the link in turn (~165 µs).
        assert!((5_000..7_000).contains(&qd1), "QD1: {qd1} IOPS");
        // At QD32 the dies and channels overlap: the controller's command rate is the bound.
        assert!(qd32 > 5 * qd1, "QD32 {qd32} against QD1 {qd1}");
        assert!(qd32 <= 35_000, "QD32: {qd32} IOPS beyond the controller's rate");
    }

    #[test]
    fn a_larger_request_reads_on_more_channels_at_once() {
        // A fresh drive each time, reads far apart: no read-ahead helps either size.
        let mb_s = |bytes: u64| {
            let t = run(&mut Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS), 200, 1, bytes, |i| i * 65_536);
            200 * bytes * NS_PER_S / t.ns() / 1_000_000
        };
        let (small, mid, large) = (mb_s(4096), mb_s(65_536), mb_s(1 << 20));
        assert!(mid > 4 * small, "64 KiB {mid} MB/s against 4 KiB {small} MB/s");
        assert!(large > mid && large <= 250, "1 MiB {large} MB/s (the data path: 250)");
    }

    #[test]
    fn the_drive_reads_ahead_of_a_sequential_stream() {
        let seq = run(&mut Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS), 2_000, 1, 4096, |i| i * 8);
        let rnd = run(&mut Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS), 2_000, 1, 4096, scattered);
        assert!(seq.ns() * 2 < rnd.ns(), "sequential {seq:?} against random {rnd:?}");
        // The 830's 8 KiB pages: two 4 KiB reads of one page, the second from the buffer.
        let seq830 = run(&mut Nand::new(SSD_830, SSD_CAPACITY_SECTORS), 2_000, 1, 4096, |i| i * 8);
        assert!(iops(2_000, seq830) > 2 * iops(2_000, rnd), "830 sequential {seq830:?}");
    }

    #[test]
    fn the_buffers_stay_within_their_bounds() {
        let mut d = Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS);
        let mut now = SimTime::ZERO;
        for i in 0..5_000u64 {
            let write = i % 3 != 0;
            let cmd = Cmd { req: ReqId(0), sector: i * 8, bytes: 4096 * (1 + i % 5), write, queued_at: now };
            let done = d.service(now, &cmd);
            assert!(done > now, "a command takes time");
            assert!(d.programs.len() <= d.dies(), "write buffer: {} units", d.programs.len());
            assert!(d.ra_ready.len() <= SSD_X25M_G2.readahead_pages as usize + 1, "read-ahead: {} pages", d.ra_ready.len());
            now = now + 10_000;
        }
        // Sequential writes run at the data path's 100 MB/s, not faster.
        let mut d = Nand::new(SSD_X25M_G2, SSD_CAPACITY_SECTORS);
        let mut t = SimTime::ZERO;
        for i in 0..400u64 {
            t = d.service(t, &Cmd { req: ReqId(0), sector: i * 256, bytes: 131_072, write: true, queued_at: t });
        }
        let mb_s = 400 * 131_072 * NS_PER_S / t.ns() / 1_000_000;
        assert!((80..=100).contains(&mb_s), "sequential writes: {mb_s} MB/s");
    }
}
