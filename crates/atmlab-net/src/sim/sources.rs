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
/// `start + j * (on + off)`, ON first. It never sends faster than its peak:
/// when the OFF time is shorter than a cell time at the peak rate, a
/// period's first cell waits until a cell time after the last one (and
/// periods too short to hold a cell then are skipped).
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
    /// When the last cell was sent.
    pub(crate) last: Option<SimTime>,
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

    /// Positions the cell clock at the first cell of period `j`, or of the
    /// first later period with ON time left a cell time after the last cell.
    pub(crate) fn begin_period(&mut self, j: u64) -> Option<SimTime> {
        let mut j = j;
        let mut t = self.period_start(j)?;
        if let Some(earliest) = self.last.and_then(|l| l.checked_add(self.peak.cell_time()))
            && t < earliest
        {
            if t.checked_add(self.on)? <= earliest {
                // The first period whose ON time ends after `earliest`:
                // start + k (on + off) + on > earliest.
                let period = u128::from((self.on + self.off).as_ps());
                let past = u128::from((earliest - self.start).as_ps()).saturating_sub(u128::from(self.on.as_ps()));
                j = j.max(u64::try_from(past / period + 1).ok()?);
                t = self.period_start(j)?;
            }
            t = t.max(earliest);
        }
        self.period = j;
        self.clock = SlotClock::with_epoch(self.peak, CELL_BITS, t);
        Some(t)
    }

    /// After a cell: when the next one is due.
    pub(crate) fn next_cell(&mut self) -> Option<SimTime> {
        self.last = Some(self.clock.boundary());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    fn source(peak_bps: u64, on: Duration, off: Duration) -> OnOffSource {
        let peak = BitRate::from_bps(peak_bps).unwrap();
        let end = VcEnd { host: HostId(0), vc: 0 };
        let mut s = OnOffSource {
            name: "s".into(),
            src: end,
            dst: end,
            peak,
            on,
            off,
            start: SimTime::ZERO,
            path: Vec::new(),
            stats: CellSourceStats::default(),
            clock: SlotClock::new(peak, CELL_BITS),
            period: 0,
            last: None,
            batch: 1,
        };
        s.begin_period(0);
        s
    }

    fn cells(s: &mut OnOffSource, n: usize) -> Vec<u64> {
        let mut out = vec![s.clock.boundary().as_ps()];
        for _ in 1..n {
            out.push(s.next_cell().unwrap().as_ps());
        }
        out
    }

    #[test]
    fn test_cells_at_the_peak_rate_while_on_none_while_off() {
        // 1 Mbit/s: a cell every 424 us; ON 1 ms holds cells at 0, 424, 848 us.
        let mut s = source(1_000_000, Duration::from_ms(1), Duration::from_ms(1));
        let t = cells(&mut s, 5);
        assert_eq!(t, [0, 424_000_000, 848_000_000, 2_000_000_000, 2_424_000_000]);
    }

    #[test]
    fn test_never_faster_than_the_peak_when_periods_are_shorter_than_a_cell() {
        // ON 1 ps, OFF 0: a new period every picosecond, but one cell time
        // (424 ms at 1 kbit/s) between cells.
        let mut s = source(1_000, Duration::from_ps(1), Duration::ZERO);
        let t = cells(&mut s, 4);
        assert!(t.windows(2).all(|w| w[1] - w[0] >= 424_000_000_000), "{t:?}");
        // ON 1.5 cell times, no OFF: never two cells closer than a cell time.
        let cell = 424_000_000_000;
        let mut s = source(1_000, Duration::from_ps(cell * 3 / 2), Duration::ZERO);
        let t = cells(&mut s, 20);
        assert!(t.windows(2).all(|w| w[1] - w[0] >= cell), "{t:?}");
    }
}
