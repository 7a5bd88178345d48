//! Time series: probes sampled at fixed intervals.
//!
//! A probe watches one quantity of one connection, flow or port and samples
//! it at `t = k * interval` (k = 0, 1, ...; exact, never an accumulated
//! period) for as long as the run lasts. Samples are taken after everything
//! else that happens at the same instant (event class 3). Counting probes
//! (`goodput`, `drops`, `utilization`) report the interval that ends at the
//! sample; the sample at `t = 0` is 0.
//!
//! What a probe can watch is typed by its target ([`ProbeTarget`]): a TCP
//! connection's window or timer, a flow's goodput, a port's queue; the
//! sampling code matches on the target and its quantity, so no kind of probe
//! can fall through to another's reading.

use super::Simulation;
use super::kernel::{Event, PROBE};
use crate::atm::ServiceCategory;
use crate::ids::{ConnId, FlowId, PortId, ProbeId};
use atmlab_engine::{CELL_BITS, Duration, SimTime};
use serde::{Deserialize, Serialize};

/// What a probe measures: the names scenarios and results use.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Cells of ABR VCs queued at a port (instantaneous).
    AbrQueue,
    /// Cells of VBR VCs queued at a port (instantaneous).
    VbrQueue,
    /// An ABR source's allowed cell rate (bit/s of 53-byte cells).
    Acr,
    /// The explicit rate of the last backward RM cell an ABR source
    /// received (bit/s; 0 before the first).
    Er,
    /// An ERICA port's measured CBR and VBR rate of its last interval (bit/s).
    HpRate,
    /// An ERICA port's load factor of its last interval.
    LoadFactor,
    /// An ERICA port's target ABR capacity of its last interval (bit/s).
    AbrCapacity,
    /// An ERICA port's fair share of its last interval (bit/s).
    FairShare,
    /// Cells received from a cell-source application in the interval, as
    /// bit/s of 53-byte cells.
    CellRate,
}

impl ProbeKind {
    /// The unit of the samples.
    pub fn unit(self) -> &'static str {
        match self {
            ProbeKind::Cwnd | ProbeKind::Ssthresh => "bytes",
            ProbeKind::Rto | ProbeKind::Srtt => "s",
            ProbeKind::Goodput => "bit/s",
            ProbeKind::Queue | ProbeKind::Drops | ProbeKind::AbrQueue | ProbeKind::VbrQueue => "cells",
            ProbeKind::Utilization | ProbeKind::LoadFactor => "fraction",
            ProbeKind::Acr
            | ProbeKind::Er
            | ProbeKind::HpRate
            | ProbeKind::AbrCapacity
            | ProbeKind::FairShare
            | ProbeKind::CellRate => "bit/s",
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
            ProbeKind::AbrQueue => "abr_queue",
            ProbeKind::VbrQueue => "vbr_queue",
            ProbeKind::Acr => "acr",
            ProbeKind::Er => "er",
            ProbeKind::HpRate => "hp_rate",
            ProbeKind::LoadFactor => "load_factor",
            ProbeKind::AbrCapacity => "abr_capacity",
            ProbeKind::FairShare => "fair_share",
            ProbeKind::CellRate => "cell_rate",
        }
    }
    /// The quantity of a TCP connection this kind measures, if it measures one.
    pub fn of_connection(self) -> Option<ConnQuantity> {
        match self {
            ProbeKind::Cwnd => Some(ConnQuantity::Cwnd),
            ProbeKind::Ssthresh => Some(ConnQuantity::Ssthresh),
            ProbeKind::Rto => Some(ConnQuantity::Rto),
            ProbeKind::Srtt => Some(ConnQuantity::Srtt),
            ProbeKind::Goodput => Some(ConnQuantity::Goodput),
            _ => None,
        }
    }
    /// Whether this kind measures a UDP flow (its goodput).
    pub fn of_flow(self) -> bool {
        self == ProbeKind::Goodput
    }
    /// The quantity of a port this kind measures, if it measures one.
    pub fn of_port(self) -> Option<PortQuantity> {
        match self {
            ProbeKind::Queue => Some(PortQuantity::Queue),
            ProbeKind::Drops => Some(PortQuantity::Drops),
            ProbeKind::Utilization => Some(PortQuantity::Utilization),
            ProbeKind::AbrQueue => Some(PortQuantity::CategoryQueue(ServiceCategory::Abr)),
            ProbeKind::VbrQueue => Some(PortQuantity::CategoryQueue(ServiceCategory::Vbr)),
            ProbeKind::HpRate => Some(PortQuantity::Reading("high_priority_bps")),
            ProbeKind::LoadFactor => Some(PortQuantity::Reading("load_factor")),
            ProbeKind::AbrCapacity => Some(PortQuantity::Reading("abr_capacity_bps")),
            ProbeKind::FairShare => Some(PortQuantity::Reading("fair_share_bps")),
            _ => None,
        }
    }

    /// The reading of a switch controller this kind samples, if it samples
    /// one (the port's controller must report it).
    pub fn reading(self) -> Option<&'static str> {
        match self.of_port() {
            Some(PortQuantity::Reading(name)) => Some(name),
            _ => None,
        }
    }

    /// The quantity of an ABR source this kind measures, if it measures one.
    pub fn of_abr(self) -> Option<AbrQuantity> {
        match self {
            ProbeKind::Acr => Some(AbrQuantity::Acr),
            ProbeKind::Er => Some(AbrQuantity::Er),
            _ => None,
        }
    }

    /// Whether this kind measures a cell-source application (its cell rate).
    pub fn of_cell_app(self) -> bool {
        self == ProbeKind::CellRate
    }
}

/// What a probe can measure of a TCP connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ConnQuantity {
    /// Congestion window.
    Cwnd,
    /// Slow-start threshold.
    Ssthresh,
    /// Retransmission timeout.
    Rto,
    /// Smoothed round-trip time.
    Srtt,
    /// Goodput at the receiver.
    Goodput,
}

/// What a probe can measure of an output port.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PortQuantity {
    /// Cells queued.
    Queue,
    /// Cells dropped.
    Drops,
    /// Share of slots used.
    Utilization,
    /// Cells of one service category queued.
    CategoryQueue(ServiceCategory),
    /// A reading of the port's switch controller, by name
    /// (`crate::abr::control::Algorithm::readings`).
    Reading(&'static str),
}

/// What a probe can measure of an ABR source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AbrQuantity {
    /// Allowed cell rate.
    Acr,
    /// The last explicit rate received.
    Er,
}

/// What a probe watches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ProbeTarget {
    /// A quantity of a TCP connection.
    Conn(ConnId, ConnQuantity),
    /// The goodput of a UDP flow.
    Flow(FlowId),
    /// A quantity of an output port.
    Port(PortId, PortQuantity),
    /// A quantity of an ABR source (an index into the ABR ends).
    Abr(u32, AbrQuantity),
    /// The received cell rate of a cell-source application.
    CellApp(u32),
}

impl ProbeTarget {
    /// The kind of the samples, for results.
    pub fn kind(self) -> ProbeKind {
        match self {
            ProbeTarget::Conn(_, q) => match q {
                ConnQuantity::Cwnd => ProbeKind::Cwnd,
                ConnQuantity::Ssthresh => ProbeKind::Ssthresh,
                ConnQuantity::Rto => ProbeKind::Rto,
                ConnQuantity::Srtt => ProbeKind::Srtt,
                ConnQuantity::Goodput => ProbeKind::Goodput,
            },
            ProbeTarget::Flow(_) => ProbeKind::Goodput,
            ProbeTarget::Port(_, q) => match q {
                PortQuantity::Queue => ProbeKind::Queue,
                PortQuantity::Drops => ProbeKind::Drops,
                PortQuantity::Utilization => ProbeKind::Utilization,
                PortQuantity::CategoryQueue(ServiceCategory::Vbr) => ProbeKind::VbrQueue,
                PortQuantity::CategoryQueue(_) => ProbeKind::AbrQueue,
                PortQuantity::Reading(name) => match name {
                    "high_priority_bps" => ProbeKind::HpRate,
                    "load_factor" => ProbeKind::LoadFactor,
                    "abr_capacity_bps" => ProbeKind::AbrCapacity,
                    "fair_share_bps" => ProbeKind::FairShare,
                    other => unreachable!("no probe kind samples the reading {other}"),
                },
            },
            ProbeTarget::Abr(_, AbrQuantity::Acr) => ProbeKind::Acr,
            ProbeTarget::Abr(_, AbrQuantity::Er) => ProbeKind::Er,
            ProbeTarget::CellApp(_) => ProbeKind::CellRate,
        }
    }
}

/// A probe as the scenario asks for it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    /// Name of the series.
    pub name: String,
    /// What it watches.
    pub target: ProbeTarget,
    /// Time between samples.
    pub interval: Duration,
}

/// A probe and its samples.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    spec: ProbeSpec,
    /// Samples taken so far.
    next: u64,
    /// A counting probe's total at the previous sample.
    last: u64,
    /// Utilization: the port's slots counted at the previous sample.
    last_slots: u64,
    times_ps: Vec<u64>,
    values: Vec<f64>,
}

impl Probe {
    fn new(spec: ProbeSpec) -> Probe {
        Probe { spec, next: 0, last: 0, last_slots: 0, times_ps: Vec::new(), values: Vec::new() }
    }

    /// When the next sample is taken (`SimTime::MAX`: never).
    fn next_at(&self) -> SimTime {
        self.spec.interval.checked_mul(self.next).and_then(|d| SimTime::ZERO.checked_add(d)).unwrap_or(SimTime::MAX)
    }

    /// A counter's increase since the previous sample (0 at the first).
    fn delta(&mut self, total: u64) -> u64 {
        let d = total - std::mem::replace(&mut self.last, total);
        if self.next == 0 { 0 } else { d }
    }

    /// A byte counter's increase as bit/s over the interval.
    fn rate_bps(&mut self, bytes: u64) -> f64 {
        self.delta(bytes) as f64 * 8.0 / self.spec.interval.as_secs_f64()
    }
}

/// What a part answers when a probe asks for its quantity: the one thing
/// that crosses from the part watched to the probe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Sample {
    /// A level now (cells, bytes, seconds, bit/s).
    Level(f64),
    /// A byte counter: the probe reports its increase over the interval as bit/s.
    Bytes(u64),
    /// A cell counter: its increase over the interval as bit/s of cells.
    Cells(u64),
    /// A counter: its increase over the interval.
    Count(u64),
    /// A port's cells started and slots started, both counted strictly
    /// before now: their increases' ratio, at most 1.
    Utilization { sent: u64, slots: u64 },
}

impl Probe {
    /// Takes `sample` at `now`: its value is stored; returns when the next
    /// sample is due, if ever.
    fn record(&mut self, now: SimTime, sample: Sample) -> Option<SimTime> {
        let value = match sample {
            Sample::Level(v) => v,
            Sample::Bytes(total) => self.rate_bps(total),
            Sample::Cells(total) => self.delta(total) as f64 * CELL_BITS as f64 / self.spec.interval.as_secs_f64(),
            Sample::Count(total) => self.delta(total) as f64,
            Sample::Utilization { sent, slots } => {
                let sent = self.delta(sent);
                let offered = slots - std::mem::replace(&mut self.last_slots, slots);
                if offered == 0 { 0.0 } else { sent as f64 / offered as f64 }
            }
        };
        self.times_ps.push(now.as_ps());
        self.values.push(value);
        self.next += 1;
        let t = self.next_at();
        (t != SimTime::MAX).then_some(t)
    }
}

/// The probes of a run and the series they take.
pub(super) struct Probes {
    list: Vec<Probe>,
}

impl Probes {
    pub(super) fn new(specs: Vec<ProbeSpec>) -> Probes {
        Probes { list: specs.into_iter().map(Probe::new).collect() }
    }

    /// What each probe watches, by its index.
    pub(super) fn targets(&self) -> impl Iterator<Item = ProbeTarget> + '_ {
        self.list.iter().map(|p| p.spec.target)
    }

    /// When the next sample of any probe is due (`SimTime::MAX`: never).
    pub(super) fn next_due(&self) -> SimTime {
        self.list.iter().map(Probe::next_at).min().unwrap_or(SimTime::MAX)
    }

    /// The samples taken so far, in all.
    pub(super) fn samples(&self) -> u64 {
        self.list.iter().map(|p| p.values.len() as u64).sum()
    }

    /// The series, each named after what `target_name` calls its target.
    pub(super) fn results(&self, target_name: impl Fn(ProbeTarget) -> String) -> Vec<super::SeriesResult> {
        self.list
            .iter()
            .map(|p| super::SeriesResult {
                name: p.spec.name.clone(),
                kind: p.spec.target.kind().name(),
                target: target_name(p.spec.target),
                unit: p.spec.target.kind().unit(),
                t_s: p.times_ps.iter().map(|t| *t as f64 / 1e12).collect(),
                values: p.values.clone(),
            })
            .collect()
    }
}

impl Simulation {
    /// Probe `i` takes its sample now, from the part that owns what it
    /// watches, and schedules the next.
    pub(super) fn on_probe(&mut self, i: ProbeId) {
        let now = self.k.now;
        let target = self.probes.list[i.0 as usize].spec.target;
        // Probes come after everything at an instant: arrivals and slots too.
        let port = match target {
            ProbeTarget::Port(q, _) => Some(q),
            _ => None,
        };
        self.settle(now, None, super::settle::Reader::Probe(port));
        let sample = match target {
            ProbeTarget::Conn(c, q) => self.transport.sample_conn(c, q),
            ProbeTarget::Flow(f) => self.transport.sample_flow(f),
            ProbeTarget::Abr(e, q) => self.abr.sample(e, q),
            ProbeTarget::CellApp(a) => self.sources.sample_app(a, now),
            ProbeTarget::Port(q, PortQuantity::Reading(name)) => self.control.sample(q, name),
            ProbeTarget::Port(q, pq) => self.net.sample_port(q, pq, now),
        };
        if let Some(t) = self.probes.list[i.0 as usize].record(now, sample) {
            self.k.queue.push(t, PROBE, Event::Probe(i));
        }
    }
}
