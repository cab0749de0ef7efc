//! What a run hands the page's trace view (`TraceInput`), in order: the trace records it took
//! in (and how many the ring dropped), the start and end of an untraced span (a jump), and a
//! fresh start of the tokens after one. A long input goes in parts (`TraceInput::split`) that
//! make the same view.

use blksim::kernel::trace::blktrace::TraceRecord;
use blksim::SimTime;
use serde::{Deserialize, Serialize};

/// What a run hands its `TraceView`, in order: what the runs' worker posts for the page's view
/// (serde, so it crosses `postMessage`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TraceInput {
    /// Records the run took in, after `dropped` the ring lost; animated when `animate` says how.
    Records {
        #[serde(with = "compact_records")]
        records: Vec<TraceRecord>,
        dropped: u64,
        animate: Option<Animation>,
    },
    /// A frame had more records than the animation shows (`crate::view::RECORDS_PER_FRAME_MAX`): the
    /// diagram shows counts, not tokens. What `Records` with `animate` does with so many,
    /// after they were sent in parts (`split`).
    Dense { now_ms: f64, tween_ms: f64 },
    /// An untraced span begins (`forget_pairs`).
    Untraced,
    /// An untraced span ended: from, to, and the seq of the first record after it.
    Gap { from: SimTime, to: SimTime, next_seq: u64 },
    /// The tokens start afresh.
    ResetTokens,
}

impl TraceInput {
    /// Records in it.
    pub fn records_len(&self) -> usize {
        match self {
            TraceInput::Records { records, .. } => records.len(),
            _ => 0,
        }
    }

    /// The same input as parts of at most `records_max` records each, which a view takes to the
    /// same state as the whole: the ring's drops go with the first part, and records too many to
    /// animate go as plain records followed by `Dense`.
    pub fn split(self, records_max: usize) -> Vec<TraceInput> {
        let records_max = records_max.max(1);
        match self {
            TraceInput::Records { records, dropped, animate } if records.len() > records_max => {
                let dense = animate.map(|a| {
                    debug_assert!(records_max >= crate::view::RECORDS_PER_FRAME_MAX, "parts of an animated frame would animate");
                    TraceInput::Dense { now_ms: a.now_ms, tween_ms: a.tween_ms }
                });
                let mut parts: Vec<TraceInput> = records
                    .chunks(records_max)
                    .enumerate()
                    .map(|(i, c)| TraceInput::Records { records: c.to_vec(), dropped: if i == 0 { dropped } else { 0 }, animate: None })
                    .collect();
                parts.extend(dense);
                parts
            }
            other => vec![other],
        }
    }
}

/// Trace records cross to the page as tuples: a third of the bytes as JSON, and in bincode (the
/// worker's messages) the only form that works, since `TraceRecord`'s own serde skips an absent
/// `from`, which a format without field names cannot read back.
mod compact_records {
    use blksim::ids::{DevId, ThreadId};
    use blksim::kernel::trace::blktrace::{Action, TraceRecord};
    use blksim::SimTime;
    use serde::{Deserialize, Deserializer, Serializer};

    type Row = (u64, SimTime, DevId, u16, Action, bool, u64, u32, ThreadId, u32, u32, Option<(DevId, u64)>);

    pub fn serialize<S: Serializer>(records: &[TraceRecord], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            records
                .iter()
                .map(|r| (r.seq, r.time, r.dev, r.cpu, r.action, r.write, r.sector, r.bytes, r.thread, r.token, r.related, r.from)),
        )
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TraceRecord>, D::Error> {
        let rows = Vec::<Row>::deserialize(d)?;
        Ok(rows
            .into_iter()
            .map(|(seq, time, dev, cpu, action, write, sector, bytes, thread, token, related, from)| TraceRecord {
                seq,
                time,
                dev,
                cpu,
                action,
                write,
                sector,
                bytes,
                thread,
                token,
                related,
                from,
            })
            .collect())
    }
}

/// How a frame animates its records: its wall time (ms), the tween for the run's speed, and
/// each thread's pid (by the trace's thread index).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Animation {
    pub now_ms: f64,
    pub tween_ms: f64,
    pub pids: Vec<u32>,
}
