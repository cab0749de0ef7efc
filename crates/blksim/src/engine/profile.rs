//! What the next event is, by kind, for a profiler outside the core (`examples/profile.rs`
//! times each event by the label it had before it ran). The core itself reads no clock.

use crate::engine::event::Event;
use crate::engine::Sim;

impl Sim {
    /// The next event's kind, and for a core's work item what it was: a thread's step (by
    /// its `Step`) or softirq work in interrupt context. None when no event is queued.
    pub fn next_event_label(&self) -> Option<String> {
        let ev = self.events.peek_event()?;
        let kind = format!("{ev:?}");
        let kind = kind.split(' ').next().unwrap_or_default().to_string();
        let Event::CoreDone { core } = ev else { return Some(kind) };
        let c = &self.cores[core];
        if c.in_irq_softirq {
            return Some(format!("{kind}/irq-softirq"));
        }
        let step = c.current.and_then(|t| self.threads[t].next);
        Some(format!("{kind}/{}", step.map_or_else(|| "none".to_string(), |s| format!("{s:?}"))))
    }
}
