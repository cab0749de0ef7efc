//! What the pointer (or the arrow keys, on the focused diagram) points at. Each frame the
//! diagram records where it drew every pool, tag map, host, stripe cache and request (`Hit`);
//! the tip says which request sits there, whose it is and how long it has waited, from the
//! trace's own times (the Q, G, I and D records btt sums). Nothing here reads the model.

use super::tokens::TokenStage;
use super::RunView;
use crate::format;

/// What was drawn at a place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HitKind {
    /// A request's bar (key: its trace token).
    Request(u32),
    /// A bio's chip.
    Bio(u32),
    /// A column's request pool: its devices (`first..first + count`) and the bar's limit.
    Pool { first: usize, count: usize, limit: u32 },
    /// A column's tag map.
    Tags { first: usize, count: usize, limit: u32 },
    /// One blk-mq hardware queue of device `dev`: its tag map and dispatch list.
    Hctx { dev: usize, hctx: usize },
    /// An HBA's can_queue bar.
    Host(usize),
    /// An md array's stripe cache (index among the stacking devices).
    Stripes(usize),
    /// A row's name: what the row shows.
    Row(crate::layout::Stage),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    pub kind: HitKind,
}

impl Hit {
    fn is_token(&self) -> bool {
        matches!(self.kind, HitKind::Request(_) | HitKind::Bio(_))
    }

    /// Whether (x, y) is on it; a token's few pixels get a margin, so a moving mark can be hit.
    fn contains(&self, x: f64, y: f64) -> bool {
        let m = if self.is_token() { 3.0 } else { 0.0 };
        x >= self.x - m && x <= self.x + self.w + m && y >= self.y - m && y <= self.y + self.h + m
    }

    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// The pointer's place on one diagram and what was drawn there in the last frame.
#[derive(Clone, Debug, Default)]
pub struct Hover {
    /// Where the pointer is (CSS pixels on the canvas), or the keyboard's chosen place.
    pub at: Option<(f64, f64)>,
    /// The keyboard's choice: an index into `hits` (arrow keys on the focused diagram).
    pub focus: Option<usize>,
    /// Everything drawn in the last frame that has a tip, in drawing order.
    pub hits: Vec<Hit>,
}

impl Hover {
    /// The hit under the pointer: the topmost token, else the topmost bar.
    pub fn at_point(&self) -> Option<Hit> {
        let (x, y) = self.at?;
        let on = |tokens: bool| self.hits.iter().rev().find(|h| h.is_token() == tokens && h.contains(x, y)).copied();
        on(true).or_else(|| on(false))
    }

    /// Moves the keyboard's choice by `step` among the bars and the requests drawn now, and
    /// puts the pointer's place on it.
    pub fn step(&mut self, step: i32) {
        let n = self.hits.len() as i32;
        if n == 0 {
            return;
        }
        let i = match self.focus {
            None => 0,
            Some(i) => (i as i32 + step).rem_euclid(n),
        };
        self.focus = Some(i as usize);
        self.at = Some(self.hits[i as usize].centre());
    }
}

fn ms(ns: u64) -> String {
    format::sim_time(ns)
}

impl RunView {
    /// The tip for what is at the pointer, or None.
    pub fn hover_tip(&self) -> Option<String> {
        let hover = self.hover.borrow();
        let hit = hover.at_point()?;
        let x = hover.at.map_or(hit.x, |(x, _)| x);
        Some(self.tip(hit, x))
    }

    fn dev_name(&self, dev: u16) -> &str {
        let n = self.shown.topology.devices.len();
        let d = dev as usize;
        if d < n {
            &self.shown.topology.devices[d].name
        } else {
            self.shown.topology.upper.get(d - n).map_or("?", |u| u.name.as_str())
        }
    }

    /// A process or kernel thread by pid, as top names it ("pdflush (pid 400)").
    fn process_name(&self, pid: u32) -> String {
        self.shown.threads.iter().find(|t| t.pid == pid).map_or_else(|| format!("pid {pid}"), |t| format!("{} (pid {pid})", t.name))
    }

    /// One request: where it is, whose, how big, and how long it has waited there.
    fn request_tip(&self, id: u32) -> String {
        let Some(t) = self.trace.requests.get(&id) else { return format!("request {id}: completed") };
        let now = self.shown.now.ns();
        let [q, g, i, d] = self.trace.rq_times.get(&(t.dev, id)).copied().unwrap_or([0; 4]);
        let what = format!(
            "{}: request {id}, {} {} KiB at sector {}, for {}",
            self.dev_name(t.dev),
            if t.write { "write" } else { "read" },
            t.bytes.div_ceil(1024),
            t.sector,
            self.process_name(t.pid)
        );
        let since = |at: u64| if at > 0 && at <= now { ms(now - at) } else { "since before the trace".into() };
        let r#where = match t.stage {
            TokenStage::Device if d > 0 && q > 0 => {
                format!("on a tag, at the device for {}; it waited {} before (Q2D)", since(d), ms(d.saturating_sub(q)))
            }
            TokenStage::Device => format!("on a tag, at the device for {}", since(d)),
            TokenStage::Done => "completed".into(),
            _ if i > 0 => format!("in the elevator for {} (queued {} ago)", since(i), since(q)),
            _ => format!("allocated {} ago", since(g)),
        };
        format!("{what}: {where}")
    }

    fn bio_tip(&self, id: u32) -> String {
        let Some(t) = self.trace.bios.get(&id) else { return format!("bio {id}: gone") };
        let now = self.shown.now.ns();
        let queued = self
            .trace
            .bio_queued_at
            .get(&(t.dev, id))
            .map_or("before the trace".into(), |&[q, ..]| format!("{} ago", ms(now.saturating_sub(q))));
        let state = match t.stage {
            TokenStage::Sleeping => "its process sleeps in get_request_wait: no free request",
            TokenStage::Merging => "merging into a waiting request",
            _ => "just submitted",
        };
        format!(
            "{}: bio, {} {} KiB at sector {}, from {}, queued {queued}; {state}",
            self.dev_name(t.dev),
            if t.write { "write" } else { "read" },
            t.bytes.div_ceil(1024),
            t.sector,
            self.process_name(t.pid)
        )
    }

    /// The requests of devices `first..first + count` in `stages`, oldest first (by G): the
    /// slots of a pool or tag bar, in the order they were taken.
    fn column_requests(&self, first: usize, count: usize, stages: &[TokenStage], by_d: bool) -> Vec<u32> {
        let mut ids: Vec<(u64, u32)> = self
            .trace
            .requests
            .iter()
            .filter(|(_, t)| (first..first + count).contains(&(t.dev as usize)) && stages.contains(&t.stage))
            .map(|(&id, t)| {
                let [_, g, _, d] = self.trace.rq_times.get(&(t.dev, id)).copied().unwrap_or([0; 4]);
                (if by_d { d } else { g }, id)
            })
            .collect();
        ids.sort_unstable();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    fn names(&self, first: usize, count: usize) -> String {
        let devs = &self.shown.topology.devices;
        match count {
            1 => devs[first].name.clone(),
            _ => format!("{}–{}", devs[first].name, devs[first + count - 1].name),
        }
    }

    /// The requests parked on a hardware queue's dispatch list, first few by name: what each
    /// asks for and how long since it was allocated (a tagged one has held its tag all that
    /// time; a mempool clone parks without one).
    fn parked_words(&self, parked: &[blksim::tools::view::ParkedRequest]) -> String {
        const NAMED_MAX: usize = 3;
        if parked.is_empty() {
            return String::new();
        }
        let now = self.shown.now.ns();
        let named: Vec<String> = parked
            .iter()
            .take(NAMED_MAX)
            .map(|p| {
                let rw = if p.write { "write" } else { "read" };
                let tag = if p.tagged { "" } else { ", no tag yet" };
                format!(
                    "request {} ({rw} {} KiB at sector {}, allocated {} ago{tag})",
                    p.id,
                    p.bytes.div_ceil(1024),
                    p.sector,
                    ms(now.saturating_sub(p.alloc_ns))
                )
            })
            .collect();
        let more = parked.len().saturating_sub(NAMED_MAX);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!("; parked: {}{more}", named.join(", "))
    }

    /// A slot of a bar: the request that holds it, or that it is free.
    fn slot_tip(&self, head: String, used: u32, limit: u32, slot: u32, holders: &[u32]) -> String {
        let at = match holders.get(slot as usize) {
            _ if slot >= used => format!("slot {} of {limit}: free", slot + 1),
            Some(&id) => format!("slot {}: {}", slot + 1, self.request_tip(id)),
            None => format!("slot {}: in use (taken before the animation saw it: no details)", slot + 1),
        };
        format!("{head}; {at}")
    }

    fn tip(&self, hit: Hit, x: f64) -> String {
        let (occ, hosts) = &self.shown.occupancy;
        let slot = |limit: u32| (((x - hit.x) / hit.w.max(1.0)) * limit as f64).clamp(0.0, limit.saturating_sub(1) as f64) as u32;
        match hit.kind {
            HitKind::Row(s) => format!("{}: {}", s.label(), s.explain()),
            HitKind::Request(id) => self.request_tip(id),
            HitKind::Bio(id) => self.bio_tip(id),
            HitKind::Pool { first, count, limit } => {
                let used: u32 = (first..first + count).map(|i| occ[i].pool[0].max(occ[i].pool[1])).sum();
                let sleepers: usize = (first..first + count).map(|i| occ[i].sleepers.len()).sum();
                let mut head = format!("request pool of {}: {used} of {limit} (nr_requests) in use", self.names(first, count));
                if used > limit {
                    // get_request's batching: a process that found the pool full (or slept on it)
                    // may take more while it stays full, up to the queue's pool_max.
                    let max: u32 = (first..first + count).map(|i| occ[i].pool_max).sum();
                    head += &format!(" (more than nr_requests: batching processes may take up to {max} for a while)");
                }
                if sleepers > 0 {
                    head += &format!(", {sleepers} process(es) asleep in get_request_wait");
                }
                let holders = self.column_requests(first, count, &[TokenStage::Elevator, TokenStage::Merging, TokenStage::Device], false);
                self.slot_tip(head, used, limit, slot(limit), &holders)
            }
            HitKind::Tags { first, count, limit } => {
                let used: u32 = (first..first + count).map(|i| occ[i].tags).sum();
                let head = format!("tag map of {}: {used} of {limit} tags (queue_depth) in use", self.names(first, count));
                let holders = self.column_requests(first, count, &[TokenStage::Device], true);
                self.slot_tip(head, used, limit, slot(limit), &holders)
            }
            HitKind::Hctx { dev, hctx } => {
                let Some(o) = occ.get(dev).and_then(|o| o.hctx.get(hctx)) else { return String::new() };
                let sleepers = if o.sleepers.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; asleep on its tag map (bt_get): pid {}",
                        o.sleepers.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    )
                };
                format!(
                    "hctx{hctx} of {}: {} of {} tags in use; {} parked on its dispatch list (a BUSY run's leftovers, run again only when something runs this queue), {} in its software queues; {}{sleepers}{}",
                    self.names(dev, 1),
                    o.tags,
                    o.depth,
                    o.parked.len(),
                    o.queued,
                    if o.stopped { "STOPPED (scsi_queue_rq got BUSY)" } else { "not stopped" },
                    self.parked_words(&o.parked)
                )
            }
            HitKind::Host(h) => {
                let o = hosts.get(h);
                let busy = o.map_or(0, |o| o.busy);
                let can = self.shown.topology.hosts.get(h).map_or(0, |v| v.can_queue);
                let starved = o.map_or(String::new(), |o| {
                    if o.starved.is_empty() {
                        String::new()
                    } else {
                        format!("; on its starved list: {}", o.starved.join(" "))
                    }
                });
                format!("host{h} (HBA): {busy} of {can} commands (can_queue) at its disks{starved}")
            }
            HitKind::Stripes(k) => {
                let n = self.shown.topology.devices.len();
                let o = &occ[n + k];
                format!(
                    "{} stripe cache: {} of {} stripe heads active (stripe_cache_size); {} reader(s) asleep in wait_for_stripe",
                    self.shown.topology.upper.get(k).map_or("md", |u| u.name.as_str()),
                    o.stripes_active,
                    o.stripes_max,
                    o.stripe_sleepers.len()
                )
            }
        }
    }
}
