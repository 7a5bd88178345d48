//! Buffer acceptance: which arriving cells a port queues.
//!
//! A port asks its [`BufferAcceptance`] policy about every cell that is not
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
//!
//! Selective Drop and Fair Buffer Allocation (per-VC occupancy against the
//! fair share `X / Na`) and CLP-threshold discard fit the same interface: they
//! read `vc_occupancy`, `active_vcs` and `clp` from the context.
//!
//! Policies are dispatched statically through [`AcceptancePolicy`] (an enum),
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
    /// VCs with at least one cell queued at the port.
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
pub trait BufferAcceptance {
    /// Decides on a cell before the buffer-space check.
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict;
    /// Handles an admitted cell that does not fit.
    fn on_overflow(&self) -> OverflowAction;
    /// Whether, after a partial discard, the frame's end-of-frame cell is
    /// still queued (if there is room) so the receiver can delimit frames.
    fn keeps_end_of_frame(&self) -> bool;
    /// Whether the policy reads `vc_occupancy` or `active_vcs`. A port whose
    /// policies do not can compute departures at arrival (pipelined mode),
    /// where those per-VC counts are not maintained. Conservative default.
    fn uses_per_vc_occupancy(&self) -> bool {
        true
    }
}

/// Plain UBR: drop cells when the buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TailDrop;

impl BufferAcceptance for TailDrop {
    fn admit(&mut self, _: &AdmitContext) -> Verdict {
        Verdict::Admit
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DropCell
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

impl BufferAcceptance for Ppd {
    fn admit(&mut self, _: &AdmitContext) -> Verdict {
        Verdict::Admit
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
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
    /// Occupancy in cells at or above which a new frame is refused.
    pub threshold: u32,
    /// As [`Ppd::keep_end_of_frame`], for frames cut by an overflow.
    pub keep_end_of_frame: bool,
}

impl BufferAcceptance for Epd {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        if ctx.first_cell_of_frame && ctx.pool_occupancy >= self.threshold {
            Verdict::DiscardFrame
        } else {
            Verdict::Admit
        }
    }
    fn on_overflow(&self) -> OverflowAction {
        OverflowAction::DiscardRestOfFrame
    }
    fn keeps_end_of_frame(&self) -> bool {
        self.keep_end_of_frame
    }
    fn uses_per_vc_occupancy(&self) -> bool {
        false
    }
}

/// The acceptance policies atmlab implements, dispatched statically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AcceptancePolicy {
    /// See [`TailDrop`].
    TailDrop(TailDrop),
    /// See [`Ppd`].
    Ppd(Ppd),
    /// See [`Epd`].
    Epd(Epd),
}

impl Default for AcceptancePolicy {
    fn default() -> Self {
        AcceptancePolicy::TailDrop(TailDrop)
    }
}

macro_rules! dispatch {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            AcceptancePolicy::TailDrop($p) => $e,
            AcceptancePolicy::Ppd($p) => $e,
            AcceptancePolicy::Epd($p) => $e,
        }
    };
}

impl BufferAcceptance for AcceptancePolicy {
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
    fn uses_per_vc_occupancy(&self) -> bool {
        dispatch!(self, p => p.uses_per_vc_occupancy())
    }
}

impl AcceptancePolicy {
    /// Short name for reports (`tail_drop`, `ppd`, `epd`).
    pub fn name(&self) -> &'static str {
        match self {
            AcceptancePolicy::TailDrop(_) => "tail_drop",
            AcceptancePolicy::Ppd(_) => "ppd",
            AcceptancePolicy::Epd(_) => "epd",
        }
    }
}
