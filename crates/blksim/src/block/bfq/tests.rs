//! bfq's decisions on a queue of the model, request by request.

use crate::block::elevator::Owner;
use crate::block::Request;
use crate::engine::ids::*;
use crate::engine::Sim;
use crate::fs::ioprio::IoPrio;
use crate::kernel::workqueue::Work;
use crate::scenario::{set_knob, Scenario};

/// One RAM LUN under bfq on 5.x's dispatch: 4 CPUs, 4 hardware queues, a LUN queue_depth of 1.
fn sim(extra: &[(&str, &str)]) -> Sim {
    let mut s = Scenario::default();
    let base = [
        ("disk.kind", "ramlun"),
        ("queue.scheduler", "bfq"),
        ("blk_mq.dispatch", "5.0"),
        ("cpu.cores", "4"),
        ("host.nr_hw_queues", "4"),
        ("queue.depth", "1"),
    ];
    for (k, v) in base.iter().chain(extra) {
        set_knob(&mut s, k, v).unwrap();
    }
    Sim::new(&s.validate().unwrap(), 1)
}

/// A sync read of thread `tid` at `sector`, made and inserted as `blk_mq_make_request` does.
fn add(sim: &mut Sim, tid: u32, sector: u64) -> ReqId {
    let dev = DevId(0);
    let tag = sim.blk_mq_get_request(dev, 0, ThreadId(tid));
    assert!(tag.is_some(), "a scheduler tag");
    let rq = ReqId(sim.reqs.insert(Request { sector, tag, ..Request::for_test(dev, ThreadId(tid), sim.now()) }));
    sim.current.cpu = 0;
    sim.blk_mq_sched_insert_request(dev, rq);
    rq
}

/// Takes every pending hardware-queue run off kblockd; true for each queue that had one.
fn take_runs(sim: &mut Sim) -> Vec<bool> {
    let dev = DevId(0);
    (0..sim.mq(dev).hctx.len() as u16)
        .map(|h| {
            let pending = std::mem::take(&mut sim.mq_mut(dev).hctx[h as usize].run_pending);
            if pending {
                sim.kblockd_cancel(Work::Hctx(dev, h));
            }
            pending
        })
        .collect()
}

const A: Owner = Owner { id: 1, sync: true, ioprio: IoPrio::NORM };

#[test]
fn a_completion_idles_the_emptied_queue_and_bfq_schedule_dispatch_runs_every_hardware_queue() {
    let mut sim = sim(&[]);
    let dev = DevId(0);
    add(&mut sim, 1, 0);
    add(&mut sim, 2, 1_000_000);
    take_runs(&mut sim);
    sim.blk_mq_sched_dispatch_requests(dev, 0);
    // queue_depth 1: one request left, the first queue's; the other waits in bfq.
    let b = sim.devs[dev].queue.elevator.bfq();
    assert_eq!((b.rq_in_driver, b.queued, b.busy_queues), (1, 1, 2));
    let first = b.in_service.expect("a queue in service");
    // Its read completes: the queue, empty with nothing in flight, idles for its process
    // (slice_idle 8 ms), and with nothing in the driver bfq_schedule_dispatch runs all four
    // hardware queues from kblockd (blk_mq_run_hw_queues), not only the one that completed.
    sim.bfq_finish_request(dev, A);
    let b = sim.devs[dev].queue.elevator.bfq();
    assert_eq!(b.in_service, Some(first), "the emptied queue keeps the device while it idles");
    assert!(b.wait_request && b.idle_timer == Some(sim.now() + crate::calib::BFQ_SLICE_IDLE_NS));
    assert_eq!(take_runs(&mut sim), vec![true; 4]);
    // While it idles the other queue's request stays in bfq: has_work, but no request.
    let e = &mut sim.devs[dev].queue.elevator;
    assert!(e.has_work());
    assert_eq!(e.next(sim.events.now()), None);
    // Its process's next read is the one served: the insert runs the queue, and
    // bfq_select_queue, finding it within the budget, ends the idling (a small request
    // leaves the timer to the dispatch, `bfq_rq_enqueued`).
    let next = add(&mut sim, 1, 8);
    assert_eq!(sim.devs[dev].queue.elevator.next(sim.events.now()), Some(next));
    let b = sim.devs[dev].queue.elevator.bfq();
    assert!(!b.wait_request && b.idle_timer.is_none(), "idling ended");
    sim.check_mq_sched(dev);
}

#[test]
fn without_slice_idle_the_emptied_queue_expires_and_the_next_is_served() {
    let mut sim = sim(&[("bfq.slice_idle", "0")]);
    let dev = DevId(0);
    add(&mut sim, 1, 0);
    let other = add(&mut sim, 2, 1_000_000);
    take_runs(&mut sim);
    sim.blk_mq_sched_dispatch_requests(dev, 0);
    sim.bfq_finish_request(dev, A);
    let b = sim.devs[dev].queue.elevator.bfq();
    assert!(b.in_service.is_none() && b.idle_timer.is_none(), "expired, no idling");
    assert_eq!(take_runs(&mut sim), vec![true; 4]);
    assert_eq!(sim.devs[dev].queue.elevator.next(sim.events.now()), Some(other));
}

#[test]
fn bfq_runs_on_5x_dispatch_from_4_12_and_its_tunables_only_under_bfq() {
    let with = |sets: &[(&str, &str)]| {
        let mut s = Scenario::default();
        for (k, v) in sets {
            set_knob(&mut s, k, v).unwrap();
        }
        s
    };
    let err = |sets: &[(&str, &str)]| with(sets).validate().unwrap_err().message;
    assert!(err(&[("queue.scheduler", "bfq"), ("kernel", "4.9")]).contains("came to blk-mq in 4.12"));
    // Without a kernel, bfq brings 5.x's dispatch with it (the sandbox is not era-strict), and
    // another elevator gives the default back; 4.0's set explicitly, in either order, stands.
    let s = with(&[("queue.scheduler", "bfq")]);
    assert!(s.validate().is_ok() && s.blk_mq.dispatch == crate::scenario::MqDispatch::V5_0);
    assert_eq!(with(&[("queue.scheduler", "bfq"), ("queue.scheduler", "none")]).blk_mq.dispatch, crate::scenario::MqDispatch::V4_0);
    assert!(err(&[("blk_mq.dispatch", "4.0"), ("queue.scheduler", "bfq")]).contains("blk_mq.dispatch is 4.0"));
    assert!(err(&[("queue.scheduler", "bfq"), ("blk_mq.dispatch", "4.0")]).contains("blk_mq.dispatch is 4.0"));
    // A kernel's rules decide: 4.12 to 4.14 run blk-mq as 4.0 did.
    assert!(err(&[("queue.scheduler", "bfq"), ("kernel", "4.13")]).contains("blk_mq.dispatch is 4.0"));
    assert!(err(&[("queue.scheduler", "bfq"), ("blk_mq.dispatch", "5.0"), ("stack", "dm")]).contains("stack=dm"));
    assert!(with(&[("queue.scheduler", "bfq"), ("kernel", "5.10")]).validate().is_ok());
    assert!(with(&[("queue.scheduler", "bfq"), ("blk_mq.dispatch", "5.0")]).validate().is_ok());
    assert!(crate::scenario::knob_applies(&with(&[("queue.scheduler", "mq-deadline")]), "bfq.slice_idle").is_err());
    assert!(crate::scenario::knob_applies(&with(&[("queue.scheduler", "bfq")]), "bfq.slice_idle").is_ok());
    assert_eq!(super::bfq_ioprio_to_weight(0), 80);
    assert_eq!(super::bfq_ioprio_to_weight(4), 40);
    assert_eq!(super::bfq_ioprio_to_weight(7), 10);
}
