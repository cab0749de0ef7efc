//! One test per mechanism of the slice, showing the mechanism itself.

use blksim::kernel::trace::blktrace::Action;
use blksim::scenario::{set_knob, Scenario};
use blksim::{Sim, SimTime};

pub(crate) fn sim(knobs: &[(&str, &str)]) -> Sim {
    let mut s = Scenario::default();
    for (k, v) in knobs {
        set_knob(&mut s, k, v).unwrap();
    }
    Sim::new(&s.validate().unwrap(), 1)
}

fn actions(sim: &Sim) -> Vec<Action> {
    sim.trace().since(0).0.map(|r| r.action).collect()
}

#[test]
fn a_full_request_pool_puts_the_submitter_to_sleep_until_a_request_is_freed() {
    // 8 libaio jobs with iodepth 4 against nr_requests 4: most submitters must sleep (S).
    let mut s = sim(&[
        ("workload.numjobs", "8"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "4"),
        ("queue.nr_requests", "4"),
        ("workload.rw", "randread"),
        ("workload.bs", "4k"),
    ]);
    s.run_until(SimTime(200_000_000));
    let a = actions(&s);
    let sleeps = a.iter().filter(|&&x| x == Action::S).count();
    assert!(sleeps > 10, "only {sleeps} sleeps");
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    // Each sleep and wakeup is a context switch, plus the I/O waits themselves.
    assert!(r.cs_per_s > r.iops, "cs/s {} vs IOPS {}", r.cs_per_s, r.iops);
}

#[test]
fn the_tag_map_caps_what_the_device_holds() {
    let mut s = sim(&[("workload.numjobs", "16"), ("workload.rw", "randread"), ("workload.bs", "4k"), ("queue.depth", "2")]);
    let mut max_in_device = 0i64;
    let mut in_device = 0i64;
    let mut cursor = 0;
    while s.now() < SimTime(300_000_000) && s.step() {
        for r in s.trace().since(cursor).0 {
            match r.action {
                Action::D => in_device += 1,
                Action::C => in_device -= 1,
                _ => {}
            }
            max_in_device = max_in_device.max(in_device);
            cursor = r.seq + 1;
        }
    }
    assert_eq!(max_in_device, 2);
}

#[test]
fn a_bio_larger_than_max_sectors_is_split() {
    let mut s = sim(&[("workload.bs", "1m"), ("disk.max_sectors_kb", "128")]);
    s.run_until(SimTime(50_000_000));
    let a = actions(&s);
    let q = a.iter().filter(|&&x| x == Action::Q).count();
    let x = a.iter().filter(|&&x| x == Action::X).count();
    assert!(q >= 8 && x == q - q / 8, "Q {q} X {x}");
    // As blk_queue_split traces it: the whole rest of the read is queued (Q R 0 + 2048), the
    // piece is cut off its front (X R 0 / 256), and the last piece is queued alone, uncut.
    let recs: Vec<_> = s.trace().since(0).0.filter(|r| matches!(r.action, Action::Q | Action::X)).copied().collect();
    let q0 = recs.iter().position(|r| r.action == Action::Q && r.bytes == 1 << 20).expect("a whole 1 MiB read queued");
    let (q, x) = (recs[q0], recs[q0 + 1]);
    assert_eq!((x.action, x.sector, x.from), (Action::X, q.sector, Some((q.dev, q.sector + 256))), "{x:?}");
    let last = recs[q0 + 1..].iter().find(|r| r.action == Action::Q && r.thread == q.thread && r.sector == q.sector + 7 * 256).unwrap();
    assert_eq!(last.bytes, 128 * 1024);
}

#[test]
fn trace_records_name_the_context_that_did_the_work() {
    // blkparse names the process running on the CPU: in scsi-starved's regressed case
    // scsi_run_queue punts the starved queues to kblockd, so kblockd issues (D) requests the
    // writers queued; completions run in softirq, not in the submitter.
    let cfg = blksim::course::lessons::find("scsi-starved").unwrap().config("regressed", &[]).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.set_trace(true);
    sim.run_until(SimTime(2_000_000_000));
    let names: Vec<String> = sim.threads_view().into_iter().map(|t| t.name).collect();
    let name = |t: blksim::engine::ids::ThreadId| {
        if t == blksim::engine::ids::ThreadId::SWAPPER {
            "swapper".to_string()
        } else {
            names[t.idx()].clone()
        }
    };
    let recs: Vec<_> = sim.trace().since(0).0.copied().collect();
    let d_by: Vec<String> = recs.iter().filter(|r| r.action == Action::D).map(|r| name(r.thread)).collect();
    assert!(d_by.iter().any(|n| n.starts_with("kblockd/")), "no D by kblockd");
    assert!(d_by.iter().any(|n| n.starts_with("fio")), "no D by a submitter");
    // Completions name what ran the softirq: ksoftirqd, the thread the interrupt found
    // running, or the idle task (CPUs here are mostly idle, waiting on the disks).
    let c_by: Vec<String> = recs.iter().filter(|r| r.action == Action::C).map(|r| name(r.thread)).collect();
    assert!(c_by.iter().any(|n| n == "swapper" || n.starts_with("ksoftirqd/")), "{:?}", &c_by[..10.min(c_by.len())]);
}

#[test]
fn max_segments_limits_a_request_as_max_sectors_does() {
    // 32 page segments = 128 KiB, under a 512 KiB max_sectors_kb: the segments bind. A 1 MiB
    // read becomes 8 bios, and no request on the disk is larger than 128 KiB.
    let mut s = sim(&[("workload.bs", "1m"), ("disk.max_sectors_kb", "512"), ("queue.max_segments", "32")]);
    s.set_trace(true);
    s.run_until(SimTime(50_000_000));
    let a = actions(&s);
    let q = a.iter().filter(|&&x| x == Action::Q).count();
    assert!(q >= 8 && q % 8 == 0, "Q {q}");
    let largest = s.trace().since(0).0.filter(|r| r.action == Action::D).map(|r| r.bytes).max().unwrap();
    assert_eq!(largest, 128 * 1024);
}

#[test]
fn a_bio_merges_only_into_a_request_still_waiting_in_the_elevator() {
    // One sequential libaio job with a tiny tag depth: bios queue behind a busy device and merge.
    let mut merged = sim(&[("workload.ioengine", "libaio"), ("workload.iodepth", "16"), ("workload.bs", "4k"), ("queue.depth", "1")]);
    merged.run_until(SimTime(100_000_000));
    let m = actions(&merged).iter().filter(|&&x| x == Action::M).count();
    assert!(m > 100, "only {m} merges with a busy device");
    // With deep tags every request is dispatched at once: nothing waits, nothing merges.
    let mut drained = sim(&[("workload.ioengine", "libaio"), ("workload.iodepth", "16"), ("workload.bs", "4k"), ("queue.depth", "64")]);
    drained.run_until(SimTime(100_000_000));
    let m2 = actions(&drained).iter().filter(|&&x| x == Action::M).count();
    assert_eq!(m2, 0, "merges happened though no request waited");
}

#[test]
fn a_busy_host_starves_devices_and_a_completion_runs_them() {
    // 4 disks, can_queue 2: devices must wait for the host, yet all make progress.
    let mut s = sim(&[
        ("disks", "4"),
        ("workload.numjobs", "4"),
        ("host.can_queue", "2"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "4"),
        ("workload.rw", "randread"),
        ("workload.bs", "4k"),
    ]);
    s.run_until(SimTime(500_000_000));
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    for d in &r.devices {
        assert!(d.r_s > 10.0, "{} starved: {} r/s", d.name, d.r_s);
    }
}

#[test]
fn buffered_writers_are_throttled_at_the_dirty_limit_and_fsync_waits_for_writeback() {
    // 64 MiB of memory, dirty_ratio 20: ~13 MiB dirty at most. Two writers of 64 MiB each.
    let mut s = sim(&[
        ("workload.rw", "write"),
        ("workload.direct", "false"),
        ("workload.numjobs", "2"),
        ("workload.size", "64m"),
        ("workload.fsync", "true"),
        ("vm.mem_mb", "64"),
    ]);
    let limit = 64 * 1024 * 1024 / 5;
    let mut max_dirty = 0;
    while s.step() {
        let (d, w) = s.page_cache_bytes();
        max_dirty = max_dirty.max(d + w);
        s.check_invariants();
    }
    assert!(s.is_finished());
    // The limit is checked after each write(), and a writer that wrote back its chunk
    // (write_chunk: 1.5 × 256 pages here) has "done its duty" and returns: so it is passed by at
    // most one write and one chunk per writer.
    let chunk = 384 * 4096;
    assert!(max_dirty <= limit + 2 * ((1 << 20) + chunk), "dirty+writeback reached {max_dirty}");
    assert!(max_dirty > limit / 2, "the writers never came near the limit: {max_dirty}");
    assert_eq!(s.page_cache_bytes(), (0, 0), "fsync returned with pages still dirty");
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    let written: f64 = r.devices.iter().map(|d| d.wkb_s).sum::<f64>() * r.sim_seconds * 1024.0;
    assert!((written - 128.0 * 1048576.0).abs() < 1.0, "iostat wrote {written} bytes");
    assert!(r.threads.iter().any(|t| t.name.starts_with("flush-8:") && t.cpu_pct > 0.0), "the flusher did the writing");
}

#[test]
fn punting_starved_queues_to_kblockd_wakes_kblockd_and_costs_context_switches() {
    // Six disks with deep queues share a host that takes 8 commands: devices starve.
    let knobs = |mode: &'static str| {
        vec![
            ("disks", "6"),
            ("workload.numjobs", "6"),
            ("workload.rw", "write"),
            ("workload.direct", "false"),
            ("queue.depth", "8"),
            ("host.can_queue", "8"),
            ("scsi.run_queue", mode),
            ("cpu.cores", "2"),
        ]
    };
    let run = |mode| {
        let mut s = sim(&knobs(mode));
        s.run_until(SimTime(2_000_000_000));
        blksim::RunReport::from_sim(&mut s, "t", "t")
    };
    let (direct, kblockd) = (run("direct"), run("kblockd"));
    let kblockd_cs = |r: &blksim::RunReport| r.threads.iter().filter(|t| t.name.starts_with("kblockd")).map(|t| t.cs).sum::<u64>();
    // In direct mode kblockd only runs the SCSI_QUEUE_DELAY polls of starved devices with
    // nothing in flight (here about 0.7 per completion: six disks share eight slots); punting
    // every starved run adds a kblockd wakeup to each completion, about one in all.
    let kblockd_per_completion = |r: &blksim::RunReport| kblockd_cs(r) as f64 / (r.intr_per_s * r.sim_seconds);
    assert!(
        kblockd_per_completion(&kblockd) > 0.85 && kblockd_per_completion(&kblockd) > kblockd_per_completion(&direct) + 0.15,
        "kblockd switches per completion {} vs {}",
        kblockd_per_completion(&kblockd),
        kblockd_per_completion(&direct)
    );
    // Each completion with starved devices now costs a kblockd wakeup: more switches per I/O.
    let per_completion = |r: &blksim::RunReport| r.cs_per_s / r.intr_per_s;
    assert!(
        per_completion(&kblockd) > 1.15 * per_completion(&direct),
        "cs per completion {} vs {}",
        per_completion(&kblockd),
        per_completion(&direct)
    );
    // And the list reorder starves some devices: per-disk throughput becomes unfair.
    assert!(kblockd.fairness < direct.fairness - 0.05, "fairness {} vs {}", kblockd.fairness, direct.fairness);
}

#[test]
fn a_device_the_busy_host_stopped_with_nothing_in_flight_polls_from_kblockd_every_3_ms() {
    // Two disks, one host slot, one random reader each: the disk without the slot has nothing
    // in flight, so scsi_request_fn arms blk_delay_queue(q, SCSI_QUEUE_DELAY) and kblockd runs
    // its queue 3 ms later (and again, while the host stays busy).
    let knobs = |can_queue: &'static str| {
        vec![
            ("disks", "2"),
            ("workload.numjobs", "2"),
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.direct", "true"),
            ("host.can_queue", can_queue),
            ("scsi.run_queue", "direct"),
        ]
    };
    let kblockd_cs = |can_queue| {
        let mut s = sim(&knobs(can_queue));
        s.run_until(SimTime(1_000_000_000));
        let r = blksim::RunReport::from_sim(&mut s, "t", "t");
        r.threads.iter().filter(|t| t.name.starts_with("kblockd")).map(|t| t.cs).sum::<u64>()
    };
    let (starved, roomy) = (kblockd_cs("1"), kblockd_cs("2"));
    assert_eq!(roomy, 0, "with a slot for each disk no queue ever waits for the host");
    // At most one poll per device per 3 ms (each queue has one delay_work; a timer armed
    // before its device got the slot still fires once). A random read takes milliseconds,
    // so the waiting device polls many times a second.
    assert!(starved > 100 && starved <= 2 * (1_000 / 3 + 1), "kblockd ran {starved} times in 1 s");
}

#[test]
fn the_process_that_fills_the_pool_becomes_a_batcher_and_gets_32_requests() {
    // One libaio writer with far more in flight than the pool holds, behind one tag: the
    // allocation that fills the pool (the 128th) starts a batch of BLK_BATCH_REQ = 32, so the
    // pool peaks at 127 + 32 = 159 before the writer sleeps in get_request_wait. (No write cache:
    // a random write takes milliseconds, so no request completes during the batch.)
    let mut s = sim(&[
        ("workload.rw", "randwrite"),
        ("workload.bs", "4k"),
        ("workload.ioengine", "libaio"),
        ("workload.iodepth", "512"),
        ("queue.depth", "1"),
        ("queue.nr_requests", "128"),
        ("disk.write_cache", "false"),
    ]);
    let mut peak = 0;
    while s.now() < SimTime(50_000_000) && s.step() {
        let (occ, _) = s.occupancy();
        peak = peak.max(occ[0].pool[1]);
        s.check_invariants();
    }
    assert_eq!(peak, 127 + 32);
    assert!(s.trace().since(0).0.any(|r| r.action == Action::S), "the writer never slept");
}

#[test]
fn a_batcher_stops_at_3_2_of_nr_requests_from_2_6_13_and_takes_its_whole_batch_before() {
    // nr_requests 16: the batch of 32 would take the pool to 15 + 32 = 47; 2.6.13-rc1's hard
    // limit stops it at 24.
    let peak = |limit: &'static str| {
        let mut s = sim(&[
            ("workload.rw", "randwrite"),
            ("workload.bs", "4k"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "512"),
            ("queue.depth", "1"),
            ("queue.nr_requests", "16"),
            ("queue.batch_hard_limit", limit),
            ("disk.write_cache", "false"),
        ]);
        let mut peak = 0;
        while s.now() < SimTime(50_000_000) && s.step() {
            peak = peak.max(s.occupancy().0[0].pool[1]);
            s.check_invariants();
        }
        peak
    };
    assert_eq!((peak("true"), peak("false")), (24, 15 + 32));
}

#[test]
fn the_drive_reorders_its_queue_so_deeper_tags_serve_more_random_reads() {
    // Shortest positioning first inside the drive (NCQ/TCQ): with 31 commands to choose from,
    // random 4 KiB reads need less seeking and rotation each than one at a time.
    let iops = |depth: &'static str| {
        let mut s = sim(&[
            ("workload.rw", "randread"),
            ("workload.bs", "4k"),
            ("workload.ioengine", "libaio"),
            ("workload.iodepth", "32"),
            ("queue.depth", depth),
        ]);
        s.run_until(SimTime(2_000_000_000));
        blksim::RunReport::from_sim(&mut s, "t", "t").iops
    };
    let (one, ncq) = (iops("1"), iops("31"));
    assert!(ncq > 1.5 * one, "NCQ {ncq:.0} IOPS vs {one:.0} without");
}

#[test]
fn a_steps_bios_merge_on_its_plug_unless_2_6_2_plugging_dispatches_each_request_at_once() {
    // One reader of a device node: a 512 KiB readahead window is 128 page bios in one step.
    let run = |plugging: &str| {
        let mut s =
            sim(&[("workload.direct", "false"), ("queue.read_ahead_kb", "512"), ("queue.plugging", plugging), ("queue.depth", "31")]);
        s.set_trace(true);
        s.run_until(SimTime(100_000_000));
        let recs: Vec<_> = s.trace().since(0).0.copied().collect();
        let count = |a: Action| recs.iter().filter(|r| r.action == a).count();
        (count(Action::P), count(Action::U), count(Action::M), count(Action::G))
    };
    let (p, u, merges, gets) = run("task");
    assert!(p > 0 && p == u, "plugged {p} and unplugged {u} times");
    assert!(merges >= 100 * gets, "on the plug: {merges} merges into {gets} requests");
    // 2.6.2: nothing holds the queue, so the first bios of a window each become a request that
    // goes straight to the drive (31 tags); only once the drive is full do requests wait in
    // the elevator, where the rest of the window merges into them.
    let (p2, _, _, gets2) = run("2.6.2");
    assert_eq!(p2, 0);
    assert!(gets2 > 10 * gets, "{gets2} requests against {gets} on the plug");
}

#[test]
fn an_o_direct_reader_unplugs_its_queue_before_it_waits_under_2_6_20_plugging() {
    // One O_DIRECT 4 KiB sequential reader at queue depth 1 under deadline. 2.6.20's queue plug
    // would hold each read until the 3 ms unplug timer (one read per 3 ms) if direct_io_worker
    // did not run blk_run_address_space once its bios are submitted: with it, every plug rule
    // reads alike, and the trace shows the submitter's own unplug (U) after each plug (P).
    let run = |plugging: &str| {
        let mut s = sim(&[
            ("stack", "direct"),
            ("disks", "1"),
            ("disk.kind", "hdd"),
            ("queue.scheduler", "deadline"),
            ("queue.depth", "1"),
            ("workload.rw", "read"),
            ("workload.bs", "4k"),
            ("workload.direct", "true"),
            ("workload.ioengine", "sync"),
            ("workload.iodepth", "1"),
            ("workload.numjobs", "1"),
            ("workload.size", "0"),
            ("queue.plugging", plugging),
        ]);
        s.set_trace(true);
        s.run_until(SimTime::from_secs_f64(1.0));
        let recs: Vec<_> = s.trace().since(0).0.copied().collect();
        let plugs: Vec<_> = recs.iter().filter(|r| r.action == Action::P).collect();
        // The reader plugs; the unplugs counted are its own, not kblockd's timer work.
        let reader = plugs.first().map(|r| r.thread);
        let unplugs = recs.iter().filter(|r| r.action == Action::U && Some(r.thread) == reader).count();
        (s.totals().bytes_read, plugs.len(), unplugs)
    };
    let (task, _, _) = run("task");
    let (queue, plugs, unplugs) = run("2.6.20");
    assert!(task > 8 << 20, "task plugging read only {task} bytes in 1 s");
    let ratio = queue as f64 / task as f64;
    assert!((0.8..=1.2).contains(&ratio), "2.6.20 plugging read {queue} bytes against {task}: {ratio:.2}x");
    assert!(plugs > 100, "2.6.20 plugs an empty queue for each read: {plugs} plugs");
    assert!(unplugs + 1 >= plugs, "the reader undoes each plug itself: {plugs} plugs, {unplugs} of its unplugs");
}

/// Runs a lesson variant with overrides to its end, with the trace on.
fn lesson_sim(lesson: &str, variant: &str, knobs: &[(&str, &str)]) -> Sim {
    let l = blksim::course::lessons::find(lesson).unwrap();
    let o: Vec<(String, String)> = knobs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let cfg = l.config(variant, &o).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.run_until(SimTime::from_secs_f64(60.0));
    assert!(sim.is_finished());
    sim
}

#[test]
fn background_writeback_backs_off_a_congested_queue_but_not_a_dm_device_without_a_congestion_callout() {
    // seed 003's writer: 400 MB of 4 KiB writes then fsync, so the flusher and the writer's
    // fsync both write back the file. A dm device without the callout never reports congestion:
    // the flusher walks into sda's get_request_wait holding a page, and that page reaches the
    // controller late, after its neighbours; the RAID5 controller writes their stripes partially.
    let ops = |callout: &str, stack: &str| {
        let sim = lesson_sim("nr-requests", "regressed", &[("dm.congestion_callout", callout), ("stack", stack)]);
        sim.stripe_ops(0).expect("a RAID controller")
    };
    // Under 2.6.2's wakeup placement (`idle_cpu`) a few pages reach the controller late even
    // straight on the disk (about 120 partial stripes of 2130): the callout brings the LV to
    // what the disk alone does, and the blind LV writes many times more stripes partially.
    let partial = |o: &blksim::hw::hwraid5::StripeOps| o.reconstruct_write + o.read_modify_write;
    let blind = ops("false", "lvm");
    assert!(partial(&blind) > 100, "{blind:?}");
    let direct = ops("false", "direct");
    let callout = ops("true", "lvm");
    assert_eq!(partial(&callout), partial(&direct), "{callout:?} {direct:?}");
    for o in [callout, direct] {
        assert!(o.full_stripe > 2000 && partial(&o) * 5 < partial(&blind), "{o:?} against {blind:?}");
    }
}

#[test]
fn a_gathering_controller_cache_absorbs_late_writes_that_an_in_order_one_writes_as_partial_stripes() {
    let gathering = lesson_sim("nr-requests", "regressed", &[("disk.controller_cache", "gathering")]);
    let in_order = lesson_sim("nr-requests", "regressed", &[("disk.controller_cache", "in-order")]);
    let (g, o) = (gathering.stripe_ops(0).unwrap(), in_order.stripe_ops(0).unwrap());
    assert_eq!(g.reconstruct_write + g.read_modify_write, 0, "{g:?}");
    assert!(o.reconstruct_write > 100, "{o:?}");
    assert!(in_order.finished_at().unwrap() > gathering.finished_at().unwrap());
}

#[test]
fn jobs_files_lie_back_to_back_when_sized_and_share_the_device_when_time_based() {
    // Four direct sequential readers of one disk: where does each one's first bio go?
    let first_sectors = |size: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut knobs = vec![
            ("workload.numjobs", "4"),
            ("workload.rw", "read"),
            ("workload.bs", "64k"),
            ("workload.direct", "true"),
            ("workload.size", size),
        ];
        knobs.extend_from_slice(extra);
        let mut s = sim(&knobs);
        s.set_trace(true);
        s.run_until(SimTime(50_000_000));
        let mut firsts: Vec<u64> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for r in s.trace().since(0).0.filter(|r| r.action == Action::Q) {
            if seen.insert(r.thread) {
                firsts.push(r.sector);
            }
        }
        firsts.sort_unstable();
        firsts
    };
    // 1 GiB files, one after another from the start of the device.
    assert_eq!(first_sectors("1g", &[]), [0, 1 << 21, 2 << 21, 3 << 21]);
    // Time-based: a quarter of the disk each.
    let spread = first_sectors("0", &[]);
    let quarter = spread[1];
    assert!(quarter > 100 << 21, "time-based jobs start {quarter} sectors apart");
    assert_eq!(spread, [0, quarter, 2 * quarter, 3 * quarter]);
}

#[test]
fn an_array_built_with_mdadm_z_spans_only_that_much_of_each_member() {
    // Two time-based readers of a 4-disk RAID5 that uses 1 GiB of each member: the array holds
    // 3 GiB, so the second reader starts 1.5 GiB in, and every member read lies in the first GiB.
    let mut s = sim(&[
        ("stack", "md"),
        ("disks", "4"),
        ("md.component_size_kb", "1048576"),
        ("workload.numjobs", "2"),
        ("workload.rw", "read"),
        ("workload.bs", "64k"),
        ("workload.direct", "true"),
    ]);
    s.set_trace(true);
    s.run_until(SimTime(200_000_000));
    let md =
        s.trace().since(0).0.filter(|r| r.action == Action::Q && r.dev.0 == 4).map(|r| r.sector).collect::<std::collections::BTreeSet<_>>();
    assert!(md.contains(&0) && md.contains(&(3 << 20)), "md0 reads start at {:?}", md.iter().take(4).collect::<Vec<_>>());
    let member_max = s.trace().since(0).0.filter(|r| r.action == Action::D && r.dev.0 < 4).map(|r| r.sector).max().unwrap();
    assert!(member_max < 1 << 21, "a member read at sector {member_max}, past the first GiB");
}

#[test]
fn a_thread_woken_while_its_cpu_is_busy_runs_on_an_idle_one() {
    // One direct reader homed on CPU 0. Its completions wake it from softirq work on the
    // interrupt's CPU: with the interrupt on CPU 0 (busy with that softirq) it moves to idle
    // CPU 1 and stays; with the interrupt on CPU 1 its own CPU is idle and it stays there.
    let cpus_of_submissions = |irq_cpu: u32| {
        let mut s = Scenario::default();
        for (k, v) in [("cpu.cores", "2"), ("workload.rw", "randread"), ("workload.bs", "4k"), ("workload.direct", "true")] {
            set_knob(&mut s, k, v).unwrap();
        }
        s.cpu.irq_cpus = vec![irq_cpu];
        let mut sim = Sim::new(&s.validate().unwrap(), 1);
        sim.set_trace(true);
        sim.run_until(SimTime(500_000_000));
        let cpus: Vec<u16> = sim.trace().since(0).0.filter(|r| r.action == Action::Q).map(|r| r.cpu).collect();
        cpus
    };
    let moved = cpus_of_submissions(0);
    assert_eq!(moved[0], 0, "the first read is issued from its home CPU");
    assert!(moved.len() > 10 && moved[1..].iter().all(|&c| c == 1), "submissions on CPUs {moved:?}");
    let stayed = cpus_of_submissions(1);
    assert!(stayed.len() > 10 && stayed.iter().all(|&c| c == 0), "submissions on CPUs {stayed:?}");
}

#[test]
fn readahead_that_outgrows_memory_is_reclaimed_before_use_and_read_again() {
    // 32 buffered sequential readers on one disk with 8 MiB readahead windows: each reader's
    // next window waits behind 31 others, so with 64 MiB for the page cache the oldest windows
    // are reclaimed before their reader gets to them (thrashing); with 2 GiB none are.
    let thrashed = |mem_mb: &'static str| {
        let mut s = sim(&[
            ("workload.numjobs", "32"),
            ("workload.rw", "read"),
            ("workload.bs", "64k"),
            ("workload.direct", "false"),
            ("queue.read_ahead_kb", "8192"),
            ("vm.mem_mb", mem_mb),
        ]);
        s.run_until(SimTime(3_000_000_000));
        s.check_invariants();
        let r = blksim::RunReport::from_sim(&mut s, "t", "t");
        (r.readahead_thrashed_mb, r.throughput_mb_s)
    };
    let (small, small_mb_s) = thrashed("64");
    let (large, large_mb_s) = thrashed("2048");
    assert_eq!(large, 0.0, "nothing is reclaimed with room for every window");
    assert!(small > 10.0, "only {small} MB thrashed with 64 MiB");
    // Reading pages twice costs the readers throughput.
    assert!(small_mb_s < large_mb_s, "{small_mb_s} vs {large_mb_s} MB/s");
}

#[test]
fn fio_filename_picks_the_devices_the_jobs_use() {
    // Four disks, three jobs on sdd and sdb only: the jobs alternate over the listed devices,
    // and the other disks see no I/O.
    let mut s = sim(&[("disks", "4"), ("workload.numjobs", "3"), ("workload.filename", "sdd:sdb")]);
    s.run_until(SimTime(200_000_000));
    let r = blksim::RunReport::from_sim(&mut s, "t", "t");
    let devs: Vec<&str> = r.processes.iter().map(|j| j.device.as_str()).collect();
    assert_eq!(devs, ["sdd", "sdb", "sdd"]);
    let busy: Vec<&str> = r.devices.iter().filter(|d| d.rkb_s > 0.0).map(|d| d.name.as_str()).collect();
    assert_eq!(busy, ["sdb", "sdd"]);
}

#[test]
fn the_names_filename_is_checked_against_are_the_devices_the_stack_builds() {
    for stack in ["direct", "lvm", "dm", "md"] {
        let mut sc = Scenario::default();
        set_knob(&mut sc, "stack", stack).unwrap();
        set_knob(&mut sc, "disks", "3").unwrap();
        let last = sc.top_device_names().last().unwrap().clone();
        set_knob(&mut sc, "workload.filename", &last).unwrap();
        let mut s = Sim::new(&sc.validate().unwrap(), 1);
        s.run_until(SimTime(10_000_000));
        let r = blksim::RunReport::from_sim(&mut s, "t", "t");
        assert_eq!(r.processes[0].device, last, "stack={stack}");
    }
}

/// The iostat/vmstat report of the last whole second of a lesson variant's run (seed 1).
fn last_second(lesson: &str, variant: &str, secs: f64) -> blksim::tools::report::IntervalReport {
    last_seconds(lesson, variant, secs, 1)
}

/// The iostat/vmstat report of the last `n` whole seconds of a lesson variant's run (seed 1).
fn last_seconds(lesson: &str, variant: &str, secs: f64, n: usize) -> blksim::tools::report::IntervalReport {
    let cfg = blksim::course::lessons::find(lesson).unwrap().config(variant, &[]).unwrap();
    let sim = blksim::engine::run_one(&cfg, 1, Some(secs));
    let history: Vec<_> = sim.history().collect();
    let len = history.len();
    blksim::tools::report::IntervalReport::between(&sim, history[len - 1 - n], history[len - 1])
}

#[test]
fn md_await_counts_from_when_the_bio_is_in_flight_so_littles_law_holds_as_on_the_disks() {
    // iostat's avgqu-sz is the time-average of in_flight, and await the mean time in flight of
    // the I/Os that completed, so over a steady second avgqu-sz ≈ (r/s + w/s) × await. On md,
    // whose bios wait in their submitter's list (behind a full stripe cache) before md's
    // make_request takes them, counting await from the bio's creation broke this 8-fold. md's
    // await is ~0.1 s and a bio may wait seconds for the stripe cache, so the window is eight
    // seconds: its edges cut few of the I/Os it counts.
    let iv = last_seconds("raid5-chunk", "regressed", 10.0, 8);
    for dev in iv.devices.iter().filter(|d| d.name == "md0" || d.name == "sda") {
        let little = (dev.r_s + dev.w_s) * dev.await_ms / 1000.0;
        let off = (little - dev.avgqu_sz).abs() / dev.avgqu_sz;
        let bound = if dev.name == "md0" { 0.25 } else { 0.05 };
        assert!(off < bound, "{}: (r/s + w/s) × await = {little:.1} against avgqu-sz {:.1}", dev.name, dev.avgqu_sz);
    }
}

#[test]
fn vmstat_bi_counts_a_stacked_read_once_at_the_top() {
    // pgpgin is counted in submit_bio; dm resubmits its clones below it uncounted. So over a
    // steady second bi (KiB/s) is the dm devices' rkB/s, not the dm and sd devices' together.
    let iv = last_second("dm-sg-lists", "workaround", 3.0);
    let dm_rkb: f64 = iv.devices.iter().filter(|d| d.name.starts_with("dm-")).map(|d| d.rkb_s).sum();
    let sd_rkb: f64 = iv.devices.iter().filter(|d| d.name.starts_with("sd")).map(|d| d.rkb_s).sum();
    assert!(dm_rkb > 1e5 && (sd_rkb - dm_rkb).abs() / dm_rkb < 0.05, "dm {dm_rkb:.0} sd {sd_rkb:.0} KiB/s");
    assert!((iv.bi - dm_rkb).abs() / dm_rkb < 0.05, "bi {:.0} KiB/s against the dm devices' {dm_rkb:.0}", iv.bi);
    assert_eq!(iv.bo, 0.0);
}

#[test]
fn each_bio_is_traced_queued_just_before_it_becomes_or_joins_a_request() {
    // blkparse order: Q then G (or M/F) for one bio, then the next bio's Q, not 256 Qs and
    // then 256 Ms; and a remapped bio gets its Q on the lower device after the A.
    let cfg = blksim::course::lessons::find("dm-sg-lists").unwrap().config("workaround", &[]).unwrap();
    let mut sim = Sim::new(&cfg, 1);
    sim.run_until(SimTime(20_000_000));
    let recs: Vec<_> = sim.trace().since(0).0.copied().collect();
    let mut checked = 0;
    for (i, q) in recs.iter().enumerate().filter(|(_, r)| r.action == Action::Q) {
        let Some(next) = recs[i + 1..].iter().find(|r| r.dev == q.dev && r.thread == q.thread) else { continue };
        let ok = match next.action {
            Action::G => next.related == q.token,
            Action::M | Action::F | Action::S | Action::X => next.token == q.token,
            _ => false,
        };
        assert!(ok, "Q of bio {} on dev {} is followed by {:?}", q.token, q.dev.0, next);
        checked += 1;
    }
    assert!(checked > 1000, "only {checked} Qs checked");
    // Every clone's A on an sd path comes with the request it came from on the dm device.
    assert!(recs.iter().any(|r| r.action == Action::A && r.from.is_some_and(|(d, s)| d != r.dev && s == r.sector)));
}

/// fio's random map: mkfs's 4096 random 4 KiB writes over its 16 MiB each write a block of
/// their own (seed 5, whose stall the lesson shows, wrote 88 blocks twice, both writes in
/// flight at once, before the map), so btt pairs every Q with its C.
#[test]
fn a_random_job_writes_each_block_of_its_file_once() {
    let l = blksim::course::lessons::find("mq-clone-stall").unwrap();
    let cfg = l.config("regressed", &[]).unwrap();
    let mut sim = Sim::new(&cfg, 5);
    sim.set_trace(true);
    sim.run_until(SimTime::from_secs_f64(600.0));
    assert!(sim.is_finished());
    let top = sim.trace().since(0).0.find(|r| r.action == Action::Q).expect("a Q").dev;
    let mut queued = std::collections::BTreeSet::new();
    let mut completed = std::collections::BTreeSet::new();
    for r in sim.trace().since(0).0.filter(|r| r.dev == top) {
        match r.action {
            Action::Q => assert!(queued.insert(r.sector), "sector {} queued twice", r.sector),
            Action::C if r.bytes > 0 => assert!(completed.insert(r.sector), "sector {} completed twice", r.sector),
            _ => {}
        }
    }
    assert_eq!(queued.len(), 4096);
    assert_eq!(queued, completed, "every Q has its C");
}

#[test]
fn history_after_gives_the_seconds_past_a_time_point() {
    let cfg = blksim::course::lessons::find("nr-requests").unwrap().config("regressed", &[]).unwrap();
    let sim = blksim::engine::run_one(&cfg, 1, Some(3.5));
    let all: Vec<_> = sim.history().cloned().collect();
    assert_eq!(all.len(), 3);
    assert_eq!(sim.history_after(None).cloned().collect::<Vec<_>>(), all);
    // After a tick: the seconds that end later; between ticks too; past the last: none.
    assert_eq!(sim.history_after(Some(all[0].end)).cloned().collect::<Vec<_>>(), all[1..]);
    assert_eq!(sim.history_after(Some(SimTime(1_500_000_000))).cloned().collect::<Vec<_>>(), all[1..]);
    assert_eq!(sim.history_after(Some(all[2].end)).len(), 0);
}

#[test]
fn fairness_counts_the_disks_that_had_work_not_those_no_job_submits_to() {
    let lesson = blksim::course::lessons::find("scsi-starved").unwrap();
    // 6 jobs on 12 disks, each served alike: fair (it read 0.5 when the idle disks counted).
    let cfg = lesson.config("before", &[("workload.numjobs".into(), "6".into())]).unwrap();
    let sim = blksim::engine::run_one(&cfg, 1, Some(2.0));
    let busy = sim.history().last().unwrap().diskstats.iter().filter(|d| d.io_ticks_ns > 0).count();
    assert!(busy >= 6, "{busy} devices had work");
    assert!(sim.fairness() > 0.99, "{}", sim.fairness());
    // A disk whose requests wait unserved still counts: the regression's starved disks.
    let cfg = lesson.config("regressed", &[]).unwrap();
    let sim = blksim::engine::run_one(&cfg, 1, Some(5.0));
    assert!(sim.fairness() < 0.97, "{}", sim.fairness());
}
