//! ABR: the Available Bit Rate service (ATM Forum TM 4.0): sources whose
//! rate a switch sets explicitly with resource-management (RM) cells.
//!
//! Every part is a sans-I/O state machine (no events, no cells moved): the
//! simulation (`sim/abr.rs`) feeds them what happens and acts on what they
//! return, as it does with TCP.
//!
//! * [`rm`]: the fields of an RM cell (rates as exact f64 cells/s, not the
//!   16-bit format of I.371);
//! * [`source`]: the source end system, rules 1-13 (ACR, in-rate FRMs every
//!   Nrm cells, use-it-or-lose-it, missing feedback, out-of-rate FRMs);
//! * [`destination`]: the destination end system (FRM turnaround, CI from
//!   EFCI);
//! * [`control`]: the ABR controller of a switch output port: what it is
//!   told and what it may do ([`control::SwitchControl`]), and the
//!   algorithms: ERICA and ERICA+ ([`control::erica`]: averaging intervals,
//!   load factor, fair share, VC share, max-min fix, ERICA+'s queue control,
//!   writing ER into backward RM cells), EFCI marking ([`control::efci`]),
//!   a fixed explicit rate ([`control::fixed`]).
//!
//! Rates are `f64` cells per second throughout (exact enough: ER and ACR are
//! compared and multiplied, never accumulated over long runs); times are
//! the engine's integer picoseconds.

pub mod control;
pub mod destination;
pub mod rm;
pub mod source;

pub use rm::{Direction, RmCell};
