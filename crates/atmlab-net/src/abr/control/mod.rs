//! Switch control: the ABR controller of one switch output port, as the
//! drop policies are the buffer's (`atm/drop_policy.rs`): a trait, what it
//! is told and what it may do, and an enum of the algorithms, dispatched
//! statically.
//!
//! A controller is told, in the simulation's true-time order:
//!
//! * every cell offered to its port ([`SwitchControl::abr_cell`] for an
//!   ABR cell, with a forward RM cell's CCR; [`SwitchControl::high_priority_cells`]
//!   for CBR and VBR cells; UBR cells not at all), with the port's ABR queue
//!   before the cell on demand;
//! * every backward RM cell of its VCs that leaves the switch the other way
//!   ([`SwitchControl::backward_rm`]): it may lower the ER and set CI or
//!   NI;
//! * its deadline, if it keeps one ([`SwitchControl::deadline`],
//!   [`SwitchControl::deadline_reached`] with the ABR queue then);
//!
//! and it may mark the data cells it is offered ([`SwitchControl::mark`]:
//! EFCI). Its [`Timing`] ([`Controller::timing`]: its algorithm's, or a
//! stricter one its parameters need) tells the simulation when it must be
//! told: the event elision that takes cells ahead of time
//! (`docs/architecture.md`, "Speed") keeps every controller's view exact
//! through it.
//!
//! Its readings ([`SwitchControl::readings`]) are what the results and the
//! probes report of it, by name: each algorithm says what it has
//! ([`Algorithm::readings`]).
//!
//! **Adding an algorithm**: a file here with its controller (a struct that
//! implements [`SwitchControl`]) and its parameters, a variant of
//! [`Controller`] and [`ControlConfig`] and a line of `dispatch!` in this
//! file, and its scenario keys in `atmlab-scenario` (`abr_switch.rs`, one
//! function). Nothing in `sim/` changes: [`fixed`] is the smallest example.

pub mod capc;
pub mod charny;
pub mod efci;
pub mod eprca;
pub mod erica;
pub mod fixed;
mod meter;
pub mod osu;
pub mod reading;

use crate::abr::RmCell;
use atmlab_engine::SimTime;

pub use capc::{Capc, CapcParams};
pub use charny::{Charny, CharnyParams};
pub use efci::Efci;
pub use eprca::{Eprca, EprcaParams};
pub use erica::{Erica, EricaParams};
pub use fixed::FixedRate;
pub use osu::{Osu, OsuParams};

/// When a controller must be told of the cells offered to its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// It counts cells in true-time order but changes none: a cell taken
    /// ahead of time (an eager hop) is counted later, at its arrival, in
    /// its place among the other events (ERICA).
    Counted,
    /// It acts on each cell alone (marks it from the port's queue at its
    /// arrival, which an eager hop knows exactly) and keeps no state that
    /// anything else reads between cells: told at once (EFCI).
    PerCell,
    /// It changes cells and keeps state that others read (a backward RM
    /// cell's ER): its port never takes cells ahead of time. (EPRCA and APRC
    /// marking EFCI; `Simulation::plan` does not keep such ports off eager
    /// hops yet: docs/models/abr.md, "Switch control".)
    Exact,
}

/// A named reading of a controller, for results and probes. Rates are
/// bit/s (names end `_bps`), counts whole numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// Its name in results (`abr_ports.PORT.NAME`) and probes.
    pub name: &'static str,
    /// Its value (`None`: not measured yet, or not finite).
    pub value: Option<f64>,
}

/// What a reading is, for the results' schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadingInfo {
    /// Its name.
    pub name: &'static str,
    /// What it means (and its unit).
    pub description: &'static str,
    /// A whole number (a count).
    pub integer: bool,
}

/// The ABR controller of one switch output port: what it is told and what
/// it does (see the module docs).
pub trait SwitchControl {
    /// An ABR cell of VC index `vc` offered at `at` (`frm_ccr`: a forward
    /// RM cell's CCR, cells/s). `queue()` is the port's ABR queue before
    /// the cell. Returns `true` if its deadline moved (the caller reads
    /// [`deadline`](Self::deadline) again).
    /// (Default: counts nothing.)
    fn abr_cell(&mut self, _at: SimTime, _vc: usize, _frm_ccr: Option<f64>, _queue: impl FnOnce() -> u32) -> bool {
        false
    }

    /// `n` CBR or VBR cells offered, the last at `at`, with no ABR cell
    /// between them. (Default: counts nothing.)
    fn high_priority_cells(&mut self, _at: SimTime, _n: u32) {}

    /// A data cell of an ABR VC offered at `at` with `abr_queue` ABR cells
    /// queued before it: whether to set its EFCI bit.
    fn mark(&mut self, _at: SimTime, _vc: usize, _abr_queue: u32) -> bool {
        false
    }

    /// Whether it marks data cells at all ([`mark`](Self::mark)).
    fn marks(&self) -> bool {
        false
    }

    /// A backward RM cell of VC index `vc` leaves the switch at `at` the
    /// other way: the controller may lower its ER (never raise it) and set
    /// CI or NI. (Default: leaves it as it is.)
    fn backward_rm(&mut self, _at: SimTime, _vc: usize, _rm: &mut RmCell) {}

    /// Whether it acts on backward RM cells at all.
    fn writes_backward_rm(&self) -> bool {
        false
    }

    /// When it wants [`deadline_reached`](Self::deadline_reached), if ever.
    fn deadline(&self) -> Option<SimTime> {
        None
    }

    /// Its deadline at `now`, with `abr_queue` the port's ABR queue then.
    fn deadline_reached(&mut self, _now: SimTime, _abr_queue: u32) {}

    /// Its readings, in the order of its [`Algorithm::readings`].
    fn readings(&self) -> Vec<Reading>;
}

/// The algorithms, by the name results and scenarios give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// ERICA+ (queue control), the switch of 97-0177R2.
    EricaPlus,
    /// ERICA with a target utilisation.
    Erica,
    /// A binary switch: EFCI marking above a queue threshold.
    Efci,
    /// One fixed explicit rate for every VC (a baseline).
    FixedRate,
    /// EPRCA: MACR, queue thresholds, explicit rate, CI or EFCI.
    Eprca,
    /// APRC: EPRCA with congestion by the queue's growth.
    Aprc,
    /// CAPC: one explicit rate per port, moved proportionally to the load.
    Capc,
    /// The OSU scheme: load level, target utilisation band.
    Osu,
    /// Charny's max-min algorithm with consistent marking.
    Charny,
}

impl Algorithm {
    /// Every algorithm, in the order results and schemas list them.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::EricaPlus,
        Algorithm::Erica,
        Algorithm::Efci,
        Algorithm::FixedRate,
        Algorithm::Eprca,
        Algorithm::Aprc,
        Algorithm::Capc,
        Algorithm::Osu,
        Algorithm::Charny,
    ];

    /// Its name in scenarios and results.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::EricaPlus => "erica_plus",
            Algorithm::Erica => "erica",
            Algorithm::Efci => "efci",
            Algorithm::FixedRate => "fixed_rate",
            Algorithm::Eprca => "eprca",
            Algorithm::Aprc => "aprc",
            Algorithm::Capc => "capc",
            Algorithm::Osu => "osu",
            Algorithm::Charny => "charny",
        }
    }

    /// When its controller must be told of the cells offered to its port,
    /// with its default parameters (some parameters need a stricter timing:
    /// [`ControlConfig::timing`]).
    pub fn timing(self) -> Timing {
        match self {
            Algorithm::EricaPlus
            | Algorithm::Erica
            | Algorithm::Eprca
            | Algorithm::Aprc
            | Algorithm::Capc
            | Algorithm::Osu
            | Algorithm::Charny => Timing::Counted,
            Algorithm::Efci | Algorithm::FixedRate => Timing::PerCell,
        }
    }

    /// What it reports, in order.
    pub fn readings(self) -> &'static [ReadingInfo] {
        match self {
            Algorithm::EricaPlus | Algorithm::Erica => erica::READINGS,
            Algorithm::Efci => efci::READINGS,
            Algorithm::FixedRate => fixed::READINGS,
            Algorithm::Eprca | Algorithm::Aprc => eprca::READINGS,
            Algorithm::Capc => capc::READINGS,
            Algorithm::Osu => osu::READINGS,
            Algorithm::Charny => charny::READINGS,
        }
    }

    /// Every reading any algorithm reports, each once, in the order of
    /// [`Algorithm::ALL`] (the results' schema).
    pub fn all_readings() -> Vec<ReadingInfo> {
        let mut out: Vec<ReadingInfo> = Vec::new();
        for a in Algorithm::ALL {
            for r in a.readings() {
                if !out.iter().any(|o| o.name == r.name) {
                    out.push(*r);
                }
            }
        }
        out
    }
}

/// A controller as a scenario configures it, before its port is known.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlConfig {
    /// ERICA or ERICA+.
    Erica(EricaParams),
    /// EFCI marking.
    Efci(efci::EfciParams),
    /// A fixed explicit rate.
    FixedRate(fixed::FixedRateParams),
    /// EPRCA or APRC (by its congestion test).
    Eprca(EprcaParams),
    /// CAPC.
    Capc(CapcParams),
    /// The OSU scheme.
    Osu(OsuParams),
    /// Charny's algorithm.
    Charny(CharnyParams),
}

/// A controller's parameters that cannot work (`param` names the field).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{param}`: {problem}")]
pub struct ControlError {
    /// The parameter, as the algorithm names it (`interval.time`, `threshold`).
    pub param: &'static str,
    /// What is wrong.
    pub problem: String,
}

impl ControlError {
    pub(crate) fn new(param: &'static str, problem: String) -> ControlError {
        ControlError { param, problem }
    }
}

/// What a controller is built for: its port's link and ABR VC slots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortInfo {
    /// The link's cell rate, cells/s.
    pub cell_rate: f64,
    /// The VC indices at the port (ABR or not: a controller addresses VCs
    /// by their index at the port).
    pub vcs: usize,
}

impl ControlConfig {
    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            ControlConfig::Erica(p) => match p.variant {
                erica::Variant::EricaPlus(_) => Algorithm::EricaPlus,
                erica::Variant::Erica { .. } => Algorithm::Erica,
            },
            ControlConfig::Efci(_) => Algorithm::Efci,
            ControlConfig::FixedRate(_) => Algorithm::FixedRate,
            ControlConfig::Eprca(p) => eprca_algorithm(p),
            ControlConfig::Capc(_) => Algorithm::Capc,
            ControlConfig::Osu(_) => Algorithm::Osu,
            ControlConfig::Charny(_) => Algorithm::Charny,
        }
    }

    /// When its controller must be told of the cells offered to its port:
    /// its algorithm's timing, or a stricter one its parameters need (EPRCA
    /// marking EFCI changes data cells: [`Timing::Exact`]).
    pub fn timing(&self) -> Timing {
        match self {
            ControlConfig::Eprca(p) => p.timing(),
            _ => self.algorithm().timing(),
        }
    }

    /// Whether the parameters work at a port of `cell_rate` cells/s (an
    /// ERICA interval no shorter than a cell time of the link): the one
    /// check, made when the port gets the controller; an error names the
    /// parameter.
    pub fn check(&self, cell_rate: f64) -> Result<(), ControlError> {
        match self {
            ControlConfig::Erica(p) => Erica::check(p, cell_rate),
            ControlConfig::Efci(_) => Ok(()),
            ControlConfig::FixedRate(p) => p.validate(),
            ControlConfig::Eprca(p) => p.validate(),
            ControlConfig::Capc(p) => p.check(cell_rate),
            ControlConfig::Osu(p) => p.check(cell_rate),
            ControlConfig::Charny(p) => p.check(cell_rate),
        }
    }

    /// The controller of a port, its parameters checked
    /// ([`check`](Self::check)), its first interval (if it has any)
    /// starting at `now`.
    pub fn build(&self, port: PortInfo, now: SimTime) -> Controller {
        match self {
            ControlConfig::Erica(p) => Controller::Erica(Box::new(Erica::checked(*p, port.cell_rate, port.vcs, now))),
            ControlConfig::Efci(p) => Controller::Efci(Efci::new(*p)),
            ControlConfig::FixedRate(p) => Controller::FixedRate(FixedRate::new(*p)),
            ControlConfig::Eprca(p) => Controller::Eprca(Eprca::new(*p)),
            ControlConfig::Capc(p) => Controller::Capc(Box::new(Capc::new(*p, port.cell_rate, now))),
            ControlConfig::Osu(p) => Controller::Osu(Box::new(Osu::new(*p, port.cell_rate, port.vcs, now))),
            ControlConfig::Charny(p) => Controller::Charny(Box::new(Charny::new(*p, port.cell_rate, port.vcs, now))),
        }
    }
}

/// EPRCA or APRC, by the congestion test of `p`.
fn eprca_algorithm(p: &EprcaParams) -> Algorithm {
    match p.congestion {
        eprca::Congestion::QueueLength { .. } => Algorithm::Eprca,
        eprca::Congestion::QueueGrowth { .. } => Algorithm::Aprc,
    }
}

/// The controller of one port: one of the algorithms, dispatched
/// statically.
#[derive(Clone, Debug)]
pub enum Controller {
    /// ERICA or ERICA+.
    Erica(Box<Erica>),
    /// EFCI marking.
    Efci(Efci),
    /// A fixed explicit rate.
    FixedRate(FixedRate),
    /// EPRCA or APRC.
    Eprca(Eprca),
    /// CAPC.
    Capc(Box<Capc>),
    /// The OSU scheme.
    Osu(Box<Osu>),
    /// Charny's algorithm.
    Charny(Box<Charny>),
}

/// `dispatch!(self, c => expr)`: `expr` with `c` the controller of every
/// variant.
macro_rules! dispatch {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Controller::Erica($c) => $e,
            Controller::Efci($c) => $e,
            Controller::FixedRate($c) => $e,
            Controller::Eprca($c) => $e,
            Controller::Capc($c) => $e,
            Controller::Osu($c) => $e,
            Controller::Charny($c) => $e,
        }
    };
}

impl Controller {
    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Controller::Erica(e) => match e.params().variant {
                erica::Variant::EricaPlus(_) => Algorithm::EricaPlus,
                erica::Variant::Erica { .. } => Algorithm::Erica,
            },
            Controller::Efci(_) => Algorithm::Efci,
            Controller::FixedRate(_) => Algorithm::FixedRate,
            Controller::Eprca(e) => eprca_algorithm(e.params()),
            Controller::Capc(_) => Algorithm::Capc,
            Controller::Osu(_) => Algorithm::Osu,
            Controller::Charny(_) => Algorithm::Charny,
        }
    }

    /// When it must be told of the cells offered to its port (as its
    /// configuration's [`ControlConfig::timing`]).
    #[inline]
    pub fn timing(&self) -> Timing {
        match self {
            Controller::Eprca(e) => e.params().timing(),
            _ => self.algorithm().timing(),
        }
    }

    /// The reading called `name`, if the algorithm has it.
    pub fn reading(&self, name: &str) -> Option<Option<f64>> {
        self.readings().into_iter().find(|r| r.name == name).map(|r| r.value)
    }
}

impl SwitchControl for Controller {
    #[inline]
    fn abr_cell(&mut self, at: SimTime, vc: usize, frm_ccr: Option<f64>, queue: impl FnOnce() -> u32) -> bool {
        dispatch!(self, c => c.abr_cell(at, vc, frm_ccr, queue))
    }

    #[inline]
    fn high_priority_cells(&mut self, at: SimTime, n: u32) {
        dispatch!(self, c => c.high_priority_cells(at, n))
    }

    #[inline]
    fn mark(&mut self, at: SimTime, vc: usize, abr_queue: u32) -> bool {
        dispatch!(self, c => c.mark(at, vc, abr_queue))
    }

    #[inline]
    fn marks(&self) -> bool {
        dispatch!(self, c => c.marks())
    }

    #[inline]
    fn backward_rm(&mut self, at: SimTime, vc: usize, rm: &mut RmCell) {
        dispatch!(self, c => c.backward_rm(at, vc, rm))
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        dispatch!(self, c => c.writes_backward_rm())
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        dispatch!(self, c => c.deadline())
    }

    #[inline]
    fn deadline_reached(&mut self, now: SimTime, abr_queue: u32) {
        dispatch!(self, c => c.deadline_reached(now, abr_queue))
    }

    fn readings(&self) -> Vec<Reading> {
        dispatch!(self, c => c.readings())
    }
}

/// A rate reading in bit/s from cells/s, `None` if not finite (JSON has
/// no infinity).
pub(crate) fn bps(cells_per_s: f64) -> Option<f64> {
    let v = cells_per_s * atmlab_engine::CELL_BITS as f64;
    v.is_finite().then_some(v)
}

/// `Some(x)` if `x` is finite.
pub(crate) fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// A controller's readings: the `values` of its `infos`, in order.
pub(crate) fn named<const N: usize>(infos: &[ReadingInfo], values: [Option<f64>; N]) -> Vec<Reading> {
    debug_assert_eq!(infos.len(), N, "one value per reading");
    infos.iter().zip(values).map(|(r, value)| Reading { name: r.name, value }).collect()
}

#[cfg(test)]
mod network_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every algorithm's default configuration.
    fn defaults() -> Vec<ControlConfig> {
        vec![
            ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()),
            ControlConfig::Erica(EricaParams::erica(0.9)),
            ControlConfig::Efci(efci::EfciParams { threshold: 10 }),
            ControlConfig::FixedRate(fixed::FixedRateParams { er: 1000.0 }),
            ControlConfig::Eprca(eprca::EPRCA_DEFAULTS),
            ControlConfig::Eprca(eprca::APRC_DEFAULTS),
            ControlConfig::Capc(capc::CAPC_DEFAULTS),
            ControlConfig::Osu(osu::OSU_DEFAULTS),
            ControlConfig::Charny(charny::CHARNY_DEFAULTS),
        ]
    }

    #[test]
    fn test_every_algorithm_builds_and_reports_its_readings_in_order() {
        let port = PortInfo { cell_rate: 353_207.55, vcs: 4 };
        let configs = defaults();
        let algorithms: Vec<Algorithm> = configs.iter().map(|c| c.algorithm()).collect();
        assert_eq!(algorithms, Algorithm::ALL, "one default per algorithm, in ALL's order");
        for c in &configs {
            c.check(port.cell_rate).unwrap();
            let ctl = c.build(port, SimTime::ZERO);
            assert_eq!(ctl.algorithm(), c.algorithm());
            assert_eq!(ctl.timing(), c.timing());
            assert_eq!(c.timing(), c.algorithm().timing(), "defaults need no stricter timing");
            let names: Vec<&str> = ctl.readings().iter().map(|r| r.name).collect();
            let expected: Vec<&str> = c.algorithm().readings().iter().map(|r| r.name).collect();
            assert_eq!(names, expected, "{:?}", c.algorithm());
            // A deadline, if kept, lies ahead; an algorithm with one changes BRMs.
            if let Some(t) = ctl.deadline() {
                assert!(t > SimTime::ZERO);
            }
        }
        let mut names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
        names.dedup();
        assert_eq!(names.len(), Algorithm::ALL.len());
    }

    #[test]
    fn test_a_reading_has_one_meaning_whoever_reports_it() {
        // all_readings keeps the first description of a name: every
        // algorithm reporting the name must mean the same by it.
        for a in Algorithm::ALL {
            for r in a.readings() {
                let first = Algorithm::all_readings().into_iter().find(|x| x.name == r.name).unwrap();
                assert_eq!(*r, first, "{} of {}", r.name, a.name());
                assert!(!r.name.ends_with("_bps") || !r.integer);
            }
        }
    }

    #[test]
    fn test_bad_parameters_are_refused_at_check_naming_them() {
        let mut p = capc::CAPC_DEFAULTS;
        p.interval.time = atmlab_engine::Duration::from_ps(10);
        assert_eq!(ControlConfig::Capc(p).check(353_207.55).unwrap_err().param, "interval.time");
        let mut p = eprca::EPRCA_DEFAULTS;
        p.averaging_weight = 2.0;
        assert_eq!(ControlConfig::Eprca(p).check(353_207.55).unwrap_err().param, "averaging_weight");
        let mut p = osu::OSU_DEFAULTS;
        p.half_width = 2.0;
        assert_eq!(ControlConfig::Osu(p).check(353_207.55).unwrap_err().param, "half_width");
        let mut p = charny::CHARNY_DEFAULTS;
        p.target_utilization = 0.0;
        assert_eq!(ControlConfig::Charny(p).check(353_207.55).unwrap_err().param, "target_utilization");
        let mut p = eprca::EPRCA_DEFAULTS;
        p.efci_marking = true;
        assert_eq!(ControlConfig::Eprca(p).timing(), Timing::Exact);
        assert_eq!(
            ControlConfig::Eprca(p).build(PortInfo { cell_rate: 1.0, vcs: 1 }, SimTime::ZERO).timing(),
            Timing::Exact
        );
    }
}
