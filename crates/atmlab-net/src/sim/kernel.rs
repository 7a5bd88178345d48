//! The loop's kernel: the clock, the event queue, the run's counters and
//! why it stopped. Every part is handed the kernel explicitly to read the
//! time, schedule its events and count what it moves; it is the loop's own
//! state, not a part of the network.

use crate::ids::{AbrEndId, ConnId, FlowId, HostId, PortId, ProbeId, PullId, SourceGroupId};
use atmlab_engine::{EventClass, EventQueue, SimTime};

/// The clock, the queue and the counters of one run.
pub(super) struct Kernel {
    /// The current simulated time.
    pub(super) now: SimTime,
    /// When the run ends.
    pub(super) end: SimTime,
    /// The end of the stretch `Simulation::advance` is running: no event at
    /// or after it runs before the caller asks again.
    pub(super) until: SimTime,
    pub(super) queue: EventQueue<Event>,
    /// Whether a handler may take its own next event at once when nothing
    /// pending comes before it (`Simulation::run_ahead`); off without event
    /// elision, the reference mode.
    pub(super) run_ahead: bool,
    /// Cells counted for the conservation check and the speed figures.
    pub(super) counts: Counts,
    /// Why the run stopped early (the memory guard, a full table), if it
    /// did.
    pub(super) stopped: Option<String>,
    /// The trace, if the run writes one (`trace.rs`): every part writes
    /// its own records to it.
    pub(super) trace: Option<Box<super::trace::Trace>>,
}

impl Kernel {
    /// A run that ends at `end`, at time zero.
    pub(super) fn new(end: SimTime) -> Kernel {
        Kernel {
            now: SimTime::ZERO,
            end,
            until: SimTime::ZERO,
            queue: EventQueue::new(),
            run_ahead: false,
            counts: Counts::default(),
            stopped: None,
            trace: None,
        }
    }

    /// Stops the run, with why (the first reason given is kept).
    pub(super) fn stop(&mut self, why: String) {
        self.stopped.get_or_insert(why);
    }
}

pub(super) const ARRIVAL: EventClass = EventClass(0);
pub(super) const APP: EventClass = EventClass(1);
pub(super) const SLOT: EventClass = EventClass(2);
pub(super) const PROBE: EventClass = EventClass(3);

/// Which TCP timer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum TcpTimer {
    Retransmit,
    DelayedAck,
    /// The application's next write call (socket send path).
    Write,
}

/// An event of the loop; each names the part that owns it (`mod.rs`,
/// `Simulation::advance`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Event {
    LinkArrival(PortId),
    RmDue(PortId),
    PortSlot(PortId),
    TcpStart(ConnId),
    TcpTimer(ConnId, TcpTimer, u32),
    UdpSend(FlowId, u64),
    TcpStop(ConnId),
    CellSource(SourceGroupId),
    Probe(ProbeId),
    HostTx(HostId),
    HostRx(HostId),
    AbrSend(AbrEndId, u32),
    AbrTrailing(AbrEndId, u32),
    AbrOutOfRate(AbrEndId, u32),
    /// A persistent ABR source starts.
    AbrStart(AbrEndId),
    ControlDeadline(PortId, u32),
    Pull(PullId),
    /// A packet from outside enters its host (`external.rs`).
    External(u32),
}

/// Cells created, moved and settled over the run.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    /// Cells created (AAL5 frames' and cell sources').
    pub(super) cells_created: u64,
    /// Frames sent and datagrams queued for a host's sending or receiving
    /// CPU, in the cells their records count for the memory guard
    /// (`guard.rs`).
    pub(super) records_made: u64,
    /// Cell sources' cells created, received at their sinks, and lost.
    pub(super) raw_created: u64,
    pub(super) raw_received: u64,
    pub(super) raw_lost: u64,
    /// Cells that crossed a link.
    pub(super) cell_hops: u64,
    /// Events processed (those taken at once by `Simulation::run_ahead`
    /// included).
    pub(super) events: u64,
    /// Of those, taken at once by `Simulation::run_ahead`.
    pub(super) ran_ahead: u64,
    /// Cells discarded by usage parameter control.
    pub(super) policed: u64,
    /// RM cells that ended at a VS/VD switch (turned around or absorbed).
    pub(super) rm_absorbed: u64,
    /// In-rate slots ABR sources ran ahead, without an event of their own.
    pub(super) abr_ahead: u64,
}

/// The order of something at `at_ps` with tie `index` (an arrival on link
/// `index`; a cell source's member `index`) as one integer: time first,
/// then the index.
#[inline]
pub(super) fn order_key(at_ps: u64, index: u32) -> u128 {
    (u128::from(at_ps) << 64) | u128::from(index)
}
