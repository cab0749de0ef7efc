//! Read-only views for the UI: the stack's topology (static, from the scenario) and a
//! top-like list of threads. Together with the trace and the reports, this is all the UI sees.

use crate::block::{BlockDev, DevKind};
use crate::engine::Sim;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DevView {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub host: u16,
    pub nr_requests: u32,
    pub queue_depth: u32,
    pub max_sectors_kb: u32,
    /// For a stacking device (dm-*, md*): the devices it maps onto, by index in `devices`.
    pub lower: Vec<u16>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostView {
    pub can_queue: u32,
    pub irq_cpu: u16,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub cores: u16,
    /// The disks (sd*), bottom of the stack; the diagram's columns.
    pub devices: Vec<DevView>,
    /// The stacking devices above them (dm-*, md*), in iostat order after the disks.
    pub upper: Vec<DevView>,
    pub hosts: Vec<HostView>,
    /// Job processes: (name, pid), in job order.
    pub processes: Vec<(String, u32)>,
    /// Each process's job section in the job file (0: the first), in the same order: the
    /// page colours a process by its job.
    #[serde(default)]
    pub process_jobs: Vec<u16>,
    pub disk_kind: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadView {
    pub name: String,
    pub pid: u32,
    pub state: char,
    pub cpu_ns: u64,
    pub home_cpu: u16,
}

fn dev_view(d: &BlockDev, tag_sets: &[crate::block::blk_mq_tag::BlkMqTagSet]) -> DevView {
    let (host, lower) = match &d.kind {
        DevKind::Sd { host, .. } => (host.0, Vec::new()),
        DevKind::Nvme { .. } => (0, Vec::new()),
        DevKind::DmMpath { paths, .. } => (0, paths.iter().map(|p| p.0).collect()),
        DevKind::Md { members } => (0, members.iter().map(|p| p.0).collect()),
        DevKind::DmLinear { lower } => (0, vec![lower.0]),
    };
    DevView {
        name: d.name.clone(),
        major: d.major,
        minor: d.minor,
        host,
        // blk-mq: the requests are the tags of its tag set (nr_requests = the set's depth).
        nr_requests: match &d.queue.mq {
            Some(m) => tag_sets.get(m.set as usize).map_or(0, |t| t.depth()),
            None => d.queue.nr_requests,
        },
        queue_depth: d.queue.mq.as_ref().map_or(d.queue.tags.depth(), |m| m.device_depth),
        max_sectors_kb: (d.queue.max_sectors_bytes / 1024) as u32,
        lower,
    }
}

impl Sim {
    pub fn topology(&self) -> Topology {
        let s = &self.config().scenario;
        Topology {
            cores: self.cores.len() as u16,
            devices: self.devs.iter().filter(|d| d.is_leaf()).map(|d| dev_view(d, &self.tag_sets)).collect(),
            upper: self.devs.iter().filter(|d| !d.is_leaf()).map(|d| dev_view(d, &self.tag_sets)).collect(),
            hosts: self.hosts_view(),
            processes: self.jobs.iter().map(|j| (self.threads[j.tid].name.clone(), self.threads[j.tid].pid)).collect(),
            process_jobs: self.jobs.iter().map(|j| j.run.section).collect(),
            disk_kind: crate::scenario::knob_table::DISK_KIND.get(s),
        }
    }

    /// The SCSI hosts, when a disk sits on one: NVMe drives are on PCIe, and a stack of them
    /// has no host to show (the scenario's HBAs carry none of their commands).
    fn hosts_view(&self) -> Vec<HostView> {
        if !self.devs.iter().any(|d| matches!(d.kind, DevKind::Sd { .. })) {
            return Vec::new();
        }
        self.hosts.iter().map(|h| HostView { can_queue: h.can_queue(), irq_cpu: h.irq_cpu.0 }).collect()
    }

    /// Every thread with its state letter as top shows it.
    pub fn threads_view(&self) -> Vec<ThreadView> {
        self.threads
            .iter()
            .enumerate()
            .map(|(i, t)| ThreadView {
                name: t.name.clone(),
                pid: t.pid,
                state: self.state_letter(i),
                cpu_ns: t.cpu_ns,
                home_cpu: t.home.0,
            })
            .collect()
    }

    /// Every thread's state letter as top shows it, in thread order (ASCII).
    pub(crate) fn top_states(&self) -> Vec<u8> {
        (0..self.threads.len()).map(|i| self.state_letter(i) as u8).collect()
    }

    /// The pids of the threads in D now (asleep in `io_schedule`, waiting for I/O or a
    /// request), for the diagram's `zz` by a process.
    pub fn pids_in_d(&self) -> Vec<u32> {
        (0..self.threads.len()).filter(|&i| self.state_letter(i) == 'D').map(|i| self.threads[i].pid).collect()
    }

    /// Which thread each core runs now, by thread id (None: idle), for the CPU strips.
    pub fn core_threads(&self) -> Vec<Option<u32>> {
        self.cores.iter().map(|c| if c.busy { c.current.filter(|t| !self.has_exited(t.idx())).map(|t| t.0) } else { None }).collect()
    }

    /// Thread `i`'s state as top shows it, X once it has exited (the one rule the thread list,
    /// the state letters and the diagram's sleepers share).
    fn state_letter(&self, i: usize) -> char {
        if self.has_exited(i) {
            'X'
        } else {
            self.threads[i].top_state()
        }
    }

    /// A job's process has exited, or the run is over and its job was done: the run stops at
    /// the last job's last I/O, before its process gets to run its exit, which the views
    /// show as done.
    fn has_exited(&self, thread: usize) -> bool {
        let t = &self.threads[thread];
        t.state == crate::kernel::sched::ThreadState::Exited
            || (self.is_finished() && matches!(t.kind, crate::kernel::sched::ThreadKind::User(j) if self.jobs[j].done_at.is_some()))
    }

    /// Head position as a fraction of the stroke, per leaf device (the disk behind each path).
    pub fn head_positions(&self) -> Vec<f64> {
        self.devs.iter().filter(|d| d.is_leaf()).map(|d| self.disks[d.disk().expect("a leaf has a drive")].head_position()).collect()
    }
}

/// How full each pool and queue of a device is now: the slot bars of the diagram.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DevOccupancy {
    /// Requests allocated from the pool, per direction (read, write).
    pub pool: [u32; 2],
    /// The most a direction may hold (`RequestQueue::pool_max`): past nr_requests, batching
    /// processes may go up to it (3/2 of nr_requests from 2.6.13, else BLK_BATCH_REQ each).
    pub pool_max: u32,
    /// Requests waiting in the elevator.
    pub elevator: u32,
    /// Tags in use (commands issued to the device).
    pub tags: u32,
    /// Commands inside the drive (queued or on the media).
    pub in_drive: u32,
    /// Pids sleeping for this queue: in `get_request_wait` (legacy pool) or in blk-mq's
    /// `bt_get` (no free tag).
    pub sleepers: Vec<u32>,
    /// Request-based dm over blk-mq: requests queued to its kdmwork thread.
    pub kdm_queued: u32,
    /// md RAID5: stripe heads active and `stripe_cache_size`, and pids on `wait_for_stripe`.
    pub stripes_active: u32,
    pub stripes_max: u32,
    pub stripe_sleepers: Vec<u32>,
    /// blk-mq: each hardware queue's tag map, software queue, dispatch list (parked
    /// leftovers of a BUSY run), whether it is STOPPED, and the pids asleep on its tag map.
    pub hctx: Vec<HctxOccupancy>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HctxOccupancy {
    pub tags: u32,
    pub depth: u32,
    pub queued: u32,
    pub stopped: bool,
    pub sleepers: Vec<u32>,
    /// The requests on its dispatch list (a BUSY run's leftovers), in list order. A tagged one
    /// holds a tag of this map all the while; a mempool clone (`dm.clone_alloc = mempool`)
    /// parks without one, so the list is bounded by the requests the stack above allocates,
    /// not by `depth`.
    pub parked: Vec<ParkedRequest>,
}

/// A request on a hardware queue's dispatch list: its id (as in the trace), what it asks
/// for, whether it holds a tag, and when it was allocated (ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ParkedRequest {
    pub id: u32,
    pub write: bool,
    pub sector: u64,
    pub bytes: u32,
    pub tagged: bool,
    pub alloc_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostOccupancy {
    pub busy: u32,
    /// Names of the devices on the host's starved list, in list order.
    pub starved: Vec<String>,
}

impl Sim {
    pub fn occupancy(&self) -> (Vec<DevOccupancy>, Vec<HostOccupancy>) {
        let devs = self
            .devs
            .iter()
            .map(|d| DevOccupancy {
                pool: d.queue.mq.as_ref().map_or(d.queue.pool_count, |m| [m.tags_busy(), 0]),
                pool_max: d.queue.pool_max(self.threads.len()),
                elevator: d
                    .queue
                    .mq
                    .as_ref()
                    .map_or(d.queue.elevator.len() as u32, |m| m.hctx.iter().map(|h| (h.queued.len() + h.dispatch.len()) as u32).sum()),
                tags: d.queue.mq.as_ref().map_or(d.queue.tags.busy(), |m| m.device_busy),
                hctx: d
                    .queue
                    .mq
                    .iter()
                    .flat_map(|m| m.hctx.iter().enumerate().map(move |(i, h)| (m, i, h)))
                    .map(|(m, i, h)| self.hctx_occupancy(m, i, h))
                    .collect(),
                in_drive: match d.kind {
                    DevKind::Sd { disk, .. } | DevKind::Nvme { disk } => self.disks[disk].outstanding() as u32,
                    _ => 0,
                },
                sleepers: d
                    .queue
                    .waiters
                    .iter()
                    .flatten()
                    .copied()
                    .chain(d.queue.mq.iter().flat_map(|m| self.tag_set_sleepers(m, &d.name)))
                    .map(|t| self.threads[t].pid)
                    .collect(),
                ..Default::default()
            })
            .collect::<Vec<_>>();
        let mut devs = devs;
        for (o, d) in devs.iter_mut().zip(&self.devs) {
            if let Some(k) = &d.kdm {
                o.kdm_queued = k.queue.len() as u32;
            }
        }
        for r in &self.md.raid5 {
            let o = &mut devs[r.dev.idx()];
            o.stripes_active = r.active;
            o.stripes_max = r.max_stripes;
            // The threads asleep on wait_for_stripe (a woken one checking again is not).
            o.stripe_sleepers = r
                .waiters
                .iter()
                .filter(|t| self.threads[**t].wait == Some(crate::kernel::sched::Wait::Stripe))
                .map(|t| self.threads[*t].pid)
                .collect();
        }
        let hosts = self
            .hosts
            .iter()
            .map(|h| HostOccupancy { busy: h.busy(), starved: h.starved().map(|d| self.devs[d].name.clone()).collect() })
            .collect();
        (devs, hosts)
    }

    /// The sleepers on the driver tag maps of a blk-mq queue's tag set that wait for a tag of
    /// this queue (`name`), not another LUN's on a shared set.
    fn tag_set_sleepers(&self, m: &crate::block::blk_mq::BlkMq, name: &str) -> Vec<crate::engine::ids::ThreadId> {
        let mine = |t: &crate::engine::ids::ThreadId| match self.threads[*t].wait {
            Some(crate::kernel::sched::Wait::Tag { dev }) => self.devs[dev].name == name,
            _ => true,
        };
        self.tag_sets.get(m.set as usize).map_or(Vec::new(), |set| set.tags.iter().flat_map(|t| t.wait.sleepers()).filter(mine).collect())
    }

    /// A blk-mq hardware queue's tags (those its requests hold, out of its map's depth), its
    /// requests, and the sleepers on its map (on a shared set, every LUN's).
    fn hctx_occupancy(&self, m: &crate::block::blk_mq::BlkMq, i: usize, h: &crate::block::blk_mq::Hctx) -> HctxOccupancy {
        let tags = self.tag_sets.get(m.set as usize).map(|set| &set.tags[set.map_of(i as u16)]);
        HctxOccupancy {
            tags: h.tags_held,
            depth: tags.map_or(0, |t| t.map.depth()),
            queued: h.queued.len() as u32,
            stopped: h.stopped,
            sleepers: tags.into_iter().flat_map(|t| t.wait.sleepers()).map(|t| self.threads[t].pid).collect(),
            parked: h
                .dispatch
                .iter()
                .map(|rq| {
                    let r = self.reqs.get(rq.0);
                    ParkedRequest {
                        id: rq.0,
                        write: r.write,
                        sector: r.sector,
                        bytes: r.bytes as u32,
                        tagged: r.tag.is_some(),
                        alloc_ns: r.alloc_at.ns(),
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::time::SimTime;
    use crate::engine::Sim;

    /// The diagram's `zz` by a process: the threads top shows in D, by pid (anatomy's four
    /// readers, asleep on their reads a second in).
    #[test]
    fn pids_in_d_are_the_threads_top_shows_in_d() {
        let cfg = crate::course::lessons::find("anatomy-of-a-request").unwrap().config("small-pool", &[]).unwrap();
        let mut sim = Sim::new(&cfg, 1);
        sim.run_until(SimTime::from_secs_f64(1.0));
        let in_d: Vec<u32> = sim.threads_view().iter().filter(|t| t.state == 'D').map(|t| t.pid).collect();
        assert!(!in_d.is_empty());
        assert_eq!(sim.pids_in_d(), in_d);
    }

    /// The diagram's host row: SCSI disks sit on a host, an NVMe drive on none.
    #[test]
    fn a_stack_of_nvme_drives_shows_no_scsi_host() {
        let topology = |kind: &str| {
            let mut s = crate::scenario::Scenario::default();
            crate::scenario::set_knob(&mut s, "disk.kind", kind).unwrap();
            Sim::new(&s.validate().unwrap(), 1).topology()
        };
        assert!(topology("nvme").hosts.is_empty());
        let hdd = topology("hdd");
        assert!(!hdd.hosts.is_empty() && hdd.hosts[0].can_queue > 0);
    }
}
