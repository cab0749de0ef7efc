//! Flash and RAM-backed LUNs (the SATA SSD and the RAM LUN): a fixed latency per command,
//! then a shared transfer path; the SSD's random writes also pass its flash translation
//! layer one at a time (not kernel code; figures in `calib.rs`).

use super::{transfer_ns, Cmd};
use crate::engine::time::SimTime;

#[derive(Clone, Debug)]
pub(crate) struct Ssd {
    /// The shared transfer path is busy until then.
    pipe_free_at: SimTime,
    read_ns: u64,
    write_ns: u64,
    read_rate: u64,
    write_rate: u64,
    /// The FTL's time for a write that does not continue the last (0: none, the RAM LUN).
    random_write_ns: u64,
    /// The FTL is busy with random writes until then.
    ftl_free_at: SimTime,
    /// Where the last write ended.
    last_write_end: Option<u64>,
}

impl Ssd {
    pub(crate) fn new(read_ns: u64, write_ns: u64, read_rate: u64, write_rate: u64, random_write_ns: u64) -> Ssd {
        Ssd {
            pipe_free_at: SimTime::ZERO,
            read_ns,
            write_ns,
            read_rate,
            write_rate,
            random_write_ns,
            ftl_free_at: SimTime::ZERO,
            last_write_end: None,
        }
    }

    /// When a command started at `now` is done: the device's latency, then its turn on the
    /// shared transfer path.
    pub(crate) fn service(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        let (lat, rate) = if cmd.write { (self.write_ns, self.write_rate) } else { (self.read_ns, self.read_rate) };
        let mut ready = now + lat;
        if cmd.write {
            // A random write waits its turn in the FTL, which takes one at a time.
            if self.random_write_ns > 0 && self.last_write_end != Some(cmd.sector) {
                let ftl_start = now.max(self.ftl_free_at);
                self.ftl_free_at = ftl_start + self.random_write_ns;
                ready = ready.max(self.ftl_free_at);
            }
            self.last_write_end = Some(cmd.sector + cmd.bytes / 512);
        }
        let start = ready.max(self.pipe_free_at);
        self.pipe_free_at = start + transfer_ns(cmd.bytes, rate);
        self.pipe_free_at
    }
}
