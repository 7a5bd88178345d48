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
//! EFCI). Its algorithm's [`Timing`] tells the simulation when it must be told: the
//! event elision that takes cells ahead of time (`docs/architecture.md`,
//! "Speed") keeps every controller's view exact through it.
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

pub mod efci;
pub mod erica;
pub mod fixed;
pub mod reading;

use crate::abr::RmCell;
use atmlab_engine::SimTime;

pub use efci::Efci;
pub use erica::{Erica, EricaParams};
pub use fixed::FixedRate;

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
    /// cell's ER): its port never takes cells ahead of time.
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
}

impl Algorithm {
    /// Every algorithm, in the order results and schemas list them.
    pub const ALL: [Algorithm; 4] = [Algorithm::EricaPlus, Algorithm::Erica, Algorithm::Efci, Algorithm::FixedRate];

    /// Its name in scenarios and results.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::EricaPlus => "erica_plus",
            Algorithm::Erica => "erica",
            Algorithm::Efci => "efci",
            Algorithm::FixedRate => "fixed_rate",
        }
    }

    /// When its controller must be told of the cells offered to its port.
    pub fn timing(self) -> Timing {
        match self {
            Algorithm::EricaPlus | Algorithm::Erica => Timing::Counted,
            Algorithm::Efci | Algorithm::FixedRate => Timing::PerCell,
        }
    }

    /// What it reports, in order.
    pub fn readings(self) -> &'static [ReadingInfo] {
        match self {
            Algorithm::EricaPlus | Algorithm::Erica => erica::READINGS,
            Algorithm::Efci => efci::READINGS,
            Algorithm::FixedRate => fixed::READINGS,
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
        }
    }

    /// When its controller must be told of the cells offered to its port.
    pub fn timing(&self) -> Timing {
        self.algorithm().timing()
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
        }
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
}

/// `dispatch!(self, c => expr)`: `expr` with `c` the controller of every
/// variant.
macro_rules! dispatch {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Controller::Erica($c) => $e,
            Controller::Efci($c) => $e,
            Controller::FixedRate($c) => $e,
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
        }
    }

    /// When it must be told of the cells offered to its port.
    #[inline]
    pub fn timing(&self) -> Timing {
        self.algorithm().timing()
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
