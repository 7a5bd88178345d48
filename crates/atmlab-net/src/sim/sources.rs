//! Cell sources: traffic that is cells, not AAL5 frames (the VBR background
//! of the studies). Their cells carry no PDU; the sink only counts them.

use super::apps::VcEnd;
use super::{APP, Event, Simulation};
use crate::atm::{Cell, Pti};
use crate::ids::PortId;
use crate::pdu::PduId;
use atmlab_engine::{BitRate, CELL_BITS, Duration, SimTime, SlotClock};

/// An ON/OFF cell source (the VBR background of 97-0424): during each ON
/// period it sends cells at its peak rate, cell `k` exactly `k * 424 / peak`
/// after the period began; nothing during OFF. Periods start at exactly
/// `start + j * (on + off)`, ON first.
#[derive(Clone, Debug)]
pub struct OnOffSource {
    /// The application's name in the scenario.
    pub name: String,
    /// The sender's end.
    pub src: VcEnd,
    /// The receiver's end.
    pub dst: VcEnd,
    /// Cell rate while ON.
    pub peak: BitRate,
    /// ON time of each period.
    pub on: Duration,
    /// OFF time of each period.
    pub off: Duration,
    /// Start of the first ON period.
    pub start: SimTime,
    /// The output ports its cells cross (for the efficiency reference).
    pub path: Vec<PortId>,
    /// Counters.
    pub stats: CellSourceStats,
    pub(crate) clock: SlotClock,
    pub(crate) period: u64,
    /// Cells handed to the adapter per event (1 unless the source is the
    /// only sender on its host; see `Simulation::plan`).
    pub(crate) batch: u32,
}

/// Counters of a cell source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CellSourceStats {
    /// Cells sent.
    pub sent: u64,
    /// Cells received at the sink.
    pub received: u64,
}

impl OnOffSource {
    /// The mean rate, `peak * on / (on + off)`, bit/s.
    pub fn mean_bps(&self) -> f64 {
        let period = (self.on + self.off).as_ps() as f64;
        self.peak.bps() as f64 * self.on.as_ps() as f64 / period
    }

    /// Start of period `j`.
    pub fn period_start(&self, j: u64) -> Option<SimTime> {
        self.start.checked_add((self.on + self.off).checked_mul(j)?)
    }

    /// Positions the cell clock at the first cell of period `j`.
    pub(crate) fn begin_period(&mut self, j: u64) -> Option<SimTime> {
        let t = self.period_start(j)?;
        self.period = j;
        self.clock = SlotClock::with_epoch(self.peak, CELL_BITS, t);
        Some(t)
    }

    /// After a cell: when the next one is due.
    pub(crate) fn next_cell(&mut self) -> Option<SimTime> {
        self.clock.advance();
        let on_end = self.period_start(self.period)?.checked_add(self.on)?;
        let t = self.clock.boundary();
        if t < on_end { Some(t) } else { self.begin_period(self.period + 1) }
    }
}

impl Simulation {
    /// A cell source's cell is due now: hand it to the adapter, and with it
    /// the next `batch - 1` cells at their own (later) times when the source
    /// is the only sender on its host (its pipelined adapter then sees only
    /// these cells, in order, so taking them early changes nothing).
    pub(super) fn on_cell_source(&mut self, i: u32) {
        let src = &self.sources[i as usize];
        let (from, batch) = (src.src, src.batch);
        let host = &self.hosts[from.host.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let vc = &host.vcs[from.vc as usize];
        let cell = Cell { label: vc.label, pdu: PduId::NONE, pti: Pti::DATA, clp: false, slot: vc.slot };
        let mut due = self.now;
        for k in 1..=batch {
            self.sources[i as usize].stats.sent += 1;
            self.counts.cells_created += 1;
            self.counts.raw_created += 1;
            self.offer_at(port, due, cell);
            match self.sources[i as usize].next_cell() {
                Some(t) if t < self.end && k < batch => due = t,
                Some(t) => {
                    self.queue.push(t, APP, Event::CellSource(i));
                    break;
                }
                None => break,
            }
        }
    }
}
