//! The Generic Cell Rate Algorithm, traffic contracts, policing and shaping
//! (ITU-T I.371, ATM Forum TM 4.0; docs/models/atm.md, "Traffic contracts, policing and shaping").
//!
//! GCRA(I, L) decides whether a cell arriving at `ta` conforms to an
//! increment `I` (one cell time at the contract rate) with a limit `L`. It
//! comes in two equivalent forms, both here: the virtual scheduling
//! algorithm ([`Gcra`]) and the continuous-state leaky bucket
//! ([`LeakyBucket`]); a property test checks that they agree cell by cell.
//!
//! **Exact arithmetic.** A rate of `R` bit/s gives `I = 424e12 / R` ps, which
//! is rarely a whole number of picoseconds; rounding it would make a cell
//! stream sent at exactly the contract rate (cell `k` at `ceil(k I)`, as the
//! slot clocks send it) fail a zero-tolerance test every other cell. So the
//! state is kept in *rate-scaled* time, `t x R` (ps x bit/s), where the
//! increment is the integer `424e12` and every comparison is exact.

use atmlab_engine::{BitRate, CELL_BITS, Duration, PS_PER_S, SimTime};
use serde::Serialize;

/// `t x R` for a time in ps and a rate in bit/s.
#[inline]
fn scale(ps: u64, rate: u64) -> u128 {
    u128::from(ps) * u128::from(rate)
}

/// The increment of a cell in rate-scaled time: 424 bits x 1e12 ps/s.
const INC: u128 = CELL_BITS as u128 * PS_PER_S as u128;

/// GCRA(I, L), virtual scheduling form: a theoretical arrival time `TAT`;
/// a cell conforms unless it arrives before `TAT - L`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gcra {
    rate: u64,
    limit: u128,
    tat: Option<u128>,
}

impl Gcra {
    /// GCRA(424 bits / `rate`, `limit`).
    pub fn new(rate: BitRate, limit: Duration) -> Gcra {
        Gcra { rate: rate.bps(), limit: scale(limit.as_ps(), rate.bps()), tat: None }
    }

    /// Whether a cell arriving at `ta` conforms (the state is not changed).
    /// A cell exactly at `TAT - L` conforms.
    #[inline]
    pub fn conforms(&self, ta: SimTime) -> bool {
        self.tat.is_none_or(|tat| scale(ta.as_ps(), self.rate) + self.limit >= tat)
    }

    /// Accounts for a conforming cell at `ta`: `TAT = max(ta, TAT) + I`.
    #[inline]
    pub fn update(&mut self, ta: SimTime) {
        let t = scale(ta.as_ps(), self.rate);
        self.tat = Some(self.tat.map_or(t, |tat| tat.max(t)) + INC);
    }

    /// Tests a cell at `ta` and, if it conforms, accounts for it.
    pub fn test(&mut self, ta: SimTime) -> bool {
        let ok = self.conforms(ta);
        if ok {
            self.update(ta);
        }
        ok
    }

    /// The earliest time at or after `ready` at which a cell would conform.
    pub fn earliest(&self, ready: SimTime) -> SimTime {
        match self.tat {
            Some(tat) if tat > self.limit => {
                let at = (tat - self.limit).div_ceil(u128::from(self.rate));
                ready.max(SimTime::from_ps(u64::try_from(at).expect("simulated time fits in u64 ps")))
            }
            _ => ready,
        }
    }

    /// The theoretical arrival time in ps (rounded down), for tests and
    /// probes.
    pub fn tat_ps(&self) -> Option<u64> {
        self.tat.map(|t| u64::try_from(t / u128::from(self.rate)).expect("fits"))
    }
}

/// GCRA(I, L), continuous-state leaky bucket form: a bucket content `X`
/// that drains at one unit per unit of time and fills by `I` per conforming
/// cell; a cell conforms unless the drained content exceeds `L`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeakyBucket {
    rate: u64,
    limit: u128,
    x: u128,
    lct: Option<u128>,
}

impl LeakyBucket {
    /// GCRA(424 bits / `rate`, `limit`).
    pub fn new(rate: BitRate, limit: Duration) -> LeakyBucket {
        LeakyBucket { rate: rate.bps(), limit: scale(limit.as_ps(), rate.bps()), x: 0, lct: None }
    }

    /// Tests a cell at `ta` and, if it conforms, accounts for it.
    pub fn test(&mut self, ta: SimTime) -> bool {
        let t = scale(ta.as_ps(), self.rate);
        let drained = match self.lct {
            None => 0,
            Some(lct) => self.x.saturating_sub(t.saturating_sub(lct)),
        };
        if drained > self.limit {
            return false;
        }
        self.x = drained + INC;
        self.lct = Some(t);
        true
    }

    /// The bucket content after the last conforming cell, in ps (rounded
    /// down).
    pub fn content_ps(&self) -> u64 {
        u64::try_from(self.x / u128::from(self.rate)).expect("fits")
    }
}

/// The conformance definitions of TM 4.0 s4.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conformance {
    /// CBR.1 (and UBR.1): one GCRA(1/PCR, CDVT) on all cells.
    Cbr1,
    /// VBR.1: PCR and SCR tests on all cells (CLP = 0 + 1).
    Vbr1,
    /// VBR.2: PCR on all cells, SCR on CLP = 0 cells only; a CLP = 0 cell
    /// failing SCR is non-conforming.
    Vbr2,
    /// VBR.3: as VBR.2, but a CLP = 0 cell that fails only the SCR test is
    /// tagged (CLP := 1) and carried.
    Vbr3,
}

impl Conformance {
    /// The name used in scenarios (`cbr.1`, `vbr.1`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Conformance::Cbr1 => "cbr.1",
            Conformance::Vbr1 => "vbr.1",
            Conformance::Vbr2 => "vbr.2",
            Conformance::Vbr3 => "vbr.3",
        }
    }
}

/// A traffic contract: PCR with its cell delay variation tolerance and, for
/// VBR, SCR with its burst tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contract {
    /// Which cells are tested against what.
    pub conformance: Conformance,
    /// Peak cell rate, as bit/s of cells (424 bits each).
    pub pcr: BitRate,
    /// Cell delay variation tolerance of the PCR test (and added to BT for
    /// the SCR test).
    pub cdvt: Duration,
    /// Sustainable cell rate and burst tolerance (VBR).
    pub scr: Option<(BitRate, Duration)>,
}

impl Contract {
    /// The burst tolerance of a maximum burst size:
    /// `BT = (MBS - 1) (1/SCR - 1/PCR)`, rounded up to a whole ps (a
    /// source shaped to it stays conforming).
    pub fn burst_tolerance(pcr: BitRate, scr: BitRate, mbs: u32) -> Duration {
        let (p, s) = (u128::from(pcr.bps()), u128::from(scr.bps()));
        // (MBS - 1) x 424e12 x (p - s) / (p s), in ps, rounded up.
        let num = u128::from(mbs.saturating_sub(1)) * INC * p.saturating_sub(s);
        Duration::from_ps(u64::try_from(num.div_ceil(p * s)).expect("a burst tolerance fits in u64 ps"))
    }

    /// The largest burst at the PCR that conforms to the SCR test:
    /// `MBS = 1 + floor(BT / (1/SCR - 1/PCR))`.
    pub fn max_burst_size(&self) -> Option<u64> {
        let (scr, bt) = self.scr?;
        let (p, s) = (u128::from(self.pcr.bps()), u128::from(scr.bps()));
        if p <= s {
            return None;
        }
        Some(1 + u64::try_from(u128::from(bt.as_ps()) * p * s / (INC * (p - s))).unwrap_or(u64::MAX))
    }
}

/// What usage parameter control does with a non-conforming cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpcAction {
    /// Discard it (the default).
    #[default]
    Discard,
    /// Tag a CLP = 0 cell (CLP := 1) and carry it; discard a CLP = 1 one.
    Tag,
}

/// The policer's verdict on one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policed {
    /// Conforming: carried as it is.
    Pass,
    /// Carried with CLP = 1.
    Tag,
    /// Discarded.
    Discard,
}

/// Counters of a policer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PolicerStats {
    /// Cells tested.
    pub cells: u64,
    /// Cells tagged.
    pub tagged: u64,
    /// Cells discarded.
    pub discarded: u64,
}

/// The smallest tolerance a policer applies: the resolution of simulated
/// time.
pub const MIN_TOLERANCE: Duration = Duration::from_ps(1);

/// Usage parameter control for one VC: the contract's GCRAs.
///
/// A cell conforms only if it passes every test that applies to it, and no
/// GCRA is updated for a cell that does not conform (TM 4.0's dual GCRA).
/// A VBR.3 cell tagged for failing only the SCR test updates the PCR state,
/// not the SCR state.
#[derive(Clone, Debug, PartialEq)]
pub struct Policer {
    contract: Contract,
    action: UpcAction,
    pcr: Gcra,
    scr: Option<Gcra>,
    /// Counters.
    pub stats: PolicerStats,
}

impl Policer {
    /// A policer of `contract` that treats non-conforming cells by `action`.
    ///
    /// Each tolerance is at least `MIN_TOLERANCE` (1 ps): slot clocks
    /// place cell `k` at `ceil(k I)`, up to 1 ps late, and a GCRA restarted
    /// by a late cell would otherwise find the next, on-time one early.
    pub fn new(contract: Contract, action: UpcAction) -> Policer {
        Policer {
            contract,
            action,
            pcr: Gcra::new(contract.pcr, contract.cdvt.max(MIN_TOLERANCE)),
            scr: contract.scr.map(|(scr, bt)| Gcra::new(scr, (bt + contract.cdvt).max(MIN_TOLERANCE))),
            stats: PolicerStats::default(),
        }
    }

    /// The contract.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// Tests a cell with CLP bit `clp` arriving at `ta`.
    pub fn police(&mut self, ta: SimTime, clp: bool) -> Policed {
        self.stats.cells += 1;
        let c = self.contract.conformance;
        let pcr_ok = self.pcr.conforms(ta);
        let scr_applies = self.scr.is_some() && (c == Conformance::Vbr1 || !clp);
        let scr_ok = !scr_applies || self.scr.as_ref().is_some_and(|g| g.conforms(ta));
        let verdict = if pcr_ok && scr_ok {
            self.pcr.update(ta);
            if scr_applies && let Some(g) = &mut self.scr {
                g.update(ta);
            }
            Policed::Pass
        } else if pcr_ok && c == Conformance::Vbr3 {
            self.pcr.update(ta);
            Policed::Tag
        } else if self.action == UpcAction::Tag && !clp {
            Policed::Tag
        } else {
            Policed::Discard
        };
        match verdict {
            Policed::Tag => self.stats.tagged += 1,
            Policed::Discard => self.stats.discarded += 1,
            Policed::Pass => {}
        }
        verdict
    }
}

/// A shaper: holds each cell until every GCRA of a contract accepts it
/// (docs/models/atm.md, "Shaping"), with the PCR test at zero tolerance and the SCR
/// test at `BT`, so its output conforms to the contract at any CDVT.
#[derive(Clone, Debug, PartialEq)]
pub struct Shaper {
    pcr: Gcra,
    scr: Option<Gcra>,
}

impl Shaper {
    /// A shaper to `contract` (its CDVT is not used: the shaper sends no
    /// cell early).
    pub fn new(contract: &Contract) -> Shaper {
        Shaper { pcr: Gcra::new(contract.pcr, Duration::ZERO), scr: contract.scr.map(|(scr, bt)| Gcra::new(scr, bt)) }
    }

    /// The earliest time at or after `ready` at which the next cell may go.
    pub fn earliest(&self, ready: SimTime) -> SimTime {
        let t = self.pcr.earliest(ready);
        self.scr.as_ref().map_or(t, |g| g.earliest(t))
    }

    /// A cell goes at `t` (at or after [`earliest`](Self::earliest)).
    pub fn send(&mut self, t: SimTime) {
        debug_assert!(t >= self.earliest(t) && self.pcr.conforms(t), "a shaped cell conforms");
        self.pcr.update(t);
        if let Some(g) = &mut self.scr {
            g.update(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A rate whose cell time is `i` ps: the abstract units of the test
    /// vectors become picoseconds.
    fn rate_for(i: u64) -> BitRate {
        BitRate::from_bps(u64::try_from(INC).unwrap() / i).unwrap()
    }

    fn at(t: u64) -> SimTime {
        SimTime::from_ps(t)
    }

    #[test]
    fn test_gcra_vector_both_forms() {
        // docs/models/atm.md, worked by hand: GCRA(I=10, L=5).
        let arrivals = [0, 5, 12, 18, 20, 35, 38, 44, 45, 70];
        let conform = [true, true, false, true, false, true, false, true, false, true];
        let tats = [10, 20, 20, 30, 30, 45, 45, 55, 55, 80];
        let xs = [10, 15, 15, 12, 12, 10, 10, 11, 11, 10];
        let mut vsa = Gcra::new(rate_for(10), Duration::from_ps(5));
        let mut lb = LeakyBucket::new(rate_for(10), Duration::from_ps(5));
        for (k, &t) in arrivals.iter().enumerate() {
            assert_eq!(vsa.test(at(t)), conform[k], "VSA cell {k}");
            assert_eq!(lb.test(at(t)), conform[k], "LB cell {k}");
            assert_eq!(vsa.tat_ps(), Some(tats[k]), "TAT after cell {k}");
            assert_eq!(lb.content_ps(), xs[k], "X after cell {k}");
        }
    }

    fn vbr1() -> Contract {
        // T_PCR = 2, T_SCR = 10, MBS = 5 -> BT = 4 x 8 = 32.
        let (pcr, scr) = (rate_for(2), rate_for(10));
        let bt = Contract::burst_tolerance(pcr, scr, 5);
        Contract { conformance: Conformance::Vbr1, pcr, cdvt: Duration::ZERO, scr: Some((scr, bt)) }
    }

    #[test]
    fn test_dual_gcra_vector() {
        let c = vbr1();
        assert_eq!(c.scr.unwrap().1, Duration::from_ps(32));
        assert_eq!(c.max_burst_size(), Some(5));
        let mut p = Policer::new(c, UpcAction::Discard);
        let got: Vec<_> = (0..10).map(|k| p.police(at(2 * k), false)).collect();
        use Policed::{Discard as D, Pass as P};
        assert_eq!(got, [P, P, P, P, P, D, D, D, D, P], "0..8 conform (MBS), 10..16 fail SCR, 18 conforms");
        assert_eq!(p.stats, PolicerStats { cells: 10, tagged: 0, discarded: 4 });
    }

    #[test]
    fn test_shaper_vector() {
        // 10 cells ready at t = 0 -> 0, 2, 4, 6, 8, 18, 28, 38, 48, 58.
        let mut s = Shaper::new(&vbr1());
        let mut out = Vec::new();
        for _ in 0..10 {
            let t = s.earliest(at(0));
            s.send(t);
            out.push(t.as_ps());
        }
        assert_eq!(out, [0, 2, 4, 6, 8, 18, 28, 38, 48, 58]);
    }

    #[test]
    fn test_vbr2_and_vbr3_treat_clp1_and_scr_failures_differently() {
        let mut c = vbr1();
        // VBR.2: CLP = 1 cells are tested against the PCR only.
        c.conformance = Conformance::Vbr2;
        let mut p = Policer::new(c, UpcAction::Discard);
        let v: Vec<_> = (0..10).map(|k| p.police(at(2 * k), true)).collect();
        assert!(v.iter().all(|&x| x == Policed::Pass), "CLP=1 at the PCR always conforms: {v:?}");
        // VBR.3: the CLP = 0 cells that fail only the SCR test are tagged.
        c.conformance = Conformance::Vbr3;
        let mut p = Policer::new(c, UpcAction::Discard);
        let v: Vec<_> = (0..10).map(|k| p.police(at(2 * k), false)).collect();
        use Policed::{Pass as P, Tag as T};
        // Tagged cells do not advance the SCR state, so 18 conforms again.
        assert_eq!(v, [P, P, P, P, P, T, T, T, T, P]);
        // A cell that fails the PCR test is discarded even under VBR.3.
        assert_eq!(p.police(at(18), false), Policed::Discard);
    }

    #[test]
    fn test_tag_action_tags_clp0_and_discards_clp1() {
        let c = Contract { conformance: Conformance::Cbr1, pcr: rate_for(10), cdvt: Duration::ZERO, scr: None };
        let mut p = Policer::new(c, UpcAction::Tag);
        assert_eq!(p.police(at(0), false), Policed::Pass);
        assert_eq!(p.police(at(5), false), Policed::Tag);
        assert_eq!(p.police(at(6), true), Policed::Discard);
        assert_eq!(p.police(at(10), false), Policed::Pass, "a tagged cell did not advance the TAT");
    }

    #[test]
    fn test_a_stream_at_exactly_the_contract_rate_conforms_at_zero_tolerance() {
        // 155.52 Mbit/s: I = 2726337.448... ps, never a whole number; the slot
        // clock sends cell k at ceil(k I).
        // A bare GCRA at L = 0 fails such a stream (the 1 ps rounding); the
        // policer's 1 ps floor on the tolerance passes it, cell for cell.
        let rate = BitRate::from_bps(155_520_000).unwrap();
        let mut bare = Gcra::new(rate, Duration::ZERO);
        let c = Contract { conformance: Conformance::Cbr1, pcr: rate, cdvt: Duration::ZERO, scr: None };
        let mut p = Policer::new(c, UpcAction::Discard);
        let mut clock = atmlab_engine::SlotClock::new(rate, CELL_BITS);
        let mut bare_failures = 0;
        for _ in 0..100_000 {
            bare_failures += u32::from(!bare.test(clock.boundary()));
            assert_eq!(p.police(clock.boundary(), false), Policed::Pass);
            clock.advance();
        }
        assert!(bare_failures > 0);
        // One cell 2 ps early is still caught.
        let early = SimTime::from_ps(clock.boundary().as_ps() - 2726337 - 2);
        let mut q = p.clone();
        q.police(early, false);
        assert_eq!(q.stats.discarded, 1);
    }

    #[test]
    fn test_burst_tolerance_of_a_real_contract() {
        // PCR 6 Mbit/s, SCR 2 Mbit/s, MBS 32: BT = 31 x (212 us - 70.67 us).
        let (pcr, scr) = (BitRate::from_bps(6_000_000).unwrap(), BitRate::from_bps(2_000_000).unwrap());
        let bt = Contract::burst_tolerance(pcr, scr, 32);
        let exact = 31.0 * (424.0 / 2e6 - 424.0 / 6e6);
        assert!((bt.as_secs_f64() - exact).abs() < 1e-12, "{bt}");
        let c = Contract { conformance: Conformance::Vbr1, pcr, cdvt: Duration::ZERO, scr: Some((scr, bt)) };
        assert_eq!(c.max_burst_size(), Some(32));
    }

    proptest! {
        #[test]
        fn prop_vsa_and_leaky_bucket_agree(
            i in 1u64..1000,
            l in 0u64..3000,
            gaps in proptest::collection::vec(0u64..2000, 1..300),
        ) {
            let rate = rate_for(i);
            let mut vsa = Gcra::new(rate, Duration::from_ps(l));
            let mut lb = LeakyBucket::new(rate, Duration::from_ps(l));
            let mut t = 0;
            for g in gaps {
                t += g;
                prop_assert_eq!(vsa.test(at(t)), lb.test(at(t)));
            }
        }

        #[test]
        fn prop_conforming_cells_in_any_window_are_bounded(
            i in 1u64..500,
            l in 0u64..2000,
            gaps in proptest::collection::vec(0u64..600, 1..300),
        ) {
            // Over any window of length w: conforming cells <= 1 + floor((w + L) / I).
            let mut g = Gcra::new(rate_for(i), Duration::from_ps(l));
            let exact_i = INC as f64 / rate_for(i).bps() as f64;
            let mut t = 0;
            let mut ok = Vec::new();
            for gap in gaps {
                t += gap;
                if g.test(at(t)) {
                    ok.push(t);
                }
            }
            for a in 0..ok.len() {
                for b in a..ok.len() {
                    let w = (ok[b] - ok[a]) as f64;
                    prop_assert!((b - a + 1) as f64 <= 1.0 + ((w + l as f64) / exact_i).floor() + 1e-9);
                }
            }
        }

        #[test]
        fn prop_shaped_output_conforms_to_the_policer(
            pcr_i in 1u64..50,
            scr_mult in 2u64..20,
            mbs in 1u32..40,
            cdvt in 0u64..100,
            ready in proptest::collection::vec(0u64..500, 1..200),
        ) {
            let (pcr, scr) = (rate_for(pcr_i), rate_for(pcr_i * scr_mult));
            let bt = Contract::burst_tolerance(pcr, scr, mbs);
            let c = Contract { conformance: Conformance::Vbr1, pcr, cdvt: Duration::from_ps(cdvt), scr: Some((scr, bt)) };
            let mut shaper = Shaper::new(&c);
            let mut policer = Policer::new(c, UpcAction::Discard);
            let mut t_ready = 0;
            let mut last = 0;
            for r in ready {
                t_ready += r;
                let t = shaper.earliest(at(t_ready.max(last)));
                shaper.send(t);
                last = t.as_ps();
                prop_assert_eq!(policer.police(t, false), Policed::Pass);
            }
        }
    }
}
