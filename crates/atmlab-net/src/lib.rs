//! # atmlab-net
//!
//! The network models of atmlab, layered as the protocol stack:
//!
//! * [`atm`]: cells, service categories, output ports with pluggable buffer
//!   acceptance ([`atm::AdmissionRule`]) and scheduling
//!   ([`atm::Scheduler`]), switches with VC tables;
//! * [`aal5`]: AAL5 segmentation sizes, RFC 1483 encapsulation, reassembly;
//! * [`abr`]: the ABR service: RM cells, source and destination end systems,
//!   the ERICA/ERICA+ switch algorithms (sans-I/O);
//! * [`pdu`]: the table of PDUs in flight that cells refer to;
//! * [`tcp`]: the 1990s TCP variants as sans-I/O state machines;
//! * [`sim`]: the simulation (hosts, applications, the event loop, metrics).

pub mod aal5;
pub mod abr;
pub mod atm;
pub mod ids;
pub mod ip;
pub mod pdu;
pub mod sim;
pub mod tcp;
