//! The animation's tokens: a bio or request at the stage of the stack the trace last put it in.

use super::TraceView;
use blksim::kernel::trace::blktrace::{Action, TraceRecord};

/// Where a token is, as the trace says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenStage {
    /// A bio just queued by its process (Q).
    Queued,
    /// A bio whose process sleeps because the request pool is full (S).
    Sleeping,
    /// A bio being absorbed into a waiting request (M, F).
    Merging,
    /// A request waiting in the elevator (G, I).
    Elevator,
    /// A request issued to the device (D).
    Device,
    /// A completed request, fading out (C).
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    pub dev: u16,
    pub pid: u32,
    pub bytes: u32,
    pub write: bool,
    /// Its first sector (the tip names it, as blkparse does).
    pub sector: u64,
    pub stage: TokenStage,
    pub prev: TokenStage,
    /// Wall time (ms) of the last stage change, for the tween.
    pub moved_ms: f64,
}

/// Tokens kept at most; beyond it the diagram shows counts only (density mode).
pub const TOKENS_MAX: usize = 1500;
/// Trace records turned into tokens per frame at most; beyond it, density mode.
pub const RECORDS_PER_FRAME_MAX: usize = 4000;
/// How long a token takes to move between stages, and to fade after completion, at slow
/// speeds; faster runs shorten it (see `tween_ms_at`) so tokens keep up with the trace.
pub const TWEEN_MS: f64 = 350.0;
pub const TWEEN_MS_MIN: f64 = 40.0;

/// The tween at `speed` (simulated seconds per wall second): 350 ms up to 10 ms/s, shorter
/// above (40 ms at most speeds where a request lives less than a frame).
pub fn tween_ms_at(speed: f64) -> f64 {
    (TWEEN_MS * 0.01 / speed.max(1e-9)).clamp(TWEEN_MS_MIN, TWEEN_MS)
}

impl TraceView {
    /// Moves the tokens as a trace record says: Q makes a bio's token and S, M and F move it; G
    /// turns it into a request's token, which D and C move on. `pid`: the record's thread's.
    pub(super) fn apply(&mut self, r: &TraceRecord, now_ms: f64, pid: u32) {
        let token = |stage| Token {
            dev: r.dev.0,
            pid,
            bytes: r.bytes,
            write: r.write,
            sector: r.sector,
            stage,
            prev: TokenStage::Queued,
            moved_ms: now_ms,
        };
        let mv = |t: &mut Token, stage| {
            t.prev = t.stage;
            t.stage = stage;
            t.moved_ms = now_ms;
        };
        match r.action {
            Action::Q => {
                self.bios.insert(r.token, token(TokenStage::Queued));
            }
            Action::S => {
                if let Some(t) = self.bios.get_mut(&r.token) {
                    mv(t, TokenStage::Sleeping);
                }
            }
            Action::M | Action::F => {
                if let Some(t) = self.bios.get_mut(&r.token) {
                    mv(t, TokenStage::Merging);
                }
                if let Some(rq) = self.requests.get_mut(&r.related) {
                    rq.bytes += r.bytes;
                }
            }
            Action::G => {
                // The bio becomes a request: the token carries on from where the bio was.
                let prev = self.bios.remove(&r.related).map_or(TokenStage::Queued, |b| b.stage);
                let mut t = token(TokenStage::Elevator);
                t.prev = prev;
                self.requests.insert(r.token, t);
            }
            Action::D => {
                if let Some(t) = self.requests.get_mut(&r.token) {
                    mv(t, TokenStage::Device);
                }
            }
            Action::C => {
                if let Some(t) = self.requests.get_mut(&r.token) {
                    mv(t, TokenStage::Done);
                }
            }
            Action::I | Action::X | Action::P | Action::U | Action::A => {}
        }
    }
}
