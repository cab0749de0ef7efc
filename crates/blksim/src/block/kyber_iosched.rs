//! `block/kyber-iosched.c` as v5.10 has it (kyber came in 4.12, throttling on the mean latency
//! of `blk_stat`; the latency histograms and `kyber_timer_fn` came with "kyber: implement
//! improved heuristics", 4.18 INFERRED from its merge window, and mainline keeps them as read):
//! a blk-mq scheduler that bounds latency by bounding how many requests of each kind are on the
//! device. Requests fall in four scheduling domains (READ, WRITE, DISCARD, OTHER); a request
//! leaves the scheduler only with a token of its domain (`domain_tokens`, a queue-wide sbitmap of
//! `kyber_depth` tokens at most). Each hardware queue keeps per-CPU lists (`kcqs`) and its own
//! per-domain lists (`rqs`), and dispatches a batch (`kyber_batch_size`) from one domain before
//! moving to the next (`cur_domain`). Completions record each request's total latency (from
//! allocation) and I/O latency (from `blk_mq_start_request`) in histograms of 8 buckets, a
//! quarter of the domain's target wide; `kyber_timer_fn`, 100 ms after a completion, takes the
//! I/O latency's p90 to see whether the device is congested and each domain's total p99 to
//! scale its depth (`kyber_resize_domain`): down for a domain within its target while another
//! is congested, up for one past it.
//!
//! Not modelled: the per-CPU histograms are one (their sum is what the timer reads); merges
//! (`kyber_bio_merge` looks only at the submitting CPU's list of the bio's domain) use the
//! elevator's common merge candidates, every request still in kyber; the async limit on
//! scheduler tags (`kyber_limit_depth`: 75% of each sbitmap word for async requests; the model's
//! direct I/O is sync); discards and flushes (only READ and WRITE domains receive requests).

use crate::engine::event::Event;
use crate::engine::ids::*;
use crate::engine::time::{Fired, OneShotTimer, SimTime, NS_PER_MS, NS_PER_S};
use crate::engine::Sim;
use std::collections::{BTreeMap, VecDeque};

pub const KYBER_READ: usize = 0;
pub const KYBER_WRITE: usize = 1;
pub const KYBER_DISCARD: usize = 2;
pub const KYBER_OTHER: usize = 3;
pub const KYBER_NUM_DOMAINS: usize = 4;

/// `kyber_depth`: each domain's most tokens (device-wide), and its depth at start.
pub const KYBER_DEPTH: [u32; KYBER_NUM_DOMAINS] = [256, 128, 64, 16];
/// `kyber_batch_size`: requests dispatched in a row from one domain.
pub const KYBER_BATCH_SIZE: [u32; KYBER_NUM_DOMAINS] = [16, 8, 1, 1];
/// `kyber_latency_targets`: READ 2 ms, WRITE 10 ms, DISCARD 5 s (the first two are the sysfs
/// `read_lat_nsec` and `write_lat_nsec`).
pub const KYBER_LATENCY_TARGETS: [u64; KYBER_OTHER] = [2 * NS_PER_MS, 10 * NS_PER_MS, 5 * NS_PER_S];

/// A bucket is `1 / (1 << KYBER_LATENCY_SHIFT)` of the target wide.
pub const KYBER_LATENCY_SHIFT: u32 = 2;
/// The first buckets, up to the target, are "good".
pub const KYBER_GOOD_BUCKETS: usize = 1 << KYBER_LATENCY_SHIFT;
pub const KYBER_LATENCY_BUCKETS: usize = 2 << KYBER_LATENCY_SHIFT;
pub const KYBER_TOTAL_LATENCY: usize = 0;
pub const KYBER_IO_LATENCY: usize = 1;

/// `timer_reduce(&kqd->timer, jiffies + HZ / 10)` in `kyber_completed_request`.
pub const KYBER_TIMER_NS: u64 = 100 * NS_PER_MS;
/// `calculate_percentile`: 500 samples, or one second (`HZ`) after the first.
pub const KYBER_PERCENTILE_SAMPLES: u32 = 500;
pub const KYBER_PERCENTILE_TIMEOUT_NS: u64 = NS_PER_S;

/// `SBQ_WAIT_QUEUES` and `SBQ_WAKE_BATCH` (lib/sbitmap.c, include/linux/sbitmap.h).
const SBQ_WAIT_QUEUES: usize = 8;
const SBQ_WAKE_BATCH: u32 = 8;

/// `kyber_sched_domain`: the model's requests are reads and writes.
pub fn kyber_sched_domain(write: bool) -> usize {
    if write {
        KYBER_WRITE
    } else {
        KYBER_READ
    }
}

/// `add_latency_sample`'s bucket: `(latency - 1) / (target >> 2)`, at most the last.
pub fn latency_bucket(target: u64, latency: u64) -> usize {
    if latency == 0 {
        return 0;
    }
    let divisor = (target >> KYBER_LATENCY_SHIFT).max(1);
    ((latency - 1) / divisor).min(KYBER_LATENCY_BUCKETS as u64 - 1) as usize
}

/// `calculate_percentile`'s walk over a histogram with enough samples: the bucket holding the
/// `percentile`th sample (`DIV_ROUND_UP(samples * percentile, 100)`).
pub fn percentile_bucket(buckets: &[u32; KYBER_LATENCY_BUCKETS], percentile: u32) -> usize {
    let samples: u32 = buckets.iter().sum();
    let mut rank = (samples * percentile).div_ceil(100);
    for (bucket, &n) in buckets.iter().enumerate().take(KYBER_LATENCY_BUCKETS - 1) {
        if n >= rank {
            return bucket;
        }
        rank -= n;
    }
    KYBER_LATENCY_BUCKETS - 1
}

/// One of the 8 wait queues of an sbitmap_queue: hardware queues waiting (`kyber_domain_wake`
/// entries, non-exclusive, so a wakeup wakes them all) and its `wait_cnt`.
#[derive(Clone, Debug, Default)]
struct SbqWaitState {
    wait_cnt: u32,
    waiters: Vec<u16>,
}

/// A domain's tokens (`struct sbitmap_queue`, lib/sbitmap.c): bits below `depth` are handed
/// out, lowest first; a resize keeps the bits held above a lowered depth until they are freed.
/// A free is charged to the first wait queue with waiters from `wake_index` on; after
/// `wake_batch` frees it wakes them all (`__sbq_wake_up`).
#[derive(Clone, Debug)]
pub struct DomainTokens {
    depth: u32,
    busy: u32,
    bits: Vec<u64>,
    ws: [SbqWaitState; SBQ_WAIT_QUEUES],
    wake_batch: u32,
    wake_index: usize,
}

/// `sbq_calc_wake_batch`: `depth / 8`, between 1 and 8.
fn sbq_calc_wake_batch(depth: u32) -> u32 {
    (depth / SBQ_WAIT_QUEUES as u32).clamp(1, SBQ_WAKE_BATCH)
}

impl DomainTokens {
    pub fn new(depth: u32) -> DomainTokens {
        let wake_batch = sbq_calc_wake_batch(depth);
        let mut ws: [SbqWaitState; SBQ_WAIT_QUEUES] = Default::default();
        ws.iter_mut().for_each(|w| w.wait_cnt = wake_batch);
        DomainTokens { depth, busy: 0, bits: vec![0; (depth as usize).div_ceil(64)], ws, wake_batch, wake_index: 0 }
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn busy(&self) -> u32 {
        self.busy
    }

    /// `__sbitmap_queue_get`: the lowest free token below the depth.
    pub fn get(&mut self) -> Option<u16> {
        for (w, word) in self.bits.iter_mut().enumerate() {
            if *word == u64::MAX {
                continue;
            }
            let b = (!*word).trailing_zeros();
            let nr = w as u32 * 64 + b;
            if nr >= self.depth {
                return None;
            }
            *word |= 1 << b;
            self.busy += 1;
            return Some(nr as u16);
        }
        None
    }

    /// `sbitmap_queue_clear`: the token back, and the hardware queues its wakeup wakes.
    pub fn clear(&mut self, nr: u16) -> Vec<u16> {
        let (w, b) = (nr as usize / 64, nr % 64);
        assert!(self.bits[w] & (1 << b) != 0, "domain token {nr} freed twice");
        self.bits[w] &= !(1 << b);
        self.busy -= 1;
        let Some(i) = (0..SBQ_WAIT_QUEUES).map(|k| (self.wake_index + k) % SBQ_WAIT_QUEUES).find(|&i| !self.ws[i].waiters.is_empty())
        else {
            return Vec::new();
        };
        self.wake_index = i;
        let ws = &mut self.ws[i];
        ws.wait_cnt = ws.wait_cnt.saturating_sub(1);
        if ws.wait_cnt > 0 {
            return Vec::new();
        }
        ws.wait_cnt = self.wake_batch;
        self.wake_index = (i + 1) % SBQ_WAIT_QUEUES;
        std::mem::take(&mut ws.waiters)
    }

    /// `sbitmap_queue_resize`: a new depth (within the bits allocated at init) and wake batch;
    /// a changed batch sets every wait count to 1 (`sbitmap_queue_update_wake_batch`).
    pub fn resize(&mut self, depth: u32) {
        assert!(depth as usize <= self.bits.len() * 64, "a domain resized past its kyber_depth");
        self.depth = depth;
        let wake_batch = sbq_calc_wake_batch(depth);
        if wake_batch != self.wake_batch {
            self.wake_batch = wake_batch;
            self.ws.iter_mut().for_each(|w| w.wait_cnt = 1);
        }
    }

    /// `sbitmap_add_wait_queue` on wait queue `i`.
    fn add_wait(&mut self, i: usize, h: u16) {
        assert!(!self.ws[i].waiters.contains(&h), "a hardware queue waits once per domain");
        self.ws[i].waiters.push(h);
    }

    /// `sbitmap_del_wait_queue`.
    fn del_wait(&mut self, i: usize, h: u16) {
        self.ws[i].waiters.retain(|&w| w != h);
    }

    fn waiters(&self) -> usize {
        self.ws.iter().map(|w| w.waiters.len()).sum()
    }
}

/// `struct kyber_hctx_data`: one hardware queue's lists and where its dispatch is.
#[derive(Clone, Debug)]
pub struct KyberHctxData {
    /// `khd->rqs`: requests flushed from the per-CPU lists, per domain.
    rqs: [VecDeque<ReqId>; KYBER_NUM_DOMAINS],
    pub cur_domain: usize,
    pub batching: u32,
    /// `khd->kcqs`: per CPU (by CPU number; the hardware queue's own CPUs are used), per
    /// domain, the requests inserted there.
    kcqs: Vec<[VecDeque<ReqId>; KYBER_NUM_DOMAINS]>,
    /// `khd->domain_wait[d]`: on wait queue `Some(i)` of domain `d`'s tokens.
    domain_ws: [Option<usize>; KYBER_NUM_DOMAINS],
    /// `khd->wait_index[d]`: the wait queue `sbq_wait_ptr` gives next.
    wait_index: [usize; KYBER_NUM_DOMAINS],
}

impl KyberHctxData {
    fn new(cores: usize) -> KyberHctxData {
        KyberHctxData {
            rqs: Default::default(),
            cur_domain: 0,
            batching: 0,
            kcqs: vec![Default::default(); cores],
            domain_ws: [None; KYBER_NUM_DOMAINS],
            wait_index: [0; KYBER_NUM_DOMAINS],
        }
    }

    fn len(&self) -> usize {
        self.rqs.iter().map(VecDeque::len).sum::<usize>() + self.kcqs.iter().flatten().map(VecDeque::len).sum::<usize>()
    }
}

/// `struct kyber_queue_data`: the queue-wide tokens, histograms, targets and timer, with each
/// hardware queue's `kyber_hctx_data`.
#[derive(Clone, Debug)]
pub struct KyberQueueData {
    pub domain_tokens: [DomainTokens; KYBER_NUM_DOMAINS],
    /// `latency_buckets[domain][type]` (the per-CPU histograms summed as they are filled).
    pub latency_buckets: [[[u32; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
    /// `latency_timeout`: when a histogram with few samples is read anyway.
    latency_timeout: [Option<SimTime>; KYBER_OTHER],
    /// `domain_p99`: the last p99 bucket, kept for the next congestion (-1: none).
    pub domain_p99: [i32; KYBER_OTHER],
    /// `latency_targets` (ns).
    pub latency_targets: [u64; KYBER_OTHER],
    pub timer: OneShotTimer,
    pub khd: Vec<KyberHctxData>,
    /// `rq->elv.priv[0]`: the domain token each dispatched request holds, by request id.
    token_of: BTreeMap<u32, (usize, u16)>,
    /// `rq->io_start_time_ns`, by request id, from `blk_mq_start_request`.
    io_start: BTreeMap<u32, SimTime>,
}

impl KyberQueueData {
    /// `kyber_init_sched` and `kyber_init_hctx` for `nr_hw` hardware queues over `cores` CPUs,
    /// with the sysfs targets.
    pub fn new(nr_hw: usize, cores: usize, read_lat_nsec: u64, write_lat_nsec: u64) -> KyberQueueData {
        let mut latency_targets = KYBER_LATENCY_TARGETS;
        latency_targets[KYBER_READ] = read_lat_nsec;
        latency_targets[KYBER_WRITE] = write_lat_nsec;
        KyberQueueData {
            domain_tokens: KYBER_DEPTH.map(DomainTokens::new),
            latency_buckets: [[[0; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
            latency_timeout: [None; KYBER_OTHER],
            domain_p99: [-1; KYBER_OTHER],
            latency_targets,
            timer: OneShotTimer::default(),
            khd: (0..nr_hw).map(|_| KyberHctxData::new(cores)).collect(),
            token_of: BTreeMap::new(),
            io_start: BTreeMap::new(),
        }
    }

    /// Requests waiting in kyber, over every hardware queue.
    pub fn len(&self) -> usize {
        self.khd.iter().map(KyberHctxData::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `kyber_insert_requests`: to the tail of its CPU's list of its domain.
    pub fn kyber_insert_requests(&mut self, h: u16, rq: ReqId, write: bool, cpu: usize) {
        let list = &mut self.khd[h as usize].kcqs[cpu][kyber_sched_domain(write)];
        assert!(list.len() < crate::scenario::limits::BIOS_LIVE_MAX, "kyber's per-CPU list over its limit");
        list.push_back(rq);
    }

    /// `kyber_has_work`.
    pub fn kyber_has_work(&self, h: u16) -> bool {
        let khd = &self.khd[h as usize];
        khd.rqs.iter().any(|l| !l.is_empty()) || khd.kcqs.iter().flatten().any(|l| !l.is_empty())
    }

    /// `kyber_dispatch_request`: the batch of the current domain while it lasts, else the next
    /// domain (in turn, back round to the current one) that has a request and a token.
    pub fn kyber_dispatch_request(&mut self, h: u16) -> Option<ReqId> {
        let hi = h as usize;
        let cur = self.khd[hi].cur_domain;
        if self.khd[hi].batching < KYBER_BATCH_SIZE[cur] {
            if let Some(rq) = self.kyber_dispatch_cur_domain(h) {
                return Some(rq);
            }
        }
        self.khd[hi].batching = 0;
        for _ in 0..KYBER_NUM_DOMAINS {
            let khd = &mut self.khd[hi];
            khd.cur_domain = (khd.cur_domain + 1) % KYBER_NUM_DOMAINS;
            if let Some(rq) = self.kyber_dispatch_cur_domain(h) {
                return Some(rq);
            }
        }
        None
    }

    /// `kyber_dispatch_cur_domain`: a flushed request, or (with a token in hand) the per-CPU
    /// lists flushed first; None without a request or a token.
    fn kyber_dispatch_cur_domain(&mut self, h: u16) -> Option<ReqId> {
        let hi = h as usize;
        let d = self.khd[hi].cur_domain;
        if self.khd[hi].rqs[d].is_empty() {
            if self.khd[hi].kcqs.iter().all(|k| k[d].is_empty()) {
                return None;
            }
            let nr = self.kyber_get_domain_token(h)?;
            // kyber_flush_busy_kcqs: every CPU's list of the domain, in CPU order.
            let khd = &mut self.khd[hi];
            for k in 0..khd.kcqs.len() {
                let moved = std::mem::take(&mut khd.kcqs[k][d]);
                khd.rqs[d].extend(moved);
            }
            return Some(self.take(h, d, nr));
        }
        let nr = self.kyber_get_domain_token(h)?;
        Some(self.take(h, d, nr))
    }

    fn take(&mut self, h: u16, d: usize, nr: u16) -> ReqId {
        let khd = &mut self.khd[h as usize];
        khd.batching += 1;
        let rq = khd.rqs[d].pop_front().expect("a request to dispatch");
        assert!(self.token_of.insert(rq.0, (d, nr)).is_none(), "a request holds one domain token");
        rq
    }

    /// `kyber_get_domain_token`: a token of the current domain; without one, the hardware
    /// queue's wait entry goes on the tokens' next wait queue (if not on one already) and it
    /// tries again; with one, the entry comes off.
    fn kyber_get_domain_token(&mut self, h: u16) -> Option<u16> {
        let khd = &mut self.khd[h as usize];
        let d = khd.cur_domain;
        let tokens = &mut self.domain_tokens[d];
        let mut nr = tokens.get();
        if nr.is_none() && khd.domain_ws[d].is_none() {
            let i = khd.wait_index[d];
            khd.wait_index[d] = (i + 1) % SBQ_WAIT_QUEUES;
            khd.domain_ws[d] = Some(i);
            tokens.add_wait(i, h);
            nr = tokens.get();
        }
        if nr.is_some() {
            if let Some(i) = khd.domain_ws[d].take() {
                tokens.del_wait(i, h);
            }
        }
        nr
    }

    /// `kyber_finish_request` (`rq_clear_domain_token`): the token back; returns the hardware
    /// queues whose wait entries its wakeup took off (`kyber_domain_wake` runs each).
    fn kyber_finish_request(&mut self, rq: ReqId) -> Vec<u16> {
        let Some((d, nr)) = self.token_of.remove(&rq.0) else { return Vec::new() };
        let woken = self.domain_tokens[d].clear(nr);
        for &h in &woken {
            self.khd[h as usize].domain_ws[d] = None;
        }
        woken
    }

    /// `add_latency_sample` for both latencies of a completed request of domain `d`.
    fn add_latency_samples(&mut self, d: usize, total: u64, io: u64) {
        let target = self.latency_targets[d];
        self.latency_buckets[d][KYBER_TOTAL_LATENCY][latency_bucket(target, total)] += 1;
        self.latency_buckets[d][KYBER_IO_LATENCY][latency_bucket(target, io)] += 1;
    }

    /// `calculate_percentile`: the bucket of the `percentile`th sample, or -1 before 500
    /// samples or a second since the first; a histogram read is emptied.
    pub fn calculate_percentile(&mut self, d: usize, ty: usize, percentile: u32, now: SimTime) -> i32 {
        let buckets = &mut self.latency_buckets[d][ty];
        let samples: u32 = buckets.iter().sum();
        if samples == 0 {
            return -1;
        }
        let timeout = *self.latency_timeout[d].get_or_insert(now + KYBER_PERCENTILE_TIMEOUT_NS);
        if samples < KYBER_PERCENTILE_SAMPLES && now < timeout {
            return -1;
        }
        self.latency_timeout[d] = None;
        let bucket = percentile_bucket(buckets, percentile);
        *buckets = [0; KYBER_LATENCY_BUCKETS];
        bucket as i32
    }

    /// `kyber_resize_domain`: within 1 and `kyber_depth`.
    pub fn kyber_resize_domain(&mut self, d: usize, depth: u32) {
        let depth = depth.clamp(1, KYBER_DEPTH[d]);
        if depth != self.domain_tokens[d].depth() {
            self.domain_tokens[d].resize(depth);
        }
    }

    /// `kyber_timer_fn`: congestion if any domain's I/O latency p90 is past its target; then
    /// each domain with a p99 (this window's, or the one kept from an earlier window when
    /// congested) is scaled by `(p99 bucket + 1) / 4` if congested or past its own target.
    pub fn kyber_timer_fn(&mut self, now: SimTime) {
        let mut bad = false;
        for d in 0..KYBER_OTHER {
            if self.calculate_percentile(d, KYBER_IO_LATENCY, 90, now) >= KYBER_GOOD_BUCKETS as i32 {
                bad = true;
            }
        }
        for d in 0..KYBER_OTHER {
            let mut p99 = self.calculate_percentile(d, KYBER_TOTAL_LATENCY, 99, now);
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = -1;
            } else if p99 >= 0 {
                self.domain_p99[d] = p99;
            }
            if p99 < 0 {
                continue;
            }
            if bad || p99 >= KYBER_GOOD_BUCKETS as i32 {
                let orig = self.domain_tokens[d].depth();
                self.kyber_resize_domain(d, (orig * (p99 as u32 + 1)) >> KYBER_LATENCY_SHIFT);
            }
        }
    }

    /// The bounds: every waiting request once and live, tokens held by dispatched requests
    /// only, each hardware queue waiting once per domain.
    fn check(&self, live: impl Fn(u32) -> bool, nr_live: usize, nr_hw: usize) {
        assert!(self.len() <= nr_live, "kyber's lists over the live requests");
        assert!(self.io_start.len() <= nr_live, "kyber's I/O starts over the live requests");
        let held: u32 = self.domain_tokens.iter().map(DomainTokens::busy).sum();
        assert_eq!(held as usize, self.token_of.len(), "a domain token without its request");
        assert!(self.token_of.keys().all(|&id| live(id)), "a domain token held by a freed request");
        assert!(self.io_start.keys().all(|&id| live(id)), "an I/O start of a freed request");
        assert!(self.domain_tokens.iter().all(|t| t.waiters() <= nr_hw), "more token waiters than hardware queues");
        for khd in &self.khd {
            assert!(khd.rqs.iter().chain(khd.kcqs.iter().flatten()).flatten().all(|rq| live(rq.0)), "kyber holds a freed request");
        }
    }
}

/// kyber's state for a queue of `nr_hw` hardware queues, if the scenario runs kyber.
pub fn kyber_for(s: &crate::scenario::Scenario, nr_hw: usize) -> Option<Box<KyberQueueData>> {
    let k = &s.queue.kyber;
    (s.queue.scheduler == crate::scenario::Scheduler::Kyber)
        .then(|| Box::new(KyberQueueData::new(nr_hw, s.cpu.cores as usize, k.read_lat_nsec, k.write_lat_nsec)))
}

impl Sim {
    fn kyber(&mut self, dev: DevId) -> Option<&mut KyberQueueData> {
        self.devs[dev].queue.mq_sched.as_mut().and_then(|s| s.kyber.as_deref_mut())
    }

    /// `blk_mq_start_request`'s `io_start_time_ns`, which kyber's I/O latency counts from.
    pub(crate) fn kyber_io_start(&mut self, dev: DevId, rq: ReqId) {
        let now = self.now();
        if let Some(k) = self.kyber(dev) {
            k.io_start.insert(rq.0, now);
        }
    }

    /// `kyber_completed_request` then `kyber_finish_request`, as `__blk_mq_end_request` and
    /// `blk_mq_free_request` call them: both latencies sampled (READ, WRITE), the timer armed
    /// for 100 ms on unless it is due sooner (`timer_reduce`), the domain token freed, and each
    /// hardware queue its wakeup takes off the wait queue run from kblockd
    /// (`kyber_domain_wake`).
    pub(crate) fn kyber_completed_request(&mut self, dev: DevId, rq: ReqId, write: bool, alloc_at: SimTime) {
        let now = self.now();
        let cpu = CoreId(self.current.cpu);
        let Some(k) = self.kyber(dev) else { return };
        let io_start = k.io_start.remove(&rq.0).unwrap_or(alloc_at);
        let d = kyber_sched_domain(write);
        k.add_latency_samples(d, now - alloc_at, now - io_start);
        let at = now + KYBER_TIMER_NS;
        let schedule = !k.timer.is_armed() && k.timer.arm(at, cpu);
        let woken = k.kyber_finish_request(rq);
        if schedule {
            self.events.schedule(at, Event::KyberTimer { dev });
        }
        for h in woken {
            self.blk_mq_run_hw_queue(dev, h, true);
        }
    }

    /// The kyber timer's event.
    pub(crate) fn on_kyber_timer(&mut self, dev: DevId) {
        let now = self.now();
        let Some(k) = self.kyber(dev) else { return };
        match k.timer.fire(now) {
            Fired::Lapsed => {}
            Fired::Later(at) => self.events.schedule(at, Event::KyberTimer { dev }),
            Fired::Due(_) => k.kyber_timer_fn(now),
        }
    }

    /// kyber's bounds on `dev`, if it runs kyber.
    pub(crate) fn check_kyber(&self, dev: DevId) {
        let Some(s) = self.mq_sched(dev) else { return };
        if let Some(k) = s.kyber.as_deref() {
            k.check(|id| self.reqs.is_live(id), self.reqs.live(), s.hctx.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_falls_in_the_quarter_of_the_target_that_holds_it() {
        let t = 2 * NS_PER_MS;
        // Buckets are 500 µs wide: (latency - 1) / 500 µs.
        assert_eq!(latency_bucket(t, 0), 0);
        assert_eq!(latency_bucket(t, 1), 0);
        assert_eq!(latency_bucket(t, 500_000), 0, "<= 1/4 of the target");
        assert_eq!(latency_bucket(t, 500_001), 1);
        assert_eq!(latency_bucket(t, 2_000_000), 3, "the target itself is the last good bucket");
        assert_eq!(latency_bucket(t, 2_000_001), KYBER_GOOD_BUCKETS);
        assert_eq!(latency_bucket(t, 3_500_001), 7);
        assert_eq!(latency_bucket(t, 1_000 * NS_PER_MS), 7, "the last bucket holds everything past 1 3/4");
        // A target under 4 ns has buckets of 1 ns.
        assert_eq!(latency_bucket(3, 5), 4);
    }

    #[test]
    fn the_percentile_is_the_bucket_of_the_rounded_up_rank() {
        // 100 samples: the p90 is the 90th, the p99 the 99th.
        let mut b = [0u32; KYBER_LATENCY_BUCKETS];
        b[0] = 89;
        b[5] = 10;
        b[7] = 1;
        assert_eq!(percentile_bucket(&b, 90), 5);
        assert_eq!(percentile_bucket(&b, 99), 5);
        b[0] = 90;
        b[5] = 9;
        assert_eq!(percentile_bucket(&b, 90), 0);
        // 7 samples: DIV_ROUND_UP(7 * 99, 100) = 7, the last one.
        let c = [6, 0, 0, 0, 0, 0, 1, 0];
        assert_eq!(percentile_bucket(&c, 99), 6);
        assert_eq!(percentile_bucket(&c, 50), 0);
    }

    #[test]
    fn a_histogram_is_read_at_500_samples_or_a_second_after_the_first_and_then_emptied() {
        let mut k = KyberQueueData::new(1, 1, 2 * NS_PER_MS, 10 * NS_PER_MS);
        let t0 = SimTime::ZERO;
        for _ in 0..499 {
            k.add_latency_samples(KYBER_READ, 100_000, 100_000);
        }
        assert_eq!(k.calculate_percentile(KYBER_READ, KYBER_IO_LATENCY, 90, t0), -1, "499 samples, no second yet");
        assert_eq!(k.calculate_percentile(KYBER_READ, KYBER_IO_LATENCY, 90, t0 + (NS_PER_S - 1)), -1);
        assert_eq!(k.calculate_percentile(KYBER_READ, KYBER_IO_LATENCY, 90, t0 + NS_PER_S), 0, "a second after the first read");
        assert_eq!(k.calculate_percentile(KYBER_READ, KYBER_IO_LATENCY, 90, t0 + NS_PER_S), -1, "emptied");
        k.add_latency_samples(KYBER_READ, 100_000, 100_000);
        assert_eq!(k.calculate_percentile(KYBER_READ, KYBER_TOTAL_LATENCY, 99, t0), 0, "500 samples in the total histogram");
    }

    #[test]
    fn congestion_throttles_the_domain_within_its_target_and_eases_the_one_past_it() {
        let mut k = KyberQueueData::new(1, 1, 2 * NS_PER_MS, 10 * NS_PER_MS);
        let now = SimTime(5 * NS_PER_S);
        // Reads: I/O latency 5 ms (past 2 ms: congestion), total p99 bucket 7. Writes: total
        // 4 ms, bucket (4 ms - 1) / 2.5 ms = 1.
        for _ in 0..500 {
            k.add_latency_samples(KYBER_READ, 5 * NS_PER_MS, 5 * NS_PER_MS);
            k.add_latency_samples(KYBER_WRITE, 4 * NS_PER_MS, 3 * NS_PER_MS);
        }
        k.kyber_timer_fn(now);
        assert_eq!(k.domain_tokens[KYBER_WRITE].depth(), 128 * 2 / 4, "writes throttled to (1 + 1) / 4");
        assert_eq!(k.domain_tokens[KYBER_READ].depth(), 256, "reads at their kyber_depth already");
        assert_eq!(k.domain_tokens[KYBER_DISCARD].depth(), 64, "no discards: no samples, no change");
        // Without congestion a domain within its target keeps its depth.
        for _ in 0..500 {
            k.add_latency_samples(KYBER_READ, NS_PER_MS, NS_PER_MS);
            k.add_latency_samples(KYBER_WRITE, 4 * NS_PER_MS, 3 * NS_PER_MS);
        }
        k.kyber_timer_fn(now);
        assert_eq!(k.domain_tokens[KYBER_WRITE].depth(), 64);
        // Writes past their target: (7 + 1) / 4 doubles them.
        for _ in 0..500 {
            k.add_latency_samples(KYBER_WRITE, 50 * NS_PER_MS, 3 * NS_PER_MS);
        }
        k.kyber_timer_fn(now);
        assert_eq!(k.domain_tokens[KYBER_WRITE].depth(), 128);
    }

    #[test]
    fn a_hardware_queue_without_a_token_waits_and_a_freed_token_wakes_it_after_the_wake_batch() {
        let mut k = KyberQueueData::new(1, 1, 2 * NS_PER_MS, 10 * NS_PER_MS);
        k.kyber_resize_domain(KYBER_WRITE, 2);
        for i in 0..3 {
            k.kyber_insert_requests(0, ReqId(i), true, 0);
        }
        let a = k.kyber_dispatch_request(0).unwrap();
        let _b = k.kyber_dispatch_request(0).unwrap();
        assert_eq!(k.kyber_dispatch_request(0), None, "two tokens");
        assert!(k.kyber_has_work(0));
        assert_eq!(k.domain_tokens[KYBER_WRITE].waiters(), 1, "the queue waits for a token");
        // Depth 2: a wake batch of 1.
        assert_eq!(k.kyber_finish_request(a), vec![0]);
        assert_eq!(k.kyber_dispatch_request(0), Some(ReqId(2)));
        assert!(!k.kyber_has_work(0));
    }

    #[test]
    fn reads_and_writes_take_turns_in_batches() {
        let mut k = KyberQueueData::new(1, 2, 2 * NS_PER_MS, 10 * NS_PER_MS);
        for i in 0..20 {
            k.kyber_insert_requests(0, ReqId(i), false, 0);
            k.kyber_insert_requests(0, ReqId(100 + i), true, 1);
        }
        let order: Vec<bool> = (0..40).map(|_| k.kyber_dispatch_request(0).unwrap().0 >= 100).collect();
        // 16 reads, 8 writes, then the 4 reads left, then the rest of the writes.
        assert!(order[..16].iter().all(|&w| !w));
        assert!(order[16..24].iter().all(|&w| w));
        assert!(order[24..28].iter().all(|&w| !w));
        assert!(order[28..].iter().all(|&w| w));
    }
}
