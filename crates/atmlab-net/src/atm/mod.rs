//! The ATM layer: cells, service categories, output ports with their
//! drop policies and schedulers, and switches.

mod category;
mod cell;
mod drop_policy;
mod gcra;
mod port;
mod runs;
mod sched;
mod switch;

pub use category::ServiceCategory;
pub use cell::{CELL_PAYLOAD, CELL_SIZE, Carries, Cell, Pti, VcLabel};
pub use drop_policy::{
    AdmissionRule, AdmitContext, DropPolicy, Epd, Fba, OverflowAction, Ppd, SelectiveDrop, TailDrop, Verdict,
};
pub use gcra::{Conformance, Contract, Gcra, LeakyBucket, Policed, Policer, PolicerStats, Shaper, UpcAction};
pub use port::{
    CategoryCounts, DropReason, LinkLoss, NO_UPC, NextHop, Offer, PieceFrom, PieceTaken, Port, PortConfig, PortMode,
    PortStats, PortVc, Queueing, Transmission,
};
pub use runs::{ArrivalRun, DepartureRun, RoundRobinRuns};
pub use sched::{GuaranteedRate, Scheduler, SchedulerKind, StrictPriority};
pub use switch::{Switch, VcRoute};
