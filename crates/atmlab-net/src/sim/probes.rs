//! Time series: probes sampled at fixed intervals.
//!
//! A probe watches one quantity of one connection, flow or port and samples
//! it at `t = k * interval` (k = 0, 1, ...; exact, never an accumulated
//! period) for as long as the run lasts. Samples are taken after everything
//! else that happens at the same instant (event class 3). Counting probes
//! (`goodput`, `drops`, `utilization`) report the interval that ends at the
//! sample; the sample at `t = 0` is 0.

use crate::ids::{ConnId, FlowId, PortId};
use atmlab_engine::Duration;
use serde::{Deserialize, Serialize};

/// What a probe measures.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// TCP congestion window (bytes, without fast-recovery inflation).
    Cwnd,
    /// TCP slow-start threshold (bytes).
    Ssthresh,
    /// TCP retransmission timeout the sender would arm now, backoff
    /// included (seconds).
    Rto,
    /// TCP smoothed round-trip time (seconds; 0 before the first sample).
    Srtt,
    /// Bytes delivered to the receiving application in the interval, as
    /// bit/s (TCP connection or UDP flow).
    Goodput,
    /// Cells queued at a port (instantaneous).
    Queue,
    /// Cells dropped at a port in the interval.
    Drops,
    /// Fraction of a port's cell slots used in the interval.
    Utilization,
}

impl ProbeKind {
    /// The unit of the samples.
    pub fn unit(self) -> &'static str {
        match self {
            ProbeKind::Cwnd | ProbeKind::Ssthresh => "bytes",
            ProbeKind::Rto | ProbeKind::Srtt => "s",
            ProbeKind::Goodput => "bit/s",
            ProbeKind::Queue | ProbeKind::Drops => "cells",
            ProbeKind::Utilization => "fraction",
        }
    }
    /// The name used in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Cwnd => "cwnd",
            ProbeKind::Ssthresh => "ssthresh",
            ProbeKind::Rto => "rto",
            ProbeKind::Srtt => "srtt",
            ProbeKind::Goodput => "goodput",
            ProbeKind::Queue => "queue",
            ProbeKind::Drops => "drops",
            ProbeKind::Utilization => "utilization",
        }
    }
}

/// What a probe watches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ProbeTarget {
    /// A TCP connection.
    Conn(ConnId),
    /// A UDP flow.
    Flow(FlowId),
    /// An output port.
    Port(PortId),
}

/// A probe as the scenario asks for it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    /// Name of the series.
    pub name: String,
    /// What it measures.
    pub kind: ProbeKind,
    /// Of what.
    pub target: ProbeTarget,
    /// Time between samples.
    pub interval: Duration,
}

/// A probe and its samples.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    pub spec: ProbeSpec,
    pub next: u64,
    pub last: u64,
    /// Utilization: the port's slots counted at the previous sample.
    pub last_slots: u64,
    pub times_ps: Vec<u64>,
    pub values: Vec<f64>,
}

impl Probe {
    pub fn new(spec: ProbeSpec) -> Probe {
        Probe { spec, next: 0, last: 0, last_slots: 0, times_ps: Vec::new(), values: Vec::new() }
    }
}
