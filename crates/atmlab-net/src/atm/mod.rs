//! The ATM layer: cells, service categories, output ports with their
//! buffer-acceptance policies and schedulers, and switches.

mod accept;
mod category;
mod cell;
mod gcra;
mod port;
mod sched;
mod switch;

pub use accept::{
    AcceptancePolicy, AdmitContext, BufferAcceptance, Epd, Fba, OverflowAction, Ppd, SelectiveDrop, TailDrop, Verdict,
};
pub use category::ServiceCategory;
pub use cell::{CELL_PAYLOAD, CELL_SIZE, Cell, Pti, VcLabel};
pub use gcra::{Conformance, Contract, Gcra, LeakyBucket, Policed, Policer, PolicerStats, Shaper, UpcAction};
pub use port::{
    CategoryCounts, DropReason, LinkLoss, NO_UPC, NextHop, Offer, Port, PortConfig, PortMode, PortStats, PortVc,
    Queueing, Transmission,
};
pub use sched::{GuaranteedRate, Scheduler, SchedulerKind, StrictPriority};
pub use switch::{Switch, VcRoute};
