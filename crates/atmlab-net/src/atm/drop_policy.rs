//! Drop policies (buffer acceptance, TM 4.0): which arriving cells a port
//! queues. The scenario key is `drop_policy`.
//!
//! A port asks its [`DropPolicy`] (through the [`AdmissionRule`] every
//! policy implements) about every cell that is not
//! already part of a frame being discarded. The port itself keeps the frame
//! bookkeeping that every frame-aware policy needs (is this the first cell of
//! an AAL5 frame? is the rest of this frame being discarded?), the buffer
//! occupancy of the cell's pool, the cell's VC occupancy and the number of
//! active VCs, and hands them over in an [`AdmitContext`]. A policy therefore
//! only states its rule:
//!
//! | policy | rule |
//! |---|---|
//! | tail drop | queue while there is room; drop single cells on overflow |
//! | PPD | as tail drop, but once a cell is lost drop the rest of its frame |
//! | EPD | refuse a whole new frame if occupancy `>=` threshold; PPD on overflow |
//! | Selective Drop | above threshold `R`, refuse a new frame of a VC whose load ratio `Y_i Na / X` exceeds `Z` |
//! | FBA | as Selective Drop with the bound `Z (K - R) / (X - R)`, which shrinks as the buffer fills |
//!
//! (`X`: cells in the pool, `K`: its size, `Y_i`: the VC's cells, `Na`: VCs
//! with cells in the pool.)
//!
//! Policies are dispatched statically through [`DropPolicy`] (an enum),
//! so adding one means adding a struct that implements the trait and a
//! variant; no `dyn` on the per-cell path.

use serde::Serialize;

/// What a policy sees when it decides on a cell.
#[derive(Clone, Copy, Debug)]
pub struct AdmitContext {
    /// The cell starts an AAL5 frame (the previous cell of its VC ended one).
    pub first_cell_of_frame: bool,
    /// The cell ends an AAL5 frame.
    pub end_of_frame: bool,
    /// The cell is tagged (CLP = 1).
    pub clp: bool,
    /// Cells now in the pool this cell would use.
    pub pool_occupancy: u32,
    /// Capacity of that pool in cells.
    pub pool_limit: u32,
    /// Cells of this cell's VC now queued at the port.
    pub vc_occupancy: u32,
    /// VCs with at least one cell in the cell's pool.
    pub active_vcs: u32,
}

/// A policy's verdict on a cell that is not part of a discarded frame.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Queue it if the pool has room.
    Admit,
    /// Discard this cell and every later cell of its frame, the last one
    /// included (EPD refusing a new frame).
    DiscardFrame,
}

/// What happens to an admitted cell that finds its pool full.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OverflowAction {
    /// Drop this cell only; later cells of the frame are judged afresh.
    DropCell,
    /// Drop this cell and the rest of its frame (PPD); the frame's last cell
    /// is kept when the policy says so and there is room.
    DiscardRestOfFrame,
}

/// A buffer acceptance policy.
pub trait AdmissionRule {
    /// Decides on a cell before the buffer-space check.
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict;
    /// Handles an admitted cell that does not fit.
    fn on_overflow(&self) -> OverflowAction;
    /// Whether, after a partial discard, the frame's end-of-frame cell is
    /// still queued (if there is room) so the receiver can delimit frames.
    fn keeps_end_of_frame(&self) -> bool;
    /// Whether a frame refused from its first cell ([`Verdict::DiscardFrame`])
    /// still has its end-of-frame cell queued, if there is room (the FORE
    /// ASX-200's EPD, 002 s3.1). Default: no, nothing of it is queued.
    fn keeps_end_of_refused_frame(&self) -> bool {
        false
    }
    /// Whether the policy reads `vc_occupancy` or `active_vcs`. A port whose
    /// policies do not can compute departures at arrival (pipelined mode),
    /// where those per-VC counts are not maintained. Conservative default.
    fn uses_per_vc_occupancy(&self) -> bool {
        true
    }
    /// Whether the policy judges a frame at its first cell alone and admits
    /// every later cell of it ([`Verdict::Admit`] whenever
    /// `first_cell_of_frame` is false; the cell then fits or overflows): a
    /// port may then skip the rule for those cells. Conservative default.
    fn judges_first_cells_only(&self) -> bool {
        false
    }
}

/// Plain UBR: drop cells when the buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TailDrop;

impl AdmissionRule for TailDrop {
    fn admit(&mut self, _: &AdmitContext) -> Verdict {
        Verdict::Admit
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DropCell
    }
    fn judges_first_cells_only(&self) -> bool {
        true
    }
    fn keeps_end_of_frame(&self) -> bool {
        false
    }
    fn uses_per_vc_occupancy(&self) -> bool {
        false
    }
}

/// Partial Packet Discard: after a cell of a frame is dropped, drop the rest
/// of that frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ppd {
    /// Keep the end-of-frame cell of a partially discarded frame (FORE
    /// ASX-200 behaviour; the default).
    pub keep_end_of_frame: bool,
}

impl AdmissionRule for Ppd {
    fn admit(&mut self, _: &AdmitContext) -> Verdict {
        Verdict::Admit
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
    }
    fn judges_first_cells_only(&self) -> bool {
        true
    }
    fn keeps_end_of_frame(&self) -> bool {
        self.keep_end_of_frame
    }
    fn uses_per_vc_occupancy(&self) -> bool {
        false
    }
}

/// Early Packet Discard (Romanow and Floyd 1995): refuse new frames once the
/// occupancy reaches a threshold; PPD on overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Epd {
    /// Occupancy in cells at or above which a new frame is refused (above
    /// which, with `strict`).
    pub threshold: u32,
    /// Refuse only when the occupancy is greater than the threshold (002:
    /// "if the fill level is greater than EPDth"), so that a threshold equal
    /// to the buffer is PPD. Default: at or above (YATS `MuxEPD`).
    pub strict: bool,
    /// As [`Ppd::keep_end_of_frame`], for frames cut by an overflow.
    pub keep_end_of_frame: bool,
    /// Queue the end-of-frame cell of a refused frame, if there is room.
    pub keep_end_of_refused_frame: bool,
}

impl Epd {
    /// EPD at `threshold` with the defaults: `>=`, the end of a cut frame
    /// kept, nothing of a refused frame kept.
    pub fn new(threshold: u32) -> Epd {
        Epd { threshold, strict: false, keep_end_of_frame: true, keep_end_of_refused_frame: false }
    }
}

impl AdmissionRule for Epd {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let over = if self.strict { ctx.pool_occupancy > self.threshold } else { ctx.pool_occupancy >= self.threshold };
        if ctx.first_cell_of_frame && over { Verdict::DiscardFrame } else { Verdict::Admit }
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
    }
    fn judges_first_cells_only(&self) -> bool {
        true
    }
    fn keeps_end_of_frame(&self) -> bool {
        self.keep_end_of_frame
    }
    fn keeps_end_of_refused_frame(&self) -> bool {
        self.keep_end_of_refused_frame
    }
    fn uses_per_vc_occupancy(&self) -> bool {
        false
    }
}

/// Selective Drop (Goyal, Jain, Kalyanaraman, Fahmy, Kim, "UBR+", ICC 1997):
/// when the pool holds more than `threshold` cells, a new frame of a VC whose
/// load ratio `Y_i * Na / X` (its cells against the fair share `X / Na`)
/// exceeds `z` is refused whole; PPD on overflow.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SelectiveDrop {
    /// `R`: occupancy above which frames are judged, cells.
    pub threshold: u32,
    /// `Z`: the load ratio above which a VC's new frames are refused.
    pub z: f64,
    /// As [`Ppd::keep_end_of_frame`], for frames cut by an overflow.
    pub keep_end_of_frame: bool,
}

impl AdmissionRule for SelectiveDrop {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let x = ctx.pool_occupancy;
        if ctx.first_cell_of_frame
            && x > self.threshold
            && f64::from(ctx.vc_occupancy) * f64::from(ctx.active_vcs) > self.z * f64::from(x)
        {
            Verdict::DiscardFrame
        } else {
            Verdict::Admit
        }
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
    }
    fn judges_first_cells_only(&self) -> bool {
        true
    }
    fn keeps_end_of_frame(&self) -> bool {
        self.keep_end_of_frame
    }
}

/// Fair Buffer Allocation (Heinanen and Kilkki): as Selective Drop, but the
/// admissible load ratio shrinks as the buffer fills, from infinity just above
/// `threshold` to `z` when full: refuse if `Y_i Na / X > z (K - R) / (X - R)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Fba {
    /// `R`: occupancy above which frames are judged, cells.
    pub threshold: u32,
    /// `Z`: the admissible load ratio when the buffer is full.
    pub z: f64,
    /// As [`Ppd::keep_end_of_frame`], for frames cut by an overflow.
    pub keep_end_of_frame: bool,
}

impl AdmissionRule for Fba {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let (x, r, k) = (ctx.pool_occupancy, self.threshold, ctx.pool_limit);
        if ctx.first_cell_of_frame && x > r {
            // Y Na / X > Z (K - R) / (X - R)  <=>  Y Na (X - R) > Z (K - R) X
            let lhs = f64::from(ctx.vc_occupancy) * f64::from(ctx.active_vcs) * f64::from(x - r);
            let rhs = self.z * f64::from(k.saturating_sub(r)) * f64::from(x);
            if lhs > rhs {
                return Verdict::DiscardFrame;
            }
        }
        Verdict::Admit
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
    }
    fn judges_first_cells_only(&self) -> bool {
        true
    }
    fn keeps_end_of_frame(&self) -> bool {
        self.keep_end_of_frame
    }
}

/// The acceptance policies atmlab implements, dispatched statically.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DropPolicy {
    /// See [`TailDrop`].
    TailDrop(TailDrop),
    /// See [`Ppd`].
    Ppd(Ppd),
    /// See [`Epd`].
    Epd(Epd),
    /// See [`SelectiveDrop`].
    SelectiveDrop(SelectiveDrop),
    /// See [`Fba`].
    Fba(Fba),
}

impl Default for DropPolicy {
    fn default() -> Self {
        DropPolicy::TailDrop(TailDrop)
    }
}

macro_rules! dispatch {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            DropPolicy::TailDrop($p) => $e,
            DropPolicy::Ppd($p) => $e,
            DropPolicy::Epd($p) => $e,
            DropPolicy::SelectiveDrop($p) => $e,
            DropPolicy::Fba($p) => $e,
        }
    };
}

impl AdmissionRule for DropPolicy {
    #[inline]
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        dispatch!(self, p => p.admit(ctx))
    }
    #[inline]
    fn on_overflow(&self) -> OverflowAction {
        dispatch!(self, p => p.on_overflow())
    }
    #[inline]
    fn keeps_end_of_frame(&self) -> bool {
        dispatch!(self, p => p.keeps_end_of_frame())
    }
    #[inline]
    fn keeps_end_of_refused_frame(&self) -> bool {
        dispatch!(self, p => p.keeps_end_of_refused_frame())
    }
    fn uses_per_vc_occupancy(&self) -> bool {
        dispatch!(self, p => p.uses_per_vc_occupancy())
    }
    fn judges_first_cells_only(&self) -> bool {
        dispatch!(self, p => p.judges_first_cells_only())
    }
}

impl DropPolicy {
    /// Short name for reports (`tail_drop`, `ppd`, `epd`).
    pub fn name(&self) -> &'static str {
        match self {
            DropPolicy::TailDrop(_) => "tail_drop",
            DropPolicy::Ppd(_) => "ppd",
            DropPolicy::Epd(_) => "epd",
            DropPolicy::SelectiveDrop(_) => "selective_drop",
            DropPolicy::Fba(_) => "fba",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(x: u32, k: u32, y: u32, na: u32) -> AdmitContext {
        AdmitContext {
            first_cell_of_frame: true,
            end_of_frame: false,
            clp: false,
            pool_occupancy: x,
            pool_limit: k,
            vc_occupancy: y,
            active_vcs: na,
        }
    }

    #[test]
    fn test_selective_drop_arithmetic() {
        // docs/models/atm.md, worked by hand: X = 800, R = 600, Na = 4, Z = 0.8.
        let mut sd = SelectiveDrop { threshold: 600, z: 0.8, keep_end_of_frame: true };
        assert_eq!(sd.admit(&ctx(800, 1000, 300, 4)), Verdict::DiscardFrame, "ratio 1.5");
        assert_eq!(sd.admit(&ctx(800, 1000, 150, 4)), Verdict::Admit, "ratio 0.75");
        assert_eq!(sd.admit(&ctx(600, 1000, 600, 1)), Verdict::Admit, "not above R");
        let mut mid = ctx(800, 1000, 300, 4);
        mid.first_cell_of_frame = false;
        assert_eq!(sd.admit(&mid), Verdict::Admit, "decisions are per frame");
    }

    proptest::proptest! {
        /// A policy that says it judges frames at their first cells only
        /// admits every later cell, whatever the buffer holds (a port
        /// skips the rule for those cells on its word).
        #[test]
        fn prop_a_policy_judging_first_cells_only_admits_the_rest(
            x in 0u32..2_000,
            k in 1u32..2_000,
            y in 0u32..2_000,
            na in 0u32..64,
            threshold in 0u32..2_000,
            z in 0.0f64..4.0,
            eof in proptest::bool::ANY,
            clp in proptest::bool::ANY,
        ) {
            let policies = [
                DropPolicy::TailDrop(TailDrop),
                DropPolicy::Ppd(Ppd { keep_end_of_frame: true }),
                DropPolicy::Epd(Epd { threshold, strict: eof, keep_end_of_frame: true, keep_end_of_refused_frame: false }),
                DropPolicy::SelectiveDrop(SelectiveDrop { threshold, z, keep_end_of_frame: true }),
                DropPolicy::Fba(Fba { threshold, z, keep_end_of_frame: true }),
            ];
            let mut later = ctx(x, k, y, na);
            later.first_cell_of_frame = false;
            later.end_of_frame = eof;
            later.clp = clp;
            for mut p in policies {
                proptest::prop_assert!(p.judges_first_cells_only(), "{}", p.name());
                proptest::prop_assert_eq!(p.admit(&later), Verdict::Admit, "{}", p.name());
            }
        }
    }

    #[test]
    fn test_fba_arithmetic() {
        // K = 1000, R = 600, X = 800, Z = 0.8: bound 0.8 * 400 / 200 = 1.6.
        let mut fba = Fba { threshold: 600, z: 0.8, keep_end_of_frame: true };
        assert_eq!(fba.admit(&ctx(800, 1000, 300, 4)), Verdict::Admit, "1.5 < 1.6: SD would drop it");
        assert_eq!(fba.admit(&ctx(800, 1000, 330, 4)), Verdict::DiscardFrame, "1.65 > 1.6");
        // Full buffer: the bound is Z.
        assert_eq!(fba.admit(&ctx(1000, 1000, 210, 4)), Verdict::DiscardFrame, "0.84 > 0.8");
        assert_eq!(fba.admit(&ctx(1000, 1000, 190, 4)), Verdict::Admit, "0.76 < 0.8");
    }
}
