//! ERICA and ERICA+: the explicit-rate switch algorithms of one output port
//! (docs/models/abr.md, "ERICA and ERICA+").
//!
//! [`Erica`] is a sans-I/O state machine for one output port and one
//! direction. The simulation tells it what passes the port and acts on what
//! it returns:
//!
//! * every ABR cell offered to the port ([`Erica::on_abr_cell`]; the FRM's
//!   CCR with it), and every higher-priority CBR/VBR cell
//!   ([`Erica::on_high_priority_cell`]);
//! * the end of each averaging interval ([`Erica::end_interval`], with the
//!   port's ABR queue), which comes at whichever bound is hit first: the
//!   cell count (reported by `on_abr_cell` returning `true`) or the time
//!   ([`Erica::interval_deadline`], for which the caller schedules an event);
//! * every backward RM cell of one of the port's VCs that passes the switch
//!   in the other direction ([`Erica::on_backward_rm`]), whose ER field it
//!   lowers to the rate it computes.
//!
//! Nothing is allocated per cell (the per-VC state is sized once, by the
//! VC's slot at the port), nothing reads a clock, nothing is random.
//!
//! Sources (full citations in docs/references.md): "the dissertation" is
//! S. Kalyanaraman, *Traffic Management for the Available Bit Rate (ABR)
//! Service in ATM Networks*, OSU 1997, whose Appendix C (pp. 396-404) gives
//! the pseudo-code followed here and s6.14-6.19 ERICA+; "the study" is ATM
//! Forum 97-0177R2, whose s6 gives ERICA+'s parameters. What rests on
//! atmlab's own reasoning is listed in docs/models/abr.md, "What rests on
//! atmlab's own reasoning"; the choices where the study is silent in "Where
//! 97-0177R2 is silent, and what was chosen".
//!
//! # The algorithm (the dissertation's Appendix C, with its options)
//!
//! At the end of an interval of length `dt`, with `abrCells` ABR and
//! `hpCells` higher-priority cells counted in it:
//!
//! ```text
//! hpRate    = hpCells / dt;   inputRate = abrCells / dt
//! ERICA:    abrCap = max(U * LinkRate - hpRate, 0)                  p. 400
//! ERICA+:   raw = max(LinkRate - hpRate, 0); Tq = queue / raw;      s6.19; Tq: atmlab's
//!           abrCap = f(Tq) * raw     ("target ABR capacity")
//! z         = abrCap > 0 ? inputRate / abrCap : infinity            p. 402
//! nActive   = max(active VCs of the interval, 1)                    p. 400
//! fairShare = abrCap / nActive
//! MaxAllocPrevious = MaxAllocCurrent; MaxAllocCurrent = fairShare   p. 402
//! ```
//!
//! and on a backward RM cell of VC `i` (once per VC and interval, p. 404):
//!
//! ```text
//! VCShare = CCR[i] / z
//! ER = max(fairShare, VCShare)                   if z > 1 + delta (overload)
//! ER = max(fairShare, VCShare, MaxAllocPrevious) otherwise  (max-min fix, p. 404)
//! MaxAllocCurrent = max(MaxAllocCurrent, ER)     (before the limiter: atmlab's)
//! if ER > fairShare and CCR[i] < fairShare: ER = fairShare   (limiter: atmlab's reading)
//! ER = min(ER, abrCap);   ER field = min(ER field, ER)       (OSU 98-0408 eq. 19)
//! ```
//!
//! ERICA+'s queue control (the dissertation's s6.19, p. 180) is two
//! rectangular hyperbolas equal to 1 at the target queueing delay `T0`:
//!
//! ```text
//! f(Tq) = b T0 / ((b - 1) Tq + T0)              for 0 <= Tq <= T0  (1 <= f <= b)
//! f(Tq) = max(QDLF, a T0 / ((a - 1) Tq + T0))   for Tq > T0        (QDLF <= f <= 1)
//! ```
//!
//! **DISAGREEMENT (naming).** Kalyanaraman's dissertation calls the
//! constant of the under-load branch (`Tq <= T0`) **b** and that of the
//! over-load branch **a**; later OSU papers (arXiv cs/9809041) call the
//! under-load curve the "a-curve". The code names the constants by role:
//! [`QueueControl::underload_gain`] (the dissertation's b, 1.05 in the study)
//! and [`QueueControl::overload_gain`] (its a, 1.15 in the study).
//!
//! # Defaults ([`EricaParams::erica_plus_97_0177r2`])
//!
//! | parameter | value | source |
//! |---|---|---|
//! | variant | ERICA+ | the study |
//! | averaging interval | 500 ABR cells or 5 ms, whichever ends first | the study, s6 |
//! | `T0` | 500 us | the study, s6 |
//! | over-load gain (a) / under-load gain (b) | 1.15 / 1.05 | the study, s6; the branches: the dissertation p. 180 |
//! | QDLF | 0.5 | the study, s6; "typically 0.5" (OSU 98-0408 node4) |
//! | delta | 0.1 | the symbol is the dissertation's (p. 404); the value is atmlab's choice, unverified |
//! | counting | simple, bidirectional | the dissertation's options (pp. 400, 403-404); atmlab's choice |
//! | immediate fair-share update | off | the dissertation's option (p. 404); atmlab's choice |
//! | sudden-increase limiter | on | named in OSU 98-0408; its form is atmlab's reading |
//! | one ER per VC per interval | on | the dissertation, p. 404 |
//! | exponential averaging of load | off | the dissertation's option (p. 402); atmlab's choice |
//! | max-min fix | on | the dissertation, p. 404 |
//! | ER at most the ABR capacity | on | OSU 98-0408 node5 eq. 19 |
//! | where ER is computed | on the BRM | the dissertation's canonical form |
//!
//! Where the study is silent the choice is atmlab's, and each is a
//! parameter (docs/models/abr.md, "Where 97-0177R2 is silent"): Tq is the
//! port's ABR queue divided by the raw ABR capacity (link rate minus the
//! measured higher-priority rate of the interval), taken at the end of the
//! interval; "ABR input cells" are all ABR cells offered to the port (data,
//! FRMs, and the BRMs of the opposite-direction loop), which is the
//! caller's choice of what to feed to [`Erica::on_abr_cell`].
//!
//! # What was checked against which source
//!
//! Checked (November 2026) against public text (docs/models/abr.md,
//! "Sources and what each confirmed"):
//!
//! * Kalyanaraman, *Traffic Management for the ABR Service in ATM Networks*,
//!   OSU dissertation 1997, Appendix C, pp. 399-404 (the scanned text on
//!   yumpu.com, document 4295021, pages 427-431): the forward-cell handler
//!   (ABR cell count, activity marking with the immediate fair-share
//!   update), the end of the interval (`nActive = max(sum seen, 1)` and
//!   `seenLast = seenThis` for simple counting; contributions times the
//!   decay factor for averaged counting; `ABR capacity in cells = max(U *
//!   link * interval - VBR/CBR cells, 0)`; `z = infinity` when the capacity
//!   is not positive; exponential averaging method 1 restarting from the
//!   measured ratio when `z` was infinite; `FairShare = capacity / nActive`;
//!   `MaxAllocPrevious = MaxAllocCurrent; MaxAllocCurrent = FairShare`), the
//!   FRM handler (`CCR[VC] = CCR in FRM`) and the start of the BRM handler
//!   (bidirectional activity marking, the immediate fair-share update of
//!   both counting methods, `Last Allocated ER` reused when a BRM of the VC
//!   was already seen in the interval, `VCShare = CCR / z`, the max-min
//!   branch on `z > 1 + delta`).
//! * The same dissertation, s6.19 p. 180 (yumpu page 207): the two
//!   hyperbolas of f(Tq), b for `0 <= Tq <= T0`, a above, the QDLF floor.
//! * OSU ATM Forum 98-0408 / arXiv cs/9809040, node 4: ER computed on the
//!   BRM from measurements of the forward direction; overload gives
//!   `max(FairShare, VCShare)`, under-load adds `MaxAllocPrevious`; "QDLF =
//!   0.5 is typically used"; the existence of an equation that "avoids
//!   sudden increase in the feedback rate".
//! * The YATS ABR multiplexer (`hleuwer/luayats`, `src/abr/abrmux.{c,h}`):
//!   **DISAGREEMENT (variant)**: YATS computes basic ERICA (`max(FairShare,
//!   CCR/z)`, no max-min fix, no delta, no cap at the ABR capacity) both
//!   when an FRM leaves the multiplexer (writing the FRM's ER) and when a
//!   BRM passes it (writing the BRM's ER), not only on the BRM as the
//!   dissertation's canonical form does; when the ABR input rate is zero it
//!   gives the fair share (not `CCR/0 = infinity` clamped to the capacity,
//!   as here); when nothing is left for ABR it uses `z = ZOL` (default
//!   1000); it clamps `ER >= MCR`; it measures the non-ABR rate over its own
//!   interval (CBRI); with `DYNFAIRSHARE` and no active VC the fair share is
//!   the whole capacity.
//!
//! Unverified (page 405 of the dissertation, with the end of the BRM
//! handler, could not be read): the exact form of the sudden-increase rule
//! ("if ER > FairShare and CCR < FairShare then ER = FairShare" is atmlab's
//! reading of OSU 98-0408's description), whether `MaxAllocCurrent` is
//! updated before or after it (before, here), and the final
//! `min(ER, ABR capacity)` (OSU 98-0408 node5 eq. 19, as first read; not
//! re-read here). Also unverified: delta = 0.1 and the decay factor 0.9,
//! and how method 2 of exponential averaging feeds the fair share (see
//! [`LoadAveraging::Separate`]).
//!
//! # Known behaviour (docs/models/abr.md, "Known behaviour")
//!
//! With the max-min fix the system can rest anywhere with `z` in the band
//! `(., 1 + delta]`: on a two-link configuration worked by hand (links of
//! target 90 and 45; S1 on the first, S2 on both, S3 on the second),
//! started from rates (80, 10, 35), ERICA with delta = 0.1 freezes at
//! (70.24, 24.71, 24.71) instead of the max-min rates (67.5, 22.5, 22.5).
//! This is the algorithm, not a bug of this code; the tests document it.

use atmlab_engine::{Duration, PS_PER_S, SimTime};

use super::{ControlError, Reading, ReadingInfo, SwitchControl, bps, finite, reading};
use crate::abr::rm::RmCell;

// ---------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------

/// The averaging interval of 97-0177R2 in time: 5 ms (the study, s6).
pub const STUDY_INTERVAL_TIME: Duration = Duration::from_ms(5);
/// The averaging interval of 97-0177R2 in ABR input cells: 500 (the study,
/// s6).
pub const STUDY_INTERVAL_CELLS: u32 = 500;
/// ERICA+'s target queueing delay T0 in 97-0177R2: 500 us (the study, s6).
pub const STUDY_T0: Duration = Duration::from_us(500);
/// ERICA+'s over-load curve constant (the dissertation's **a**) in
/// 97-0177R2: 1.15 (the study, s6).
pub const STUDY_OVERLOAD_GAIN: f64 = 1.15;
/// ERICA+'s under-load curve constant (the dissertation's **b**) in
/// 97-0177R2: 1.05 (the study, s6).
pub const STUDY_UNDERLOAD_GAIN: f64 = 1.05;
/// ERICA+'s queue-drain limit factor in 97-0177R2: 0.5 (the study, s6; "typically
/// a value QDLF = 0.5 is used", OSU 98-0408 node4).
pub const STUDY_QDLF: f64 = 0.5;
/// The max-min band delta: 0.1 (the symbol is the dissertation's, p. 404;
/// the value is atmlab's choice, unverified: docs/models/abr.md, "What
/// rests on atmlab's own reasoning").
pub const DEFAULT_DELTA: f64 = 0.1;
/// The decay factor of averaged source counting: 0.9 (the dissertation's
/// "Decay Factor", pp. 400, 403; the value recalled, unverified).
pub const DEFAULT_DECAY: f64 = 0.9;

/// ERICA+'s queue-control function f(Tq) (the dissertation, s6.19 p. 180),
/// named by role (see the
/// module's note on the naming DISAGREEMENT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueControl {
    /// The target queueing delay T0: f(T0) = 1.
    pub t0: Duration,
    /// The constant of the under-load branch, `0 <= Tq <= T0` (the
    /// dissertation's **b**, p. 180): f(0) = `underload_gain`, so the sources
    /// are offered up to this multiple of the capacity while the queue is
    /// short. At least 1.
    pub underload_gain: f64,
    /// The constant of the over-load branch, `Tq > T0` (the dissertation's
    /// **a**, p. 180): f falls from 1 towards 0 as `Tq` grows, the faster the
    /// larger `overload_gain` is. At least 1.
    pub overload_gain: f64,
    /// The queue-drain limit factor: f never falls below it, so at least
    /// this share of the capacity is offered to the sources (p. 180).
    /// In [0, 1].
    pub qdlf: f64,
}

impl QueueControl {
    /// The values of 97-0177R2 (the study, s6): T0 = 500 us, under-load gain 1.05,
    /// over-load gain 1.15, QDLF 0.5.
    pub const fn study() -> QueueControl {
        QueueControl {
            t0: STUDY_T0,
            underload_gain: STUDY_UNDERLOAD_GAIN,
            overload_gain: STUDY_OVERLOAD_GAIN,
            qdlf: STUDY_QDLF,
        }
    }

    /// f(Tq) for a queueing delay of `tq_secs` seconds (p. 180): continuous,
    /// 1 at T0, non-increasing. An infinite delay (a queue that nothing
    /// drains) gives the floor; zero, negative or NaN delays count as an
    /// empty queue.
    pub fn fraction(&self, tq_secs: f64) -> f64 {
        let t0 = self.t0.as_secs_f64();
        let b = self.underload_gain;
        let a = self.overload_gain;
        if tq_secs.is_nan() || tq_secs <= 0.0 {
            return b;
        }
        if tq_secs <= t0 {
            return b * t0 / ((b - 1.0) * tq_secs + t0);
        }
        if tq_secs.is_infinite() {
            // The limit of the over-load hyperbola: 0 when a > 1, 1 when
            // a = 1 (where (a - 1) * inf would be NaN).
            let limit: f64 = if a > 1.0 { 0.0 } else { 1.0 };
            return limit.max(self.qdlf);
        }
        (a * t0 / ((a - 1.0) * tq_secs + t0)).max(self.qdlf)
    }
}

/// Which of the two algorithms, with its capacity rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    /// ERICA: the ABR capacity is `U * LinkRate - hpRate` (the dissertation,
    /// p. 400).
    Erica {
        /// The target utilisation U, in (0, 1] (typically 0.9, p. 400).
        target_utilization: f64,
    },
    /// ERICA+: the target ABR capacity is `f(Tq) * (LinkRate - hpRate)`
    /// (the dissertation, s6.14-6.19).
    EricaPlus(QueueControl),
}

/// The averaging interval (the study, s6: "500 ABR input cells or 5 ms"):
/// it ends at whichever bound is hit first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AveragingInterval {
    /// The time bound T (at least one cell time of the link).
    pub time: Duration,
    /// The cell bound N: the interval ends with its N-th ABR input cell
    /// (but never before one cell time has passed: atmlab's guard). `None`: time
    /// only.
    pub cells: Option<u32>,
}

/// How the active VCs are counted (the dissertation, pp. 400, 403-404).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Counting {
    /// A VC is active in an interval if one of its cells (with
    /// bidirectional counting also a BRM) was seen in it.
    Simple,
    /// "Averaging VCs option": each VC contributes a decayed activity in
    /// [0, 1], multiplied by `decay` at every interval end.
    Averaged {
        /// The decay factor, in (0, 1] (0.9 recalled, unverified).
        decay: f64,
    },
}

/// Exponential averaging of the load (dissertation p. 402).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadAveraging {
    /// The load factor of each interval stands alone (the default).
    Off,
    /// Method 1: average the ratio, `z = (1 - alpha) z + alpha * input /
    /// capacity`; restarts from the measured ratio after an interval with
    /// `z` infinite (no capacity).
    Ratio {
        /// The weight of the new measurement, in (0, 1].
        alpha: f64,
    },
    /// Method 2: average the input rate and the capacity separately and
    /// take `z = avgInput / avgCapacity`. The averaged capacity is also the
    /// ABR capacity of the interval (fair share, cap on ER): in the
    /// dissertation the load-factor line reads the same variable in all
    /// methods, which suggests so, but the page that sets it could not be
    /// read (unverified).
    Separate {
        /// The weight of the new measurement, in (0, 1].
        alpha: f64,
    },
}

/// Where ER is computed (the dissertation's canonical form and its "Opt
/// II", p. 415).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErComputedAt {
    /// On the backward RM cell, with the freshest measurement (canonical
    /// ERICA, the recommended reference). Computing on the FRM and stamping
    /// the stored value on the BRM (the dissertation's "Opt II") is not
    /// implemented.
    #[default]
    BackwardRm,
}

/// The parameters of one port's ERICA or ERICA+.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaParams {
    /// ERICA (target utilisation) or ERICA+ (queue control).
    pub variant: Variant,
    /// The averaging interval.
    pub interval: AveragingInterval,
    /// The max-min band delta (dissertation p. 404): the max-min fix applies while
    /// `z <= 1 + delta`. At least 0.
    pub delta: f64,
    /// Whether the under-load ER includes `MaxAllocPrevious` (the max-min
    /// fix, p. 404). Off gives "basic ERICA", `max(FairShare, VCShare)`.
    pub max_min_fix: bool,
    /// How active VCs are counted (pp. 400, 403-404).
    pub counting: Counting,
    /// A backward RM cell marks its VC active too (pp. 403-404).
    pub bidirectional_counting: bool,
    /// A VC that was not active in the last interval is counted in the fair
    /// share at once when it shows up. As in the dissertation's
    /// pseudo-code (pp. 400, 404) the count it raises is the one stored
    /// floored at 1, so after an interval with no active VC the first
    /// newcomer makes it 2 until the interval ends.
    pub immediate_fair_share: bool,
    /// The sudden-increase limiter (atmlab's reading of OSU 98-0408): a VC
    /// whose CCR is below the
    /// fair share is given at most the fair share.
    pub limit_sudden_increase: bool,
    /// Later BRMs of a VC in the same interval carry the ER computed at its
    /// first one (dissertation p. 404).
    pub one_er_per_interval: bool,
    /// Exponential averaging of the load (dissertation p. 402).
    pub load_averaging: LoadAveraging,
    /// The ER is never above the ABR capacity (the target capacity for
    /// ERICA+) (OSU 98-0408 eq. 19).
    pub cap_at_abr_capacity: bool,
    /// Where ER is computed.
    pub er_computed_at: ErComputedAt,
}

impl EricaParams {
    /// ERICA+ with the parameters of 97-0177R2 and atmlab's choices where
    /// the study is silent (see the module's table).
    pub const fn erica_plus_97_0177r2() -> EricaParams {
        EricaParams {
            variant: Variant::EricaPlus(QueueControl::study()),
            interval: AveragingInterval { time: STUDY_INTERVAL_TIME, cells: Some(STUDY_INTERVAL_CELLS) },
            delta: DEFAULT_DELTA,
            max_min_fix: true,
            counting: Counting::Simple,
            bidirectional_counting: true,
            immediate_fair_share: false,
            limit_sudden_increase: true,
            one_er_per_interval: true,
            load_averaging: LoadAveraging::Off,
            cap_at_abr_capacity: true,
            er_computed_at: ErComputedAt::BackwardRm,
        }
    }

    /// Plain ERICA with target utilisation `target_utilization` and
    /// otherwise the same choices as [`EricaParams::erica_plus_97_0177r2`]
    /// (the interval of the study, not the "100 cells / 1 ms" often quoted
    /// for OSU runs, which no text read confirms).
    pub const fn erica(target_utilization: f64) -> EricaParams {
        let mut p = EricaParams::erica_plus_97_0177r2();
        p.variant = Variant::Erica { target_utilization };
        p
    }

    /// Checks every parameter that does not depend on the link; the error
    /// names the first bad one.
    pub fn validate(&self) -> Result<(), EricaParamError> {
        match self.variant {
            Variant::Erica { target_utilization: u } => {
                check("target_utilization", u, u > 0.0 && u <= 1.0, "must be in (0, 1]")?;
            }
            Variant::EricaPlus(q) => validate_queue_control(&q)?,
        }
        if self.interval.time.is_zero() {
            return Err(EricaParamError::new("interval.time", "must be longer than zero".into()));
        }
        if self.interval.cells == Some(0) {
            return Err(EricaParamError::new("interval.cells", "must be at least 1 (or None)".into()));
        }
        check("delta", self.delta, self.delta >= 0.0, "must be at least 0")?;
        if let Counting::Averaged { decay } = self.counting {
            check("counting.decay", decay, decay > 0.0 && decay <= 1.0, "must be in (0, 1]")?;
        }
        match self.load_averaging {
            LoadAveraging::Off => {}
            LoadAveraging::Ratio { alpha } | LoadAveraging::Separate { alpha } => {
                check("load_averaging.alpha", alpha, alpha > 0.0 && alpha <= 1.0, "must be in (0, 1]")?;
            }
        }
        Ok(())
    }
}

impl Default for EricaParams {
    /// [`EricaParams::erica_plus_97_0177r2`].
    fn default() -> EricaParams {
        EricaParams::erica_plus_97_0177r2()
    }
}

fn validate_queue_control(q: &QueueControl) -> Result<(), EricaParamError> {
    if q.t0.is_zero() {
        return Err(EricaParamError::new("t0", "must be longer than zero".into()));
    }
    check("underload_gain", q.underload_gain, q.underload_gain >= 1.0, "must be at least 1")?;
    check("overload_gain", q.overload_gain, q.overload_gain >= 1.0, "must be at least 1")?;
    check("qdlf", q.qdlf, (0.0..=1.0).contains(&q.qdlf), "must be in [0, 1]")
}

/// `Ok` if `value` is finite and `ok`, else an error naming `param`.
fn check(param: &'static str, value: f64, ok: bool, rule: &str) -> Result<(), EricaParamError> {
    if value.is_finite() && ok {
        Ok(())
    } else {
        Err(EricaParamError::new(param, format!("{value} is not allowed: {rule}")))
    }
}

/// A bad ERICA parameter, named as in [`EricaParams`] (or
/// `link_cell_rate`).
pub type EricaParamError = ControlError;

// ---------------------------------------------------------------------------
// The state machine
// ---------------------------------------------------------------------------

/// The state of one VC at the port (after the per-VC variables of the
/// dissertation's Appendix C).
#[derive(Clone, Copy, Debug, PartialEq)]
struct VcState {
    /// The CCR of the VC's latest FRM (0 until one is seen: the VC is then
    /// offered the fair share).
    ccr: f64,
    /// Simple counting: seen in the current interval.
    seen_this: bool,
    /// Simple counting: seen in the last interval (or counted in by the
    /// immediate fair-share update).
    seen_last: bool,
    /// Averaged counting: the decayed activity, in [0, 1].
    contribution: f64,
    /// A BRM of the VC has been given feedback in this interval.
    brm_seen: bool,
    /// The ER computed at the VC's first BRM of this interval.
    last_er: f64,
}

impl VcState {
    const IDLE: VcState =
        VcState { ccr: 0.0, seen_this: false, seen_last: false, contribution: 0.0, brm_seen: false, last_er: 0.0 };
}

/// What one interval measured, as rates (the cell counts divided by its
/// length). Kept apart from the counters so that a test can drive the
/// algorithm with fluid rates.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measurement {
    /// The interval's length, in seconds (at least one cell time).
    dt_secs: f64,
    /// ABR input rate, cells/s.
    input_rate: f64,
    /// Higher-priority (CBR/VBR) rate, cells/s.
    hp_rate: f64,
    /// The port's ABR queue at the end of the interval, cells.
    abr_queue_cells: f64,
}

/// ERICA or ERICA+ at one output port (one direction).
#[derive(Clone, Debug)]
pub struct Erica {
    params: EricaParams,
    /// The link's cell rate, cells/s.
    link_rate: f64,
    /// One cell time of the link, rounded up: the shortest interval (an
    /// interval of zero length would divide by zero).
    min_interval: Duration,

    // The interval under way.
    t_start: SimTime,
    abr_cells: u32,
    hp_cells: u32,

    // The results of the last interval.
    last_len: Duration,
    input_rate: f64,
    hp_rate: f64,
    queue_fraction: Option<f64>,
    abr_cap: f64,
    z: f64,
    fair_share: f64,
    /// `nActiveLast`: the count the fair share divides by (fractional with
    /// averaged counting).
    n_last: f64,
    /// `nActiveThis` of averaged counting.
    n_this: f64,
    max_alloc_prev: f64,
    max_alloc_cur: f64,
    /// Method 2 of exponential averaging: the averaged (input rate, ABR
    /// capacity), `None` before the first interval ends.
    averages: Option<(f64, f64)>,
    intervals: u64,

    vcs: Vec<VcState>,
}

impl Erica {
    /// The algorithm of a port whose link carries `link_cell_rate` cells/s
    /// and which has `n_vcs` ABR VC slots, starting its first interval at
    /// `now`.
    ///
    /// The first interval has no measurement yet (atmlab's start): `z = 1`, the ABR
    /// capacity is `U * LinkRate` (ERICA) or `LinkRate` (ERICA+, f = 1),
    /// one active VC, so the fair share is the whole capacity, and
    /// `MaxAllocPrevious = MaxAllocCurrent = 0`.
    pub fn new(params: EricaParams, link_cell_rate: f64, n_vcs: usize, now: SimTime) -> Result<Erica, EricaParamError> {
        Erica::check(&params, link_cell_rate)?;
        Ok(Erica::checked(params, link_cell_rate, n_vcs, now))
    }

    /// Whether `params` work at a port of `link_cell_rate` cells/s: what
    /// [`Erica::new`] refuses, checked once (a switch controller's
    /// parameters are checked when the port gets it).
    pub fn check(params: &EricaParams, link_cell_rate: f64) -> Result<(), EricaParamError> {
        params.validate()?;
        check("link_cell_rate", link_cell_rate, link_cell_rate > 0.0, "must be more than 0 cells/s")?;
        let min_interval = cell_time(link_cell_rate);
        if params.interval.time < min_interval {
            return Err(EricaParamError::new(
                "interval.time",
                format!("{} is shorter than one cell time of the link ({min_interval})", params.interval.time),
            ));
        }
        Ok(())
    }

    /// [`Erica::new`] for parameters [`Erica::check`] has passed.
    pub(crate) fn checked(params: EricaParams, link_cell_rate: f64, n_vcs: usize, now: SimTime) -> Erica {
        let min_interval = cell_time(link_cell_rate);
        let abr_cap = match params.variant {
            Variant::Erica { target_utilization } => target_utilization * link_cell_rate,
            Variant::EricaPlus(_) => link_cell_rate,
        };
        Erica {
            params,
            link_rate: link_cell_rate,
            min_interval,
            t_start: now,
            abr_cells: 0,
            hp_cells: 0,
            last_len: Duration::ZERO,
            input_rate: 0.0,
            hp_rate: 0.0,
            queue_fraction: None,
            abr_cap,
            z: 1.0,
            fair_share: abr_cap,
            n_last: 1.0,
            n_this: 0.0,
            max_alloc_prev: 0.0,
            max_alloc_cur: 0.0,
            averages: None,
            intervals: 0,
            vcs: vec![VcState::IDLE; n_vcs],
        }
    }

    // --- Inputs -------------------------------------------------------------

    /// An ABR cell of VC slot `vc` offered to the port at `now` (the
    /// dissertation's forward-cell handler): counts it, marks the VC active and, for
    /// an FRM, records its CCR (`frm_ccr`; a NaN or negative CCR counts as
    /// 0).
    ///
    /// Returns `true` when this cell ends the interval by count (the N-th
    /// ABR cell, once at least one cell time has passed): the caller
    /// then calls [`Erica::end_interval`] at once with the ABR queue it
    /// knows. Until it does, further cells keep returning `true`.
    ///
    /// # Panics
    ///
    /// If `vc` is not a slot of this port (`vc >= n_vcs`), a wiring bug.
    #[must_use = "true means the interval must be ended now"]
    pub fn on_abr_cell(&mut self, now: SimTime, vc: usize, frm_ccr: Option<f64>) -> bool {
        self.abr_cells = self.abr_cells.saturating_add(1);
        self.mark_active(vc);
        if let Some(ccr) = frm_ccr {
            // "When an FRM is received: CCR[VC] <- CCR in RM cell" (Appendix C).
            self.vcs[vc].ccr = sanitize_rate(ccr);
        }
        self.count_bound_reached(now)
    }

    /// A higher-priority (CBR/VBR) cell offered to the port at `now`
    /// (dissertation p. 400).
    pub fn on_high_priority_cell(&mut self, _now: SimTime) {
        self.hp_cells = self.hp_cells.saturating_add(1);
    }

    /// `n` higher-priority cells offered to the port in the current
    /// interval, at once: as many calls of
    /// [`Erica::on_high_priority_cell`], for a caller that knows no ABR
    /// cell came between them.
    pub fn on_high_priority_cells(&mut self, n: u32) {
        self.hp_cells = self.hp_cells.saturating_add(n);
    }

    /// Ends the interval at `now` (by time at [`Erica::interval_deadline`],
    /// or by count after [`Erica::on_abr_cell`] returned `true`), with
    /// `abr_queue_cells` the port's ABR queue at that moment (ERICA+ only,
    /// for atmlab's Tq), and starts the next one.
    ///
    /// An interval is never shorter than one cell time: an earlier
    /// `now` is measured as if one cell time had passed. Cells offered at
    /// the very instant of the deadline belong to whichever interval is
    /// current when they are fed in: the caller's event order decides.
    pub fn end_interval(&mut self, now: SimTime, abr_queue_cells: u32) {
        let len = now.saturating_since(self.t_start).max(self.min_interval);
        let dt_secs = len.as_secs_f64();
        let m = Measurement {
            dt_secs,
            input_rate: f64::from(self.abr_cells) / dt_secs,
            hp_rate: f64::from(self.hp_cells) / dt_secs,
            abr_queue_cells: f64::from(abr_queue_cells),
        };
        self.last_len = len;
        self.close_interval(now, m);
    }

    /// A backward RM cell of VC slot `vc` passing the switch at `now`
    /// (the dissertation's backward-RM handler): marks the VC active under
    /// bidirectional counting, computes its ER (or reuses the one of its first
    /// BRM in this interval, p. 404) and lowers `rm.er` to it, never
    /// raising it (TM 4.0 s5.10.6). Returns the ER the algorithm computed.
    ///
    /// # Panics
    ///
    /// If `vc` is not a slot of this port (`vc >= n_vcs`), a wiring bug.
    pub fn on_backward_rm(&mut self, _now: SimTime, vc: usize, rm: &mut RmCell) -> f64 {
        if self.params.bidirectional_counting {
            self.mark_active(vc);
        }
        let er = if self.params.one_er_per_interval && self.vcs[vc].brm_seen {
            self.vcs[vc].last_er
        } else {
            let er = self.compute_er(self.vcs[vc].ccr);
            let state = &mut self.vcs[vc];
            state.last_er = er;
            state.brm_seen = true;
            er
        };
        rm.lower_er(er);
        er
    }

    // --- Read-outs ------------------------------------------------------------

    /// When the time bound T ends the current interval: the caller
    /// schedules an event then and calls [`Erica::end_interval`].
    pub fn interval_deadline(&self) -> SimTime {
        self.t_start.saturating_add(self.params.interval.time)
    }

    /// When the current interval started.
    pub fn interval_start(&self) -> SimTime {
        self.t_start
    }

    /// The load (overload) factor z of the last interval (1 before the
    /// first ends; infinite when no capacity was left for ABR).
    pub fn load_factor(&self) -> f64 {
        self.z
    }

    /// The ABR capacity of the last interval, cells/s: `U * LinkRate -
    /// hpRate` for ERICA, the *target* ABR capacity `f(Tq) * (LinkRate -
    /// hpRate)` for ERICA+.
    pub fn abr_capacity(&self) -> f64 {
        self.abr_cap
    }

    /// The fair share, cells/s: the ABR capacity divided by
    /// [`Erica::active_vcs`].
    pub fn fair_share(&self) -> f64 {
        self.fair_share
    }

    /// The measured higher-priority (CBR/VBR) rate of the last interval,
    /// cells/s.
    pub fn high_priority_rate(&self) -> f64 {
        self.hp_rate
    }

    /// The measured ABR input rate of the last interval, cells/s.
    pub fn abr_input_rate(&self) -> f64 {
        self.input_rate
    }

    /// The number of active VCs the fair share divides by (`nActiveLast`,
    /// at least 1; fractional with averaged counting; raised during the
    /// interval by the immediate fair-share update).
    pub fn active_vcs(&self) -> f64 {
        self.n_last
    }

    /// The length of the last interval (zero before the first ends).
    pub fn last_interval(&self) -> Duration {
        self.last_len
    }

    /// ERICA+'s f(Tq) of the last interval (`None` for ERICA and before the
    /// first interval ends).
    pub fn queue_fraction(&self) -> Option<f64> {
        self.queue_fraction
    }

    /// `MaxAllocPrevious`: the largest ER computed in the previous interval
    /// (at least that interval's fair share).
    pub fn max_alloc_previous(&self) -> f64 {
        self.max_alloc_prev
    }

    /// How many intervals have ended.
    pub fn intervals_ended(&self) -> u64 {
        self.intervals
    }

    /// The CCR recorded for VC slot `vc` (from its latest FRM).
    pub fn ccr(&self, vc: usize) -> f64 {
        self.vcs[vc].ccr
    }

    /// The parameters.
    pub fn params(&self) -> &EricaParams {
        &self.params
    }

    /// The link's cell rate, cells/s.
    pub fn link_cell_rate(&self) -> f64 {
        self.link_rate
    }

    // --- Internals ------------------------------------------------------------

    /// Whether the cell bound N has ended the interval at `now` (never
    /// before one cell time).
    fn count_bound_reached(&self, now: SimTime) -> bool {
        let enough_cells = self.params.interval.cells.is_some_and(|n| self.abr_cells >= n);
        enough_cells && now.saturating_since(self.t_start) >= self.min_interval
    }

    /// The end-of-interval computation (Appendix C) from a measurement, then the
    /// start of the next interval at `now`.
    fn close_interval(&mut self, now: SimTime, m: Measurement) {
        debug_assert!(m.dt_secs > 0.0, "an interval is at least one cell time");
        self.input_rate = m.input_rate;
        self.hp_rate = m.hp_rate;
        let capacity = self.measured_capacity(&m);
        self.update_load(m.input_rate, capacity);
        self.count_active_vcs();
        self.refresh_fair_share();
        // Appendix C, p. 402: "MaxAllocPrevious = MaxAllocCurrent; MaxAllocCurrent = FairShare"
        // (dissertation p. 402).
        self.max_alloc_prev = self.max_alloc_cur;
        self.max_alloc_cur = self.fair_share;
        for vc in &mut self.vcs {
            vc.brm_seen = false;
        }
        self.t_start = now;
        self.abr_cells = 0;
        self.hp_cells = 0;
        self.intervals += 1;
    }

    /// The ABR capacity the interval measured, before any averaging: p. 400
    /// for ERICA, s6.19 with atmlab's Tq for ERICA+ (which also records f).
    fn measured_capacity(&mut self, m: &Measurement) -> f64 {
        match self.params.variant {
            Variant::Erica { target_utilization } => (target_utilization * self.link_rate - m.hp_rate).max(0.0),
            Variant::EricaPlus(q) => {
                let raw = (self.link_rate - m.hp_rate).max(0.0);
                let f = q.fraction(queueing_delay(m.abr_queue_cells, raw));
                self.queue_fraction = Some(f);
                f * raw
            }
        }
    }

    /// Sets the ABR capacity and the load factor z from the interval's
    /// input rate and capacity, with the exponential averaging of p. 402.
    fn update_load(&mut self, input_rate: f64, capacity: f64) {
        match self.params.load_averaging {
            LoadAveraging::Off => {
                self.abr_cap = capacity;
                self.z = load_ratio(input_rate, capacity);
            }
            LoadAveraging::Ratio { alpha } => {
                self.abr_cap = capacity;
                let measured = load_ratio(input_rate, capacity);
                // Dissertation p. 402: infinite when there is no capacity;
                // restart from the measurement after an infinite z; the
                // first interval has no history to average with.
                self.z = if capacity <= 0.0 || self.z.is_infinite() || self.intervals == 0 {
                    measured
                } else {
                    (1.0 - alpha) * self.z + alpha * measured
                };
            }
            LoadAveraging::Separate { alpha } => {
                let (avg_in, avg_cap) = match self.averages {
                    None => (input_rate, capacity),
                    Some((i, c)) => ((1.0 - alpha) * i + alpha * input_rate, (1.0 - alpha) * c + alpha * capacity),
                };
                self.averages = Some((avg_in, avg_cap));
                self.abr_cap = avg_cap;
                self.z = load_ratio(avg_in, avg_cap);
            }
        }
    }

    /// `nActiveLast` at the end of an interval, and the reset of the
    /// activity of the next one (dissertation p. 400).
    fn count_active_vcs(&mut self) {
        match self.params.counting {
            Counting::Simple => {
                let mut seen = 0usize;
                for vc in &mut self.vcs {
                    seen += usize::from(vc.seen_this);
                    vc.seen_last = vc.seen_this;
                    vc.seen_this = false;
                }
                self.n_last = at_least_one(seen as f64);
            }
            Counting::Averaged { decay } => {
                self.n_last = at_least_one(self.n_this);
                self.n_this = 0.0;
                for vc in &mut self.vcs {
                    vc.contribution *= decay;
                    self.n_this += vc.contribution;
                }
            }
        }
    }

    /// Marks VC `vc` active in this interval (pp. 400, 403-404), with
    /// the immediate fair-share update when enabled.
    fn mark_active(&mut self, vc: usize) {
        let immediate = self.params.immediate_fair_share;
        match self.params.counting {
            Counting::Simple => {
                let state = &mut self.vcs[vc];
                state.seen_this = true;
                if immediate && !state.seen_last {
                    // Counted once: "set seenLast[vc] = 1" (p. 404).
                    state.seen_last = true;
                    self.n_last += 1.0;
                    self.refresh_fair_share();
                }
            }
            Counting::Averaged { decay } => {
                let c = self.vcs[vc].contribution;
                if c < 1.0 {
                    self.n_this += 1.0 - c;
                    if immediate && c < decay {
                        // Inactive for a whole interval: what it would
                        // have contributed to nActiveLast (p. 403).
                        self.n_last += 1.0 - c / decay;
                        self.refresh_fair_share();
                    }
                    self.vcs[vc].contribution = 1.0;
                }
            }
        }
    }

    /// `fairShare = abrCap / nActiveLast` (p. 402).
    fn refresh_fair_share(&mut self) {
        self.fair_share = self.abr_cap / self.n_last;
    }

    /// `VCShare = CCR / z` (p. 404). With `z = 0` (no ABR input) the share
    /// `CCR/0` would be infinite and then clamped by the ABR capacity
    /// (atmlab's guard): it is the ABR capacity here, which gives the same
    /// ER and keeps `MaxAllocCurrent` finite.
    fn vc_share(&self, ccr: f64) -> f64 {
        if self.z > 0.0 { ccr / self.z } else { self.abr_cap }
    }

    /// The ER of a VC whose CCR is `ccr`, at its first BRM of the interval
    /// (p. 404, with the limiter and its order as atmlab reads them).
    fn compute_er(&mut self, ccr: f64) -> f64 {
        let fair_share = self.fair_share;
        let mut er = fair_share.max(self.vc_share(ccr));
        // The max-min fix, only near or under the target (p. 404).
        if self.params.max_min_fix && self.z <= 1.0 + self.params.delta {
            er = er.max(self.max_alloc_prev);
        }
        // MaxAllocCurrent is updated before the limiter (atmlab's order).
        self.max_alloc_cur = self.max_alloc_cur.max(er);
        if self.params.limit_sudden_increase && er > fair_share && ccr < fair_share {
            er = fair_share;
        }
        if self.params.cap_at_abr_capacity {
            er = er.min(self.abr_cap);
        }
        er
    }
}

/// One cell time at `rate` cells/s, rounded up to whole picoseconds (at
/// least 1 ps; saturating for absurdly slow links).
fn cell_time(rate: f64) -> Duration {
    // A float-to-integer cast saturates, so a huge cell time becomes
    // u64::MAX ps rather than wrapping.
    let ps = (PS_PER_S as f64 / rate).ceil() as u64;
    Duration::from_ps(ps.max(1))
}

/// ERICA+'s queueing delay Tq in seconds: the ABR queue over the raw ABR
/// capacity (atmlab's Tq for the dissertation's s6.19); an empty queue has none, a queue nothing drains
/// an infinite one.
fn queueing_delay(queue_cells: f64, raw_capacity: f64) -> f64 {
    if queue_cells <= 0.0 {
        0.0
    } else if raw_capacity > 0.0 {
        queue_cells / raw_capacity
    } else {
        f64::INFINITY
    }
}

/// `z = input / capacity`, infinite when there is no capacity (p. 402).
fn load_ratio(input_rate: f64, capacity: f64) -> f64 {
    if capacity > 0.0 { input_rate / capacity } else { f64::INFINITY }
}

/// `max(n, 1)`: the fair share divides by at least one VC (p. 400).
fn at_least_one(n: f64) -> f64 {
    n.max(1.0)
}

/// A rate read from a cell: NaN and negative values count as 0.
fn sanitize_rate(rate: f64) -> f64 {
    if rate >= 0.0 { rate } else { 0.0 }
}

// ---------------------------------------------------------------------------
// As a switch controller
// ---------------------------------------------------------------------------

/// What ERICA and ERICA+ report, as of the end of the last interval.
pub const READINGS: &[ReadingInfo] = &[
    reading::INTERVALS,
    reading::LOAD_FACTOR,
    reading::ABR_CAPACITY,
    reading::FAIR_SHARE,
    reading::HIGH_PRIORITY,
    reading::ACTIVE_VCS,
];

impl SwitchControl for Erica {
    /// Counts the cell; the N-th ABR cell ends the interval (with the
    /// port's ABR queue before it, for ERICA+) and moves the deadline.
    #[inline]
    fn abr_cell(&mut self, at: SimTime, vc: usize, frm_ccr: Option<f64>, queue: impl FnOnce() -> u32) -> bool {
        if !Erica::on_abr_cell(self, at, vc, frm_ccr) {
            return false;
        }
        self.end_interval(at, queue());
        true
    }

    #[inline]
    fn high_priority_cells(&mut self, _at: SimTime, n: u32) {
        Erica::on_high_priority_cells(self, n);
    }

    #[inline]
    fn backward_rm(&mut self, at: SimTime, vc: usize, rm: &mut RmCell) {
        Erica::on_backward_rm(self, at, vc, rm);
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        true
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        Some(self.interval_deadline())
    }

    fn deadline_reached(&mut self, now: SimTime, abr_queue: u32) {
        self.end_interval(now, abr_queue);
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [
            Some(self.intervals_ended() as f64),
            finite(self.load_factor()),
            bps(self.abr_capacity()),
            bps(self.fair_share()),
            bps(self.high_priority_rate()),
            finite(self.active_vcs()),
        ];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
#[path = "erica_tests.rs"]
mod tests;
