//! btt's sums per device, from the trace: the time each request seen whole spent in each phase.
//! A bio-based device (dm-linear, md) traces only Q and C for its bios, so for it, as in btt's
//! own Q2C of such a device, only Q2C is summed, over the bios seen whole.

use super::TraceView;
use blksim::kernel::trace::blktrace::{Action, TraceRecord};

/// btt-style sums per device over the requests seen whole in the trace (Q, G, I, D, C).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Btt {
    pub requests: u64,
    pub q2g_ns: u64,
    pub g2i_ns: u64,
    pub i2d_ns: u64,
    pub d2c_ns: u64,
    pub q2c_ns: u64,
    /// True for a bio-based device: `requests` counts bios, and only `q2c_ns` is summed.
    pub bio_level: bool,
}

impl Btt {
    /// Average of one phase in ms.
    pub fn avg_ms(&self, sum_ns: u64) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            sum_ns as f64 / self.requests as f64 / 1e6
        }
    }
}

impl TraceView {
    /// Adds a trace record to the btt sums: a request's Q, G, I and D times are kept until its C
    /// adds them up. Bios and requests are kept by device and id: the two are separate
    /// numberings, and a remapped bio is queued again on the device below.
    pub(super) fn account_btt(&mut self, r: &TraceRecord) {
        let t = r.time.ns();
        match r.action {
            Action::Q => {
                self.bio_queued_at.insert((r.dev.0, r.token), [t, 0, 0, 0]);
            }
            Action::M | Action::F => {
                self.bio_queued_at.remove(&(r.dev.0, r.token));
            }
            Action::G => {
                self.request_devs.insert(r.dev.0);
                if let Some([q, ..]) = self.bio_queued_at.remove(&(r.dev.0, r.related)) {
                    self.rq_times.insert((r.dev.0, r.token), [q, t, 0, 0]);
                }
            }
            Action::I => {
                if let Some(x) = self.rq_times.get_mut(&(r.dev.0, r.token)) {
                    x[2] = t;
                }
            }
            Action::D => {
                if let Some(x) = self.rq_times.get_mut(&(r.dev.0, r.token)) {
                    x[3] = t;
                }
            }
            Action::C if self.request_devs.contains(&r.dev.0) => {
                if let Some([q, g, i, d]) = self.rq_times.remove(&(r.dev.0, r.token)) {
                    if i > 0 && d > 0 {
                        let b = self.btt.entry(r.dev.0).or_default();
                        b.requests += 1;
                        b.q2g_ns += g - q;
                        b.g2i_ns += i - g;
                        b.i2d_ns += d - i;
                        b.d2c_ns += t - d;
                        b.q2c_ns += t - q;
                    }
                }
            }
            Action::C => {
                // A bio-based device's bio, from its Q on this device to its C here.
                if let Some([q, ..]) = self.bio_queued_at.remove(&(r.dev.0, r.token)) {
                    let b = self.btt.entry(r.dev.0).or_default();
                    b.bio_level = true;
                    b.requests += 1;
                    b.q2c_ns += t - q;
                }
            }
            _ => {}
        }
    }
}
