//! What the page makes of a run's trace (`TraceView`): the event log, btt's sums and the
//! animation's tokens. It is fed only by what the run hands over, in order (`TraceInput`s, kept
//! by the run for its `RunView`), and reads nothing else of the run, so it lives on the page
//! while the runs are in a Web Worker.

use super::{Btt, Token, TokenStage, RECORDS_PER_FRAME_MAX, TOKENS_MAX};
use crate::protocol::TraceInput;
use blksim::kernel::trace::blktrace::TraceRecord;
use blksim::SimTime;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Trace records kept for the event log and its exports (blkparse, Perfetto): a few
/// megabytes, and some seconds of a busy run at an animated speed.
pub const LOG_MAX: usize = 50_000;

/// Untraced spans the event log remembers.
const TRACE_GAPS_MAX: usize = 16;

#[derive(Clone, Debug, Default)]
pub struct TraceView {
    /// Bio tokens (key: bio id) and request tokens (key: request id).
    pub bios: BTreeMap<u32, Token>,
    pub requests: BTreeMap<u32, Token>,
    /// True while the trace outruns the animation: the diagram shows counts, not tokens.
    pub density: bool,
    /// The last trace records, for the event log (not appended while `log_paused`).
    pub log: VecDeque<TraceRecord>,
    pub log_paused: bool,
    /// Records the animation or the log never saw (the ring dropped them at high speed).
    pub dropped: u64,
    /// Spans of simulated time run without the trace (a skip, a link's catch-up), oldest
    /// first, at most `TRACE_GAPS_MAX`: from, to, and the seq of the first record after (the
    /// event log marks them).
    pub trace_gaps: VecDeque<(SimTime, SimTime, u64)>,
    pub btt: BTreeMap<u16, Btt>,
    /// Per (device, bio): its Q time on that device, in ns, in the first slot (the map is of
    /// `rq_times`' type, so the page keeps one copy of `BTreeMap`'s code for the two).
    pub(super) bio_queued_at: BTreeMap<(u16, u32), [u64; 4]>,
    /// Devices seen allocating requests (a G): the others are bio-based.
    pub(super) request_devs: BTreeSet<u16>,
    /// Per (device, request): (Q, G, I, D) times in ns.
    pub(super) rq_times: BTreeMap<(u16, u32), [u64; 4]>,
}

impl TraceView {
    /// Takes what the run handed over.
    pub fn take(&mut self, input: &TraceInput) {
        match input {
            TraceInput::Records { records, dropped, animate } => {
                self.ingest(records, *dropped);
                if let Some(a) = animate {
                    self.animate(records, *dropped, a.now_ms, a.tween_ms, |thread| a.pids.get(thread as usize).copied().unwrap_or(0));
                }
            }
            TraceInput::Dense { now_ms, tween_ms } => self.animate(&[], 1, *now_ms, *tween_ms, |_| 0),
            TraceInput::Untraced => self.forget_pairs(),
            TraceInput::Gap { from, to, next_seq } => self.gap(*from, *to, *next_seq),
            TraceInput::ResetTokens => self.reset_tokens(),
        }
    }

    /// Records the run took in, after `dropped` the ring lost: into btt and the event log.
    pub fn ingest(&mut self, recs: &[TraceRecord], dropped: u64) {
        self.dropped += dropped;
        if dropped > 0 {
            // The btt pairs in flight lost records: start them afresh.
            self.forget_pairs();
        }
        for r in recs {
            self.account_btt(r);
        }
        if !self.log_paused {
            let skip = recs.len().saturating_sub(LOG_MAX);
            self.log.extend(recs[skip..].iter().copied());
            while self.log.len() > LOG_MAX {
                self.log.pop_front();
            }
        }
    }

    /// The same records, animated: each moves its token (`pid_of`: a record's thread to its
    /// pid), unless there are too many for the animation, which then shows counts.
    pub fn animate(&mut self, recs: &[TraceRecord], dropped: u64, now_ms: f64, tween_ms: f64, pid_of: impl Fn(u32) -> u32) {
        if dropped > 0 || recs.len() > RECORDS_PER_FRAME_MAX {
            self.density = true;
            self.reset_tokens();
        } else {
            self.density = false;
            for r in recs {
                self.apply(r, now_ms, pid_of(r.thread.0));
            }
        }
        // Completed and absorbed tokens fade, then go.
        self.requests.retain(|_, t| t.stage != TokenStage::Done || now_ms - t.moved_ms < tween_ms);
        self.bios.retain(|_, t| t.stage != TokenStage::Merging || now_ms - t.moved_ms < tween_ms);
        if self.bios.len() + self.requests.len() > TOKENS_MAX {
            self.density = true;
            self.reset_tokens();
        }
    }

    /// An untraced span begins: btt pairs begun before it would end after it with the
    /// untraced time in them (a D2C of 36 ms where iostat says 1 ms): only requests seen whole
    /// count.
    pub fn forget_pairs(&mut self) {
        self.bio_queued_at.clear();
        self.rq_times.clear();
    }

    /// An untraced span ended: from, to, and the seq of the first record after it.
    pub fn gap(&mut self, from: SimTime, to: SimTime, next_seq: u64) {
        self.trace_gaps.push_back((from, to, next_seq));
        if self.trace_gaps.len() > TRACE_GAPS_MAX {
            self.trace_gaps.pop_front();
        }
    }

    /// The tokens start afresh (after a jump, or when the animation cannot keep up).
    pub fn reset_tokens(&mut self) {
        self.bios.clear();
        self.requests.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Animation;

    /// A view fed by the run's trace, chunk by chunk as the frames take it (`Sim::trace`).
    fn fed(through_json: bool) -> TraceView {
        let cfg = blksim::course::lessons::find("nr-requests").unwrap().config("regressed", &[]).unwrap();
        let mut sim = blksim::Sim::new(&cfg, 1);
        sim.set_trace(true);
        let mut view = TraceView::default();
        let mut cursor = 0;
        for frame in 0..400u32 {
            sim.run_until_bounded(blksim::SimTime(u64::from(frame + 1) * 1_000_000), 20_000);
            let (recs, dropped) = sim.trace().since(cursor);
            let mut recs: Vec<TraceRecord> = recs.copied().collect();
            cursor = sim.trace().next_seq();
            if through_json {
                recs = serde_json::from_str(&serde_json::to_string(&recs).unwrap()).unwrap();
            }
            if frame == 200 {
                // A jump's marks, as the run hands them over.
                view.forget_pairs();
                view.gap(sim.now(), sim.now(), cursor);
                view.reset_tokens();
            }
            view.ingest(&recs, dropped);
            view.animate(&recs, dropped, f64::from(frame) * 16.0, 40.0, |thread| thread.wrapping_add(1000));
        }
        view
    }

    /// Two views' states side by side, for assert_eq (tokens, log, btt, gaps, pairs).
    fn state(v: &TraceView) -> String {
        format!("{:?}", (&v.bios, &v.requests, v.density, &v.log, v.dropped, &v.trace_gaps, &v.btt, &v.bio_queued_at, &v.rq_times))
    }

    #[test]
    fn a_run_s_kept_inputs_sent_through_the_protocol_make_the_view_they_make_in_process() {
        let mut d = crate::runs::Run::new("nr-requests", Some("regressed"), Vec::new(), 2).unwrap();
        d.keep_trace_inputs();
        // `page` takes them through the protocol's bincode, `here` as they are.
        let (mut page, mut here) = (TraceView::default(), TraceView::default());
        let mut post = |d: &mut crate::runs::Run, page: &mut TraceView| {
            let inputs = d.take_trace_inputs();
            for input in &inputs {
                here.take(input);
            }
            let bytes = crate::protocol::encode(&inputs).unwrap();
            for input in crate::protocol::decode::<Vec<TraceInput>>(&bytes).unwrap() {
                page.take(&input);
            }
        };
        // A jump past the page cache's fill (untraced, then its traced tail), frames at an
        // animated speed, another jump, a step, and frames again: each posted as a worker
        // would, once per frame.
        let mut ts = 0.0;
        d.catch_up_to = Some(blksim::SimTime(400_000_000));
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut page);
        }
        for _ in 0..30 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut page);
        }
        assert!(!page.requests.is_empty() || !page.bios.is_empty(), "tokens on show");
        d.catch_up_to = Some(blksim::SimTime(1_800_000_000));
        while d.catch_up_to.is_some() {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut page);
        }
        d.step_ms(ts);
        post(&mut d, &mut page);
        for _ in 0..10 {
            ts += 16.0;
            d.frame(16.0, ts);
            post(&mut d, &mut page);
        }
        assert_eq!(here.trace_gaps.len(), 1, "the second jump's untraced span (the first's tail covers it all)");
        assert!(here.log.len() > 1_000 && !here.btt.is_empty());
        assert_eq!(state(&page), state(&here));
    }

    #[test]
    fn the_view_is_what_its_inputs_make_it_also_after_a_worker_s_json() {
        let (here, there) = (fed(false), fed(true));
        assert!(
            here.log.len() > 1_000 && !here.btt.is_empty() && !here.requests.is_empty(),
            "a busy trace: {} records, {} btt, {} requests, density {}",
            here.log.len(),
            here.btt.len(),
            here.requests.len(),
            here.density
        );
        assert_eq!(here.log, there.log);
        assert_eq!(here.btt, there.btt);
        assert_eq!((&here.bios, &here.requests, here.density), (&there.bios, &there.requests, there.density));
        assert_eq!(here.trace_gaps, there.trace_gaps);
        assert_eq!((&here.bio_queued_at, &here.rq_times), (&there.bio_queued_at, &there.rq_times));
    }

    #[test]
    fn an_input_split_into_parts_makes_the_view_the_whole_makes() {
        let cfg = blksim::course::lessons::find("nr-requests").unwrap().config("regressed", &[]).unwrap();
        let mut sim = blksim::Sim::new(&cfg, 1);
        sim.set_trace(true);
        let (mut whole, mut parted) = (TraceView::default(), TraceView::default());
        let mut cursor = 0;
        // Frames of 1 ms (animated), then one of 400 ms (too many records to animate), then
        // 1 ms frames again; the big frame's batch also counts records the ring dropped.
        for (frame, step_ns) in [1_000_000u64; 30].into_iter().chain([400_000_000]).chain([1_000_000; 30]).enumerate() {
            sim.run_until(blksim::SimTime(sim.now().ns() + step_ns));
            let (recs, _) = sim.trace().since(cursor);
            let records: Vec<TraceRecord> = recs.copied().collect();
            cursor = sim.trace().next_seq();
            let dropped = if step_ns > 1_000_000 { 7 } else { 0 };
            let animate = Some(Animation { now_ms: frame as f64 * 16.0, tween_ms: 40.0, pids: vec![1, 2, 3] });
            let input = TraceInput::Records { records, dropped, animate };
            let parts = input.clone().split(RECORDS_PER_FRAME_MAX);
            if step_ns > 1_000_000 {
                assert!(parts.len() > 2 && matches!(parts.last(), Some(TraceInput::Dense { .. })), "{} parts", parts.len());
            }
            whole.take(&input);
            for p in &parts {
                assert!(p.records_len() <= RECORDS_PER_FRAME_MAX);
                whole_or(&mut parted, p);
            }
        }
        assert!(!whole.requests.is_empty() || !whole.bios.is_empty(), "tokens again after the dense frame");
        assert_eq!(state(&whole), state(&parted));
    }

    /// The view takes a part as the worker's message carries it (in bincode).
    fn whole_or(view: &mut TraceView, part: &TraceInput) {
        let bytes = crate::protocol::encode(part).unwrap();
        view.take(&crate::protocol::decode(&bytes).unwrap());
    }
}
