//! Tests of cfq's service order (`cfq.rs`).

use super::*;
use crate::calib::CFQ_SLICE_IDLE_NS;

#[test]
fn cfq_serves_one_process_for_a_slice_and_idles_for_its_next_request() {
    let mut e = Elevator::new(ElevatorKind::Cfq);
    let (a, b) = (
        Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
        Owner { id: 2, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
    );
    let ms = |n: u64| SimTime(n * 1_000_000);
    // Interleaved arrivals of two sequential readers far apart on the disk.
    e.add(ReqId(1), false, 0, 8, ms(0), a);
    e.add(ReqId(2), false, 900_000, 900_008, ms(0), b);
    e.add(ReqId(3), false, 8, 16, ms(0), a);
    e.add(ReqId(4), false, 900_008, 900_016, ms(0), b);
    // a's slice: its requests in sector order; b waits although the device has room.
    for want in [1, 3] {
        assert_eq!(e.next(ms(0)), Some(ReqId(want)));
        e.dispatched(ReqId(want));
    }
    assert_eq!(e.next(ms(0)), None, "a still has requests in flight: cfq waits for a");
    e.completed(a, ms(1));
    e.completed(a, ms(1));
    // a ran dry: cfq idles slice_idle for a's next request instead of seeking to b.
    assert_eq!(e.next(ms(1)), None);
    assert_eq!(e.idle_until(), Some(ms(1) + CFQ_SLICE_IDLE_NS));
    // a comes back within the window and is served at once.
    e.add(ReqId(5), false, 16, 24, ms(3), a);
    assert_eq!(e.next(ms(3)), Some(ReqId(5)));
    e.dispatched(ReqId(5));
    e.completed(a, ms(4));
    // This time a does not come back: when the window closes, b gets its slice.
    assert_eq!(e.next(ms(4)), None);
    let until = e.idle_until().unwrap();
    assert_eq!(e.next(until), Some(ReqId(2)));
}

#[test]
fn cfq_takes_one_expired_request_a_slice_and_then_serves_in_sector_order() {
    let mut e = Elevator::new(ElevatorKind::Cfq);
    let a = Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM };
    let ms = |n: u64| SimTime(n * 1_000_000);
    // A deep queue of random reads, queued at t = 0 in this order of sectors.
    let sectors = [500_000u64, 100_000, 900_000, 300_000, 700_000];
    for (i, &s) in sectors.iter().enumerate() {
        e.add(ReqId(i as u32 + 1), false, s, s + 8, ms(0), a);
    }
    // Later than fifo_expire_sync (125 ms), but inside a fresh slice: every one has expired.
    let now = ms(200);
    let mut order = Vec::new();
    for _ in 0..sectors.len() {
        let rq = e.next(now).expect("a request");
        e.dispatched(rq);
        order.push(rq.0);
    }
    // cfq_check_fifo once: the oldest; then on in sector order from it, wrapping around
    // (not the FIFO's arrival order, which every expired head would give).
    assert_eq!(order, vec![1, 5, 3, 2, 4]);
}

#[test]
fn cfq_spends_its_fifo_look_on_a_dispatch_and_a_lone_queue_looks_again_each_slice() {
    let mut e = Elevator::new(ElevatorKind::Cfq);
    let a = Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM };
    let ms = |n: u64| SimTime(n * 1_000_000);
    for (i, s) in [500_000u64, 100_000, 900_000, 300_000, 700_000, 200_000].into_iter().enumerate() {
        e.add(ReqId(i as u32 + 1), false, s, s + 8, ms(0), a);
    }
    // Picks the driver does not take (its tags full) spend nothing: the oldest, again.
    assert_eq!(e.next(ms(200)), Some(ReqId(1)));
    assert_eq!(e.next(ms(201)), Some(ReqId(1)));
    e.dispatched(ReqId(1));
    // Then sector order on from 500 000.
    assert_eq!(e.next(ms(201)), Some(ReqId(5)));
    e.dispatched(ReqId(5));
    // Alone on the device, the queue's slice (slice_sync, 100 ms) runs out and the next
    // one looks at the FIFO again: the oldest left (2, at 100 000), not the next on (3).
    let later = ms(200) + crate::calib::CFQ_SLICE_SYNC_NS + 1;
    assert_eq!(e.next(later), Some(ReqId(2)));
}

/// Runs the elevator as a driver with one slot would: takes what `next` gives, completes it
/// at once, and waits out cfq's idle windows. Returns the requests in dispatch order.
fn drain(e: &mut Elevator, owners: &[(ReqId, Owner)], now: &mut SimTime) -> Vec<ReqId> {
    let mut order = Vec::new();
    loop {
        let Some(rq) = e.next(*now) else {
            match e.idle_until() {
                Some(t) if t > *now => {
                    *now = t;
                    continue;
                }
                _ => break,
            }
        };
        e.dispatched(rq);
        let owner = owners.iter().find(|(r, _)| *r == rq).expect("an owner").1;
        *now = *now + 100_000;
        e.completed(owner, *now);
        order.push(rq);
    }
    order
}

#[test]
fn cfq_2620_readers_that_think_long_lose_the_idle_window_and_share_one_sorted_dispatch_list() {
    let mut e = Elevator::new(ElevatorKind::Cfq);
    e.set_cfq_2620(true);
    let ms = |n: u64| SimTime(n * 1_000_000);
    let readers = [
        Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
        Owner { id: 2, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
        Owner { id: 3, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
    ];
    let base = [1_000u64, 400_000, 600_000];
    let mut owners = Vec::new();
    let mut now = ms(0);
    let mut id = 0;
    // Each reader reads one request every 50 ms: a new queue idles for its process first
    // (cfq_get_queue marks idle_window), so the first rounds wait out slice_idle.
    let mut idled = false;
    for round in 0..4u64 {
        now = now.max(ms(50 * round));
        for (r, &o) in readers.iter().enumerate() {
            let s = base[r] + 8 * round;
            e.add(ReqId(id), false, s, s + 8, now, o);
            owners.push((ReqId(id), o));
            id += 1;
        }
        let t0 = now;
        drain(&mut e, &owners, &mut now);
        idled |= now - t0 >= CFQ_SLICE_IDLE_NS;
    }
    assert!(idled, "young queues idle for their process's next request");
    // Three samples of a think time capped at 16 ms: no idle window any more. All three
    // queues go onto the dispatch list at once, in one-way order from where the last
    // request ended (600_032): 600_032 on up first, then round from the lowest.
    now = ms(500);
    let mut batch = Vec::new();
    for (r, &o) in readers.iter().enumerate() {
        for k in 0..2u64 {
            let s = base[r] + 32 + 8 * k;
            e.add(ReqId(id), false, s, s + 8, now, o);
            owners.push((ReqId(id), o));
            batch.push((s, ReqId(id)));
            id += 1;
        }
    }
    let first = e.next(now);
    assert_eq!(e.dispatch_list.len(), 6, "every queue's quantum is on the dispatch list");
    assert_eq!(e.idle_until(), None);
    let order = drain(&mut e, &owners, &mut now);
    assert_eq!(first, order.first().copied());
    let by_sector: Vec<ReqId> = [4, 5, 0, 1, 2, 3].iter().map(|&i| batch[i].1).collect();
    assert_eq!(order, by_sector);
    assert!(now < ms(501), "no idling between the readers: {now:?}");
}

/// Two random readers of a deep queue each on a RAM LUN or SSD (non-rotational) under the
/// 2.6.30-4.0 rules. `cfq_arm_slice_timer` returns at once when `blk_queue_nonrot(q) &&
/// cfqd->hw_tag` (2.6.29+: "SSD device without seek penalty, disable idling"), and
/// `cfq_should_idle` keeps a queue with requests in the driver only while it is the last on
/// its service tree: a queue that runs dry hands the device on at once. On a rotational disk
/// the same queue waits for its requests and then idles `slice_idle`.
#[test]
fn cfq_does_not_idle_on_a_nonrot_device_that_queues() {
    let ms = |n: u64| SimTime(n * 1_000_000);
    let (a, b) = (
        Owner { id: 1, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
        Owner { id: 2, sync: true, ioprio: crate::fs::ioprio::IoPrio::NORM },
    );
    for nonrot in [false, true] {
        let mut e = Elevator::new(ElevatorKind::Cfq);
        e.set_nonrot(nonrot);
        e.add(ReqId(1), false, 500_000, 500_008, ms(0), a);
        e.add(ReqId(2), false, 100_000, 100_008, ms(0), b);
        assert_eq!(e.next(ms(0)), Some(ReqId(1)));
        e.dispatched(ReqId(1));
        // a ran dry with its request in the driver, b waits.
        let next = e.next(ms(0));
        assert_eq!(next, if nonrot { Some(ReqId(2)) } else { None }, "nonrot {nonrot}");
        if !nonrot {
            e.completed(a, ms(1));
            assert_eq!(e.next(ms(1)), None);
            assert_eq!(e.idle_until(), Some(ms(1) + CFQ_SLICE_IDLE_NS));
        }
    }
}

/// `cfq_update_hw_tag`: a non-rotational device whose driver never holds
/// `CFQ_HW_QUEUE_MIN` (5) requests while more wait in cfq is found not to queue after 50
/// samples, and cfq idles on it again; one that holds 32 keeps `hw_tag`.
#[test]
fn cfq_hw_tag_is_found_after_fifty_samples_of_a_busy_queue() {
    let mut shallow = HwTag::default();
    let mut deep = HwTag::default();
    for _ in 0..50 {
        shallow.update(1, 40);
        deep.update(32, 100);
    }
    assert!(!shallow.off && !deep.off, "undecided after 50 samples: hw_tag -1 counts as true");
    shallow.update(1, 40);
    deep.update(32, 100);
    assert!(shallow.off && !deep.off);
    // Samples with few requests waiting anywhere do not count.
    let mut idle = HwTag::default();
    for _ in 0..100 {
        idle.update(1, 3);
    }
    assert!(!idle.off);
}
