//! Flash and RAM-backed LUNs (the SATA SSD and the RAM LUN): a fixed latency per command,
//! then a shared transfer path (not kernel code; figures in `calib.rs`).

use super::{transfer_ns, Cmd};
use crate::engine::time::SimTime;

#[derive(Debug)]
pub(crate) struct Ssd {
    /// The shared transfer path is busy until then.
    pipe_free_at: SimTime,
    read_ns: u64,
    write_ns: u64,
    read_rate: u64,
    write_rate: u64,
}

impl Ssd {
    pub(crate) fn new(read_ns: u64, write_ns: u64, read_rate: u64, write_rate: u64) -> Ssd {
        Ssd { pipe_free_at: SimTime::ZERO, read_ns, write_ns, read_rate, write_rate }
    }

    /// When a command started at `now` is done: the device's latency, then its turn on the
    /// shared transfer path.
    pub(crate) fn service(&mut self, now: SimTime, cmd: &Cmd) -> SimTime {
        let (lat, rate) = if cmd.write { (self.write_ns, self.write_rate) } else { (self.read_ns, self.read_rate) };
        let start = (now + lat).max(self.pipe_free_at);
        self.pipe_free_at = start + transfer_ns(cmd.bytes, rate);
        self.pipe_free_at
    }
}
