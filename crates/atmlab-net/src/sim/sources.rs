//! Cell sources: traffic that is cells, not frames an end system rebuilds
//! (the VBR backgrounds of the studies). Their cells carry no PDU; the sink
//! only counts them. A source sends in one of two patterns:
//!
//! * [`OnOff`]: the peak rate during each ON period, nothing during OFF
//!   (97-0424's VBR, 97-0177R2's ON-OFF comparison);
//! * [`Piecewise`]: a constant rate per interval, from a sequence of rates
//!   and a distribution of interval lengths (97-0177R2's MPEG-2 transport
//!   streams: a long-range dependent rate per inter-MPCR interval).
//!
//! A source may mark every `frame_cells`-th cell as the end of an AAL5
//! frame (two 188-byte TS packets per PDU are 8 cells), so that frame-aware
//! drop policies see frames; the sink still only counts cells.

use super::Simulation;
use super::apps::VcEnd;
use super::kernel::{APP, Event};
use crate::atm::{Cell, Pti};
use crate::ids::{PortId, SourceGroupId};
use crate::pdu::PduId;
use atmlab_engine::{BitRate, CELL_BITS, Duration, SimRng, SimTime, SlotClock};

/// An application of cell sources: one source, or several multiplexed on
/// its VC (97-0177R2's nine video streams on one VBR VC). The sink cannot
/// tell their cells apart: results are per application.
#[derive(Clone, Debug)]
pub struct CellApp {
    /// The application's name in the scenario.
    pub name: String,
    /// The sender's end.
    pub src: VcEnd,
    /// The receiver's end.
    pub dst: VcEnd,
    /// The output ports its cells cross (for the efficiency reference).
    pub path: Vec<PortId>,
    /// Cells received at the sink.
    pub received: u64,
    /// Probed applications only: when the cells counted in `received`
    /// ahead of their arrival (a link into a host counts a cell source's
    /// cells when they are put on it) reach the sink, so that a sample
    /// counts the cells that have arrived by then.
    pub(super) early: Option<std::collections::VecDeque<atmlab_engine::SimTime>>,
}

/// A cell source.
#[derive(Clone, Debug)]
pub struct CellSource {
    /// The application it belongs to (an index into the cell applications).
    pub app: u32,
    /// The sender's end.
    pub src: VcEnd,
    /// Counters.
    pub stats: CellSourceStats,
    /// When it sends.
    pub pattern: Pattern,
    /// Every this many cells, one ends a frame (`None`: no frame marks).
    pub frame_cells: Option<u32>,
    /// When its first cell is due (`None`: it never sends).
    pub first: Option<SimTime>,
    /// With `frame_cells`: cells until the next one that ends a frame, that
    /// one included (a count down, not a remainder of `sent`: no division
    /// per cell).
    pub(super) frame_left: u32,
}

/// Cell sources that share one event: the sources of a host whose adapter
/// carries their cells alone (and nobody samples it) hand it their cells
/// ahead of time, merged in time order, `batch` cells per event; any other
/// source is a group of its own with a batch of one (see
/// `Simulation::plan`). Merging matters where many sources share a host:
/// the nine video streams of 97-0177R2 cost one event per cell before.
#[derive(Clone, Debug)]
pub(crate) struct SourceGroup {
    /// The sources (indices into the cell sources), in increasing order.
    pub members: Vec<u32>,
    /// When each member's next cell is due (`None`: it has no more).
    pub next: Vec<Option<SimTime>>,
    /// Cells handed to the adapter per event.
    pub batch: u32,
}

impl SourceGroup {
    /// The member whose cell is due first (the lowest index at equal
    /// times), and when.
    ///
    /// The minimum of keys (time, index) with no branch on the times,
    /// which come in no order the branch predictor could learn (a
    /// comparison and a branch per member mispredicts).
    #[inline]
    fn earliest(&self) -> Option<(usize, SimTime)> {
        let key =
            |(m, t): (usize, &Option<SimTime>)| t.map_or(u128::MAX, |t| super::kernel::order_key(t.as_ps(), m as u32));
        let best = self.next.iter().enumerate().map(key).min()?;
        (best != u128::MAX).then(|| (best as u64 as usize, SimTime::from_ps((best >> 64) as u64)))
    }
}

/// Counters of a cell source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CellSourceStats {
    /// Cells sent.
    pub sent: u64,
}

/// How a cell source sends.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// ON/OFF at a peak rate.
    OnOff(OnOff),
    /// A constant rate per interval.
    Piecewise(Piecewise),
}

impl Pattern {
    /// When the first cell is due (`None`: never), for a run that ends at
    /// `end` (a piecewise pattern looks for cells no further).
    pub(crate) fn first(&mut self, end: SimTime) -> Option<SimTime> {
        match self {
            Pattern::OnOff(p) => p.begin_period(0),
            Pattern::Piecewise(p) => {
                p.horizon = end;
                p.begin_interval(p.start)
            }
        }
    }

    /// After a cell: when the next one is due.
    pub(crate) fn next_cell(&mut self) -> Option<SimTime> {
        match self {
            Pattern::OnOff(p) => p.next_cell(),
            Pattern::Piecewise(p) => p.next_cell(),
        }
    }

    /// The highest rate it sends at, bit/s.
    pub fn peak_bps(&self) -> f64 {
        match self {
            Pattern::OnOff(p) => p.peak.bps() as f64,
            Pattern::Piecewise(p) => p.peak_bps,
        }
    }

    /// The mean rate it is set up for, bit/s (ON/OFF: `peak * on / (on +
    /// off)`; piecewise: the mean of its rates, weighted by the mean interval).
    pub fn mean_bps(&self) -> f64 {
        match self {
            Pattern::OnOff(p) => p.mean_bps(),
            Pattern::Piecewise(p) => p.mean_bps(),
        }
    }
}

/// An ON/OFF pattern: during each ON period cells at the peak rate, cell
/// `k` exactly `k * 424 / peak` after the period began; nothing during OFF.
/// Periods start at exactly `start + j * (on + off)`, ON first. It never
/// sends faster than its peak: when the OFF time is shorter than a cell
/// time at the peak rate, a period's first cell waits until a cell time
/// after the last one (and periods too short to hold a cell then are
/// skipped).
#[derive(Clone, Debug)]
pub struct OnOff {
    /// Cell rate while ON.
    pub peak: BitRate,
    /// ON time of each period.
    pub on: Duration,
    /// OFF time of each period.
    pub off: Duration,
    /// Start of the first ON period.
    pub start: SimTime,
    clock: SlotClock,
    period: u64,
    /// When the last cell was sent.
    last: Option<SimTime>,
}

impl OnOff {
    /// A pattern of `peak` rate, `on` and `off` times, from `start`.
    pub fn new(peak: BitRate, on: Duration, off: Duration, start: SimTime) -> OnOff {
        OnOff { peak, on, off, start, clock: SlotClock::new(peak, CELL_BITS), period: 0, last: None }
    }

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
    fn begin_period(&mut self, j: u64) -> Option<SimTime> {
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

    fn next_cell(&mut self) -> Option<SimTime> {
        self.last = Some(self.clock.boundary());
        self.clock.advance();
        let on_end = self.period_start(self.period)?.checked_add(self.on)?;
        let t = self.clock.boundary();
        if t < on_end { Some(t) } else { self.begin_period(self.period + 1) }
    }
}

/// The lengths of a piecewise pattern's intervals.
#[derive(Clone, Debug)]
pub enum Intervals {
    /// Every interval this long.
    Constant(Duration),
    /// Uniform in `[min, max]` (inclusive, in picoseconds), drawn from the
    /// source's own stream.
    Uniform {
        /// Shortest.
        min: Duration,
        /// Longest.
        max: Duration,
        /// The source's stream for the draws.
        rng: Box<SimRng>,
    },
}

impl Intervals {
    fn draw(&mut self) -> Duration {
        use rand::RngExt;
        match self {
            Intervals::Constant(d) => *d,
            Intervals::Uniform { min, max, rng } => Duration::from_ps(rng.random_range(min.as_ps()..=max.as_ps())),
        }
    }

    /// The mean interval.
    pub fn mean(&self) -> Duration {
        match self {
            Intervals::Constant(d) => *d,
            Intervals::Uniform { min, max, .. } => Duration::from_ps(min.as_ps() / 2 + max.as_ps() / 2),
        }
    }

    /// The shortest interval.
    pub fn min(&self) -> Duration {
        match self {
            Intervals::Constant(d) | Intervals::Uniform { min: d, .. } => *d,
        }
    }
}

/// A piecewise-constant rate: interval `i` lasts `T_i` (from
/// [`Intervals`]) and carries cells at rate `R_i` (the `i`-th of `rates`),
/// uniformly spaced: cell `k` of the interval exactly `k * 424 / R_i` after
/// its start (97-0177R2 s4: "the video source sends cells at a rate Ri
/// uniformly spaced in the interval Ti"). A rate below 0.5 bit/s sends
/// nothing in its interval. When the rates run out the source falls silent
/// (or starts over, with `cycle`).
#[derive(Clone, Debug)]
pub struct Piecewise {
    /// The rate of each interval, bit/s of 53-byte cells.
    pub rates: Vec<f64>,
    /// Start the rates over when they run out.
    pub cycle: bool,
    /// The intervals' lengths.
    pub intervals: Intervals,
    /// When the first interval starts.
    pub start: SimTime,
    /// The highest rate the pattern may send (for results).
    pub peak_bps: f64,
    next: usize,
    interval_end: SimTime,
    clock: SlotClock,
    /// No interval starting at or after it is begun: the run is over by
    /// then (silent intervals are skipped one by one, and a cycle of them
    /// would otherwise be walked to the end of time).
    horizon: SimTime,
}

impl Piecewise {
    /// A pattern of `rates` over `intervals` from `start`.
    pub fn new(rates: Vec<f64>, cycle: bool, intervals: Intervals, start: SimTime, peak_bps: f64) -> Piecewise {
        let unit = BitRate::from_bps(1).expect("1 bit/s is a rate");
        Piecewise {
            rates,
            cycle,
            intervals,
            start,
            peak_bps,
            next: 0,
            interval_end: start,
            clock: SlotClock::new(unit, CELL_BITS),
            horizon: SimTime::MAX,
        }
    }

    /// The mean of the rates (each interval has the same mean length), bit/s.
    pub fn mean_bps(&self) -> f64 {
        if self.rates.is_empty() { 0.0 } else { self.rates.iter().sum::<f64>() / self.rates.len() as f64 }
    }

    /// Starts the intervals from `t` on, until one holds a cell; returns
    /// its first cell's time (`None` if none does before the horizon).
    fn begin_interval(&mut self, mut t: SimTime) -> Option<SimTime> {
        loop {
            if t >= self.horizon {
                return None;
            }
            if self.next == self.rates.len() {
                if !self.cycle || self.rates.is_empty() {
                    return None;
                }
                self.next = 0;
            }
            let rate = self.rates[self.next];
            self.next += 1;
            let end = t.checked_add(self.intervals.draw())?;
            self.interval_end = end;
            if let Some(r) = BitRate::from_bps(rate.round() as u64) {
                self.clock = SlotClock::with_epoch(r, CELL_BITS, t);
                if self.clock.boundary() < end {
                    return Some(self.clock.boundary());
                }
            }
            if end == t {
                return None; // zero-length intervals never end (excluded when built)
            }
            t = end;
        }
    }

    fn next_cell(&mut self) -> Option<SimTime> {
        self.clock.advance();
        let t = self.clock.boundary();
        if t < self.interval_end { Some(t) } else { self.begin_interval(self.interval_end) }
    }
}

/// The cell sources of a run, the groups that share their events, and
/// their applications (what results and probes report).
pub(super) struct Sources {
    list: Vec<CellSource>,
    /// The cell sources by the events they share.
    groups: Vec<SourceGroup>,
    apps: Vec<CellApp>,
}

impl Sources {
    pub(super) fn new(list: Vec<CellSource>, groups: Vec<SourceGroup>, apps: Vec<CellApp>) -> Sources {
        Sources { list, groups, apps }
    }

    /// Schedules every group's first cell.
    pub(super) fn start(&mut self, k: &mut super::kernel::Kernel) {
        for src in &mut self.list {
            src.first = src.pattern.first(k.end);
        }
        for (g, group) in self.groups.iter_mut().enumerate() {
            for (m, &i) in group.members.iter().enumerate() {
                group.next[m] = self.list[i as usize].first;
            }
            if let Some(t) = group.next.iter().flatten().min() {
                k.queue.push(*t, APP, Event::CellSource(SourceGroupId(g as u32)));
            }
        }
    }

    /// A probe watches application `a`'s rate: it counts the cells that
    /// arrive ahead of their time apart.
    pub(super) fn watch(&mut self, a: u32) {
        self.apps[a as usize].early = Some(std::collections::VecDeque::new());
    }

    /// A cell of application `a` reached its sink; `early`: counted now but
    /// arriving then (which a probe of its rate must know).
    #[inline]
    pub(super) fn received(&mut self, a: u32, early: Option<SimTime>) {
        let app = &mut self.apps[a as usize];
        app.received += 1;
        if let (Some(at), Some(ahead)) = (early, &mut app.early) {
            ahead.push_back(at);
        }
    }

    /// Application `a`'s name.
    pub(super) fn app_name(&self, a: u32) -> &str {
        &self.apps[a as usize].name
    }

    /// The mean rate of the cell sources whose path crosses port `p`, bit/s.
    pub(super) fn mean_bps_through(&self, p: PortId) -> f64 {
        let crossing = |s: &&CellSource| self.apps[s.app as usize].path.contains(&p);
        self.list.iter().filter(crossing).map(|s| s.pattern.mean_bps()).sum()
    }

    /// The cells received by the applications whose path crosses port `p`.
    pub(super) fn received_through(&self, p: PortId) -> u64 {
        self.apps.iter().filter(|a| a.path.contains(&p)).map(|a| a.received).sum()
    }

    /// Each application's results over a run of `dur` seconds.
    pub(super) fn results(
        &self,
        dur: f64,
        host_name: &dyn Fn(crate::ids::HostId) -> String,
    ) -> Vec<super::CellSourceResult> {
        self.apps
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mine: Vec<&CellSource> = self.list.iter().filter(|s| s.app == i as u32).collect();
                super::CellSourceResult {
                    name: a.name.clone(),
                    src: host_name(a.src.host),
                    dst: host_name(a.dst.host),
                    sources: mine.len() as u64,
                    peak_bps: mine.iter().map(|s| s.pattern.peak_bps()).sum::<f64>().round() as u64,
                    mean_bps: mine.iter().map(|s| s.pattern.mean_bps()).sum(),
                    cells_sent: mine.iter().map(|s| s.stats.sent).sum(),
                    cells_received: a.received,
                    throughput_bps: a.received as f64 * 424.0 / dur,
                }
            })
            .collect()
    }

    /// The cells application `a` has received by `now`, for a probe: cells
    /// counted ahead of their arrival (an eager hop) are not received yet.
    pub(super) fn sample_app(&mut self, a: u32, now: SimTime) -> super::probes::Sample {
        let app = &mut self.apps[a as usize];
        let ahead = app.early.as_mut().map_or(0, |early| {
            while early.front().is_some_and(|&t| t <= now) {
                early.pop_front();
            }
            early.len() as u64
        });
        super::probes::Sample::Cells(app.received - ahead)
    }
}

impl Simulation {
    /// Group `g`'s first cell is due now: hand it to the adapter, and with
    /// it the group's next `batch - 1` cells at their own (later) times
    /// when the group owns its host's adapter (which then sees only these
    /// cells, in order, so taking them early changes nothing).
    pub(super) fn on_cell_source(&mut self, g: SourceGroupId) {
        let g = g.0;
        let batch = self.sources.groups[g as usize].batch;
        let mut sent = 0;
        while let Some((m, due)) = self.sources.groups[g as usize].earliest() {
            if sent == batch || (sent > 0 && due >= self.k.end) {
                self.k.queue.push(due, APP, Event::CellSource(SourceGroupId(g)));
                return;
            }
            sent += 1;
            let i = self.sources.groups[g as usize].members[m] as usize;
            let src = &mut self.sources.list[i];
            src.stats.sent += 1;
            let ends_frame = match src.frame_cells {
                Some(n) => {
                    src.frame_left -= 1;
                    let ends = src.frame_left == 0;
                    if ends {
                        src.frame_left = n;
                    }
                    ends
                }
                None => false,
            };
            let from = src.src;
            let port = self.hosts.adapter(from.host);
            let vc = self.hosts.vc(from);
            let pti = if ends_frame { Pti::DATA_EOF } else { Pti::DATA };
            let cell = Cell::new(vc.label, PduId::NONE, pti, false, vc.port_vc);
            self.k.counts.cells_created += 1;
            self.k.counts.raw_created += 1;
            self.offer_at(port, due, cell);
            self.sources.groups[g as usize].next[m] = self.sources.list[i].pattern.next_cell();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn onoff(peak_bps: u64, on: Duration, off: Duration) -> Pattern {
        let peak = BitRate::from_bps(peak_bps).unwrap();
        Pattern::OnOff(OnOff::new(peak, on, off, SimTime::ZERO))
    }

    fn cells(p: &mut Pattern, n: usize) -> Vec<u64> {
        let mut out = vec![p.first(SimTime::MAX).unwrap().as_ps()];
        for _ in 1..n {
            out.push(p.next_cell().unwrap().as_ps());
        }
        out
    }

    #[test]
    fn test_a_group_takes_the_earliest_cell_first_and_the_lowest_index_at_a_tie() {
        let ps = |t: u64| Some(SimTime::from_ps(t));
        let group =
            |next: Vec<Option<SimTime>>| SourceGroup { members: (0..next.len() as u32).collect(), next, batch: 4 };
        assert_eq!(group(vec![ps(7), None, ps(3), ps(5)]).earliest(), Some((2, SimTime::from_ps(3))));
        assert_eq!(group(vec![None, ps(4), ps(9), ps(4)]).earliest(), Some((1, SimTime::from_ps(4))));
        assert_eq!(group(vec![None, ps(u64::MAX), None]).earliest(), Some((1, SimTime::MAX)));
        assert_eq!(group(vec![None, None]).earliest(), None);
        assert_eq!(group(vec![]).earliest(), None);
    }

    #[test]
    fn test_cells_at_the_peak_rate_while_on_none_while_off() {
        // 1 Mbit/s: a cell every 424 us; ON 1 ms holds cells at 0, 424, 848 us.
        let mut s = onoff(1_000_000, Duration::from_ms(1), Duration::from_ms(1));
        let t = cells(&mut s, 5);
        assert_eq!(t, [0, 424_000_000, 848_000_000, 2_000_000_000, 2_424_000_000]);
    }

    #[test]
    fn test_never_faster_than_the_peak_when_periods_are_shorter_than_a_cell() {
        // ON 1 ps, OFF 0: a new period every picosecond, but one cell time
        // (424 ms at 1 kbit/s) between cells.
        let mut s = onoff(1_000, Duration::from_ps(1), Duration::ZERO);
        let t = cells(&mut s, 4);
        assert!(t.windows(2).all(|w| w[1] - w[0] >= 424_000_000_000), "{t:?}");
        // ON 1.5 cell times, no OFF: never two cells closer than a cell time.
        let cell = 424_000_000_000;
        let mut s = onoff(1_000, Duration::from_ps(cell * 3 / 2), Duration::ZERO);
        let t = cells(&mut s, 20);
        assert!(t.windows(2).all(|w| w[1] - w[0] >= cell), "{t:?}");
    }

    #[test]
    fn test_piecewise_cells_evenly_spaced_at_each_interval_rate() {
        // 10 ms at 424 kbit/s (a cell per ms), then 10 ms of nothing, then
        // 10 ms at 848 kbit/s (a cell per 0.5 ms).
        let ms = Duration::from_ms(1);
        let p = Piecewise::new(
            vec![424_000.0, 0.0, 848_000.0],
            false,
            Intervals::Constant(Duration::from_ms(10)),
            SimTime::ZERO,
            1e6,
        );
        let mut p = Pattern::Piecewise(p);
        let t = cells(&mut p, 30);
        let ms_ps = ms.as_ps();
        assert_eq!(&t[..10], &(0..10).map(|k| k * ms_ps).collect::<Vec<_>>()[..]);
        assert_eq!(t[10], 20 * ms_ps, "the silent interval is skipped");
        assert_eq!(t[11] - t[10], ms_ps / 2);
        assert_eq!(t[29], 20 * ms_ps + 19 * ms_ps / 2);
        assert_eq!(p.next_cell(), None, "no more rates");
    }

    #[test]
    fn test_piecewise_uniform_intervals_stay_in_bounds_and_cycle() {
        let rng = Box::new(atmlab_engine::RngStreams::new(1, 0).stream("t"));
        let (lo, hi) = (Duration::from_ms(20), Duration::from_ms(100));
        let intervals = Intervals::Uniform { min: lo, max: hi, rng };
        let mut p = Piecewise::new(vec![424_000.0], true, intervals, SimTime::ZERO, 424_000.0);
        // One cell per ms, continuously: the cycled single rate never stops
        // and interval boundaries restart the grid within [20, 100] ms.
        let mut pat = Pattern::Piecewise(p.clone());
        let t = cells(&mut pat, 500);
        assert!(t.windows(2).all(|w| w[1] - w[0] <= 1_000_000_000), "no gap longer than a cell time");
        for _ in 0..100 {
            let d = p.intervals.draw();
            assert!(lo <= d && d <= hi);
        }
    }

    #[test]
    fn test_a_silent_cycle_ends_at_the_runs_end() {
        // Every rate 0, cycled: no interval holds a cell. The search stops at
        // the end of the run (10 s: 1000 intervals of 10 ms), not at the end
        // of time (2^64 ps, 1.8e9 intervals: a fuzz case spent 27 s there),
        // and later cells stop there too.
        let ten_ms = Intervals::Constant(Duration::from_ms(10));
        let mut silent = Pattern::Piecewise(Piecewise::new(vec![0.0, 0.0], true, ten_ms.clone(), SimTime::ZERO, 0.0));
        assert_eq!(silent.first(SimTime::ZERO + Duration::from_secs(10)), None);
        let Pattern::Piecewise(p) = &silent else { unreachable!() };
        assert_eq!(p.interval_end, SimTime::ZERO + Duration::from_secs(10));
        // One cell in the first interval, then silence: no next cell.
        let mut once = Pattern::Piecewise(Piecewise::new(vec![424_000.0, 0.0], true, ten_ms, SimTime::ZERO, 424_000.0));
        let end = SimTime::ZERO + Duration::from_ms(15);
        assert_eq!(once.first(end), Some(SimTime::ZERO));
        let sent: Vec<SimTime> = std::iter::from_fn(|| once.next_cell()).take(20).collect();
        assert_eq!(sent.len(), 9, "cells at 1..9 ms, then the search stops at 15 ms: {sent:?}");
    }
}
