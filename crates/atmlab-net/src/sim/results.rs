//! What a run reports, and the conservation check every run must pass.
//!
//! Metric definitions follow the studies (see docs/models/metrics.md):
//!
//! * **goodput** of a connection: bytes delivered in order to the receiving
//!   application, times 8, over the run's duration (97-0424 s4.2);
//! * **efficiency**: the sum of goodputs over the largest TCP payload rate
//!   the reference link can carry, `rate x mss / (cells x 53)` (80.5% of the
//!   cell rate for MSS 512 with LLC/SNAP);
//! * **fairness**: Jain's index of the goodputs;
//! * **cell loss ratio**: cells dropped at switch ports over cells offered to
//!   switch ports.
//!
//! The result types derive a JSON Schema (`atmlab._core.result_schema()`):
//! the one list of every metric's name, type and meaning, from which the
//! Python side takes what it stores, tabulates and plots. `x-identity` marks
//! the fields that identify a run rather than measure it; `x-key` the field
//! that names a row of a per-connection, -flow, -port or -host table.

use super::Simulation;
use super::probes::ProbeTarget;
use crate::aal5::tcp_payload_efficiency;
use atmlab_engine::{CELL_BITS, jain_fairness};
use serde::Serialize;
use thiserror::Error;

/// A run that could not produce a valid result.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SimulationError {
    /// The cell accounting does not balance: a model bug, never a user error.
    #[error("cell conservation violated: {0}")]
    Conservation(String),
    /// The run was stopped by the memory guard (`simulation.max_cells_held`).
    #[error("{0}")]
    Limit(String),
    /// A packet capture file could not be written.
    #[error("packet capture: {0}")]
    Capture(String),
    /// The trace file could not be written.
    #[error("trace: {0}")]
    Trace(String),
}

/// The capacity the efficiency is measured against.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct EfficiencyBasis {
    /// The reference port (`from->to`).
    pub link: String,
    /// Its cell rate in bit/s.
    pub link_rate_bps: u64,
    /// Mean rate of the ON/OFF sources crossing it, subtracted from the
    /// capacity (0 with `efficiency_capacity = "link"`).
    pub background_bps: f64,
    /// Largest fraction of the cell rate TCP payload can use.
    pub payload_fraction: f64,
    /// `(link_rate_bps - background_bps) x payload_fraction`.
    pub max_goodput_bps: f64,
}

/// One policer's results.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct UpcResult {
    /// The VC's name.
    #[schemars(extend("x-key" = true))]
    pub vc: String,
    /// The switch at whose ingress it polices.
    pub at: String,
    /// `cbr.1`, `vbr.1`, `vbr.2` or `vbr.3`.
    pub conformance: &'static str,
    /// Cells tested.
    pub cells: u64,
    /// Cells tagged (CLP := 1).
    pub tagged: u64,
    /// Cells discarded.
    pub discarded: u64,
}

/// One application of cell sources (one source, or several multiplexed on
/// its VC).
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct CellSourceResult {
    /// Application name.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// Sources multiplexed on its VC.
    pub sources: u64,
    /// The highest rate its sources may send at together, bit/s (ON/OFF:
    /// the rate while ON).
    pub peak_bps: u64,
    /// Nominal mean rate, bit/s (ON/OFF: peak x on / period; piecewise: the
    /// mean of its sources' rates).
    pub mean_bps: f64,
    /// Cells sent.
    pub cells_sent: u64,
    /// Cells received.
    pub cells_received: u64,
    /// Cells received x 424 bits over the duration.
    pub throughput_bps: f64,
}

/// One TCP connection's results.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ConnectionResult {
    /// Application name.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// TCP variant of the sender.
    pub variant: &'static str,
    /// Segment size.
    pub mss: u32,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// `bytes_delivered x 8 / duration`.
    pub goodput_bps: f64,
    /// Data segments sent (retransmissions included).
    pub segments_sent: u64,
    /// Data segments sent again.
    pub retransmitted_segments: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Duplicate ACKs the sender received: no data, the same
    /// acknowledgement and window as before, data outstanding (what
    /// tshark's `tcp.analysis.duplicate_ack` flags on its link).
    pub dupacks_received: u64,
    /// Congestion window at the end, bytes.
    pub final_cwnd_bytes: u64,
    /// Slow-start threshold at the end, bytes.
    pub final_ssthresh_bytes: u64,
    /// Smoothed RTT at the end, seconds.
    pub srtt_s: Option<f64>,
    /// When a finite transfer completed, seconds.
    pub completed_at_s: Option<f64>,
    /// When the application opened the connection, s.
    pub started_at_s: f64,
    /// Of a finite transfer that completed: bytes delivered / (completion -
    /// start), bit/s (what ttcp reports).
    pub transfer_throughput_bps: Option<f64>,
}

/// One UDP flow's results.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct UdpFlowResult {
    /// Application name.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// The sending program refused the payload size (nothing was sent).
    pub refused: bool,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// IP fragments sent (equal to `sent` unless datagrams exceed the MTU).
    pub fragments_sent: u64,
    /// Datagrams lost (sent, not received, not in flight at the end).
    pub lost: u64,
    /// Received user bytes x 8 over the duration.
    pub throughput_bps: f64,
    /// Mean one-way delay, seconds.
    pub mean_delay_s: Option<f64>,
    /// Largest one-way delay, seconds.
    pub max_delay_s: Option<f64>,
    /// Smallest one-way delay, seconds.
    pub min_delay_s: Option<f64>,
    /// Largest less smallest one-way delay, seconds: the peak-to-peak delay
    /// variation (the 2-point CDV of ITU-T I.356, over datagrams).
    pub delay_variation_s: Option<f64>,
    /// User bytes received / (last reception - first send), bit/s: the
    /// throughput over the flow's own session, however long it was stretched.
    pub session_throughput_bps: Option<f64>,
    /// Frames whose arrival times were recorded (`record_arrivals`).
    pub arrivals_recorded: u64,
    /// Mean time between recorded arrivals, s.
    pub interarrival_mean_s: Option<f64>,
    /// Standard deviation (population) of the times between recorded
    /// arrivals, s.
    pub interarrival_std_s: Option<f64>,
}

/// One output port's results.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct PortResult {
    /// `from->to`.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// `"switch"` or `"host"`.
    pub kind: &'static str,
    /// The link's rate, bit/s (its nominal rate unless a clock tolerance is set).
    pub rate_bps: u64,
    /// Cells offered.
    pub cells_in: u64,
    /// Cells sent.
    pub cells_out: u64,
    /// Cells dropped.
    pub dropped: u64,
    /// Of those, because the buffer was full.
    pub dropped_overflow: u64,
    /// Of those, by frame discard (EPD refusals, PPD tails).
    pub dropped_frame: u64,
    /// Of those, tagged cells at the CLP threshold.
    pub dropped_clp: u64,
    /// Cells sent but lost on the link (loss injection).
    pub lost_on_link: u64,
    /// Largest queue, cells.
    pub max_queue: u64,
    /// Time-averaged queue, cells.
    pub mean_queue: f64,
    /// Fraction of cell slots used.
    pub utilization: f64,
    /// Per service category (those with traffic): cells offered and
    /// dropped, largest and mean queue.
    pub categories: std::collections::BTreeMap<&'static str, CategoryResult>,
}

/// One service category's traffic at one port.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct CategoryResult {
    /// Cells offered.
    pub cells_in: u64,
    /// Cells dropped.
    pub dropped: u64,
    /// Largest queue of the category, cells.
    pub max_queue: u64,
    /// Time-averaged queue of the category, cells.
    pub mean_queue: f64,
}

/// One ABR source (one direction of an ABR VC) and the destination
/// opposite it at the same host.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct AbrResult {
    /// `"<vc>:forward"` (sent by the VC's first host) or `"<vc>:backward"`;
    /// `"<vc>:forward@<switch>"` or `"<vc>:backward@<switch>"` at a VS/VD
    /// switch.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// The host (or VS/VD switch) whose source this is.
    pub host: String,
    /// Allowed cell rate at the end, bit/s of 53-byte cells.
    pub acr_bps: f64,
    /// Time-averaged allowed cell rate, bit/s.
    pub mean_acr_bps: f64,
    /// The explicit rate of the last backward RM cell received, bit/s.
    pub last_er_bps: Option<f64>,
    /// Data cells sent in rate.
    pub data_cells: u64,
    /// Forward RM cells sent in rate.
    pub frms_in_rate: u64,
    /// Forward RM cells sent out of rate (ACR below TCR, rule 11).
    pub frms_out_of_rate: u64,
    /// Backward RM cells received (the feedback of this direction).
    pub brms_received: u64,
    /// Turned-around RM cells sent back for the other direction.
    pub brms_sent: u64,
    /// Turned-around RM cells overwritten by a newer one before they left.
    pub brms_overwritten: u64,
    /// ACR cuts to ICR by rule 5 (idle longer than ADTF).
    pub adtf_cuts: u64,
    /// ACR cuts by rule 6 (CRM forward RM cells without feedback).
    pub crm_cuts: u64,
    /// Data cells still waiting for their rate at the end.
    pub cells_waiting: u64,
    /// The most data cells that ever waited for their rate (at a VS/VD
    /// switch: its per-VC queue).
    pub max_cells_waiting: u64,
}

/// The ABR controller of one switch output port: its algorithm and its
/// readings at the end of the run (ERICA's as of its last averaging
/// interval), each under its own name.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct AbrPortResult {
    /// The port.
    #[schemars(extend("x-key" = true))]
    pub port: String,
    /// The algorithm: `erica_plus`, `erica`, `efci`, `fixed_rate`.
    pub algorithm: &'static str,
    /// The algorithm's readings (`crate::abr::control::Algorithm::readings`).
    #[serde(flatten)]
    pub readings: Readings,
}

/// A controller's readings, written as the fields of its port's result
/// (`"load_factor": 1.02`, `"efci_marked": 40`): the schema lists every
/// reading of every algorithm, each present only for the algorithms that
/// report it.
#[derive(Clone, Debug, PartialEq)]
pub struct Readings(pub Vec<crate::abr::control::Reading>);

impl Serialize for Readings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for r in &self.0 {
            let info = crate::abr::control::Algorithm::all_readings().into_iter().find(|i| i.name == r.name);
            match (r.value, info.is_some_and(|i| i.integer)) {
                (Some(v), true) => map.serialize_entry(r.name, &(v as u64))?,
                (v, _) => map.serialize_entry(r.name, &v)?,
            }
        }
        map.end()
    }
}

impl schemars::JsonSchema for Readings {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Readings".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut properties = serde_json::Map::new();
        for r in crate::abr::control::Algorithm::all_readings() {
            let users: Vec<&str> = crate::abr::control::Algorithm::ALL
                .into_iter()
                .filter(|a| a.readings().iter().any(|x| x.name == r.name))
                .map(|a| a.name())
                .collect();
            let kind = if r.integer { "integer" } else { "number" };
            properties.insert(
                r.name.into(),
                serde_json::json!({
                    "type": [kind, "null"],
                    "description": format!("{} Reported by: {}.", r.description, users.join(", ")),
                }),
            );
        }
        schemars::json_schema!({ "type": "object", "properties": properties })
    }
}

/// One probe's time series.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SeriesResult {
    /// The probe's name.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// What it measures (`cwnd`, `queue`, ...).
    pub kind: &'static str,
    /// The connection, flow or port it watches.
    pub target: String,
    /// Unit of the values.
    pub unit: &'static str,
    /// Sample times, seconds.
    pub t_s: Vec<f64>,
    /// Sample values.
    pub values: Vec<f64>,
}

/// Frame (AAL5 PDU) counts over all senders and receivers.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct FrameCounts {
    /// Frames sent.
    pub sent: u64,
    /// Frames delivered.
    pub delivered: u64,
    /// Frames lost (a cell dropped, or merged with another frame).
    pub lost: u64,
    /// Frames still in the network at the end.
    pub in_flight: u64,
    /// Frames the receivers' AAL5 discarded as corrupt.
    pub discarded_by_receivers: u64,
    /// Cells of those frames that reached the receivers.
    pub dead_cells: u64,
}

/// Everything a run reports.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RunResult {
    /// Scenario name.
    #[schemars(extend("x-identity" = true))]
    pub scenario: String,
    /// Master seed.
    #[schemars(extend("x-identity" = true))]
    pub seed: u64,
    /// Replication index.
    #[schemars(extend("x-identity" = true))]
    pub replication: u64,
    /// Simulated time, seconds.
    #[schemars(extend("x-identity" = true))]
    pub duration_s: f64,
    /// Efficiency (97-0424 s4.2), if the run has TCP connections.
    pub efficiency: Option<f64>,
    /// Jain's fairness index of the TCP goodputs.
    pub fairness: Option<f64>,
    /// The reference of the efficiency.
    pub efficiency_basis: Option<EfficiencyBasis>,
    /// Sum of TCP goodputs, bit/s.
    pub tcp_goodput_bps: f64,
    /// Cells dropped at switch ports / cells offered to switch ports.
    pub cell_loss_ratio: f64,
    /// Cells offered to switch ports.
    pub switch_cells_offered: u64,
    /// Cells dropped at switch ports.
    pub switch_cells_dropped: u64,
    /// Cells lost on links (loss injection).
    pub link_cells_lost: u64,
    /// Frame counts.
    pub frames: FrameCounts,
    /// TCP connections.
    pub connections: Vec<ConnectionResult>,
    /// UDP flows.
    pub udp_flows: Vec<UdpFlowResult>,
    /// Applications of cell sources (ON/OFF and piecewise).
    pub cell_sources: Vec<CellSourceResult>,
    /// ABR end systems: the source of each direction of each ABR VC.
    pub abr: Vec<AbrResult>,
    /// ABR controllers of switch ports (ERICA, ERICA+, EFCI).
    pub abr_ports: Vec<AbrPortResult>,
    /// Usage parameter control, one entry per policed VC.
    pub upc: Vec<UpcResult>,
    /// Output ports (hosts' adapters and switch ports).
    pub ports: Vec<PortResult>,
    /// End systems.
    pub hosts: Vec<HostResult>,
    /// Time series of the scenario's probes.
    pub series: Vec<SeriesResult>,
    /// Cells that crossed a link.
    pub cell_hops: u64,
    /// Events processed.
    pub events: u64,
}

pub(super) fn secs(ps: u128) -> f64 {
    ps as f64 / 1e12
}

/// Mean and population standard deviation of the gaps between successive
/// times, s (at least two times).
pub(super) fn interarrival(times: &[atmlab_engine::SimTime]) -> Option<(f64, f64)> {
    let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    if gaps.is_empty() {
        return None;
    }
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n;
    Some((mean, var.sqrt()))
}

/// One host's end-system counters.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct HostResult {
    /// The host.
    #[schemars(extend("x-key" = true))]
    pub name: String,
    /// Cells that arrived.
    pub cells_received: u64,
    /// Good AAL5 frames reassembled.
    pub frames_received: u64,
    /// Frames AAL5 discarded (corrupted: missing cells, merged frames).
    pub frames_discarded: u64,
    /// Cells of discarded frames that reached the host ("dead cells").
    pub dead_cells: u64,
    /// Discarded frames / all frames received (the AAL5 frame error ratio).
    pub frame_error_ratio: f64,
    /// Dead cells / cells received.
    pub dead_cell_ratio: f64,
    /// Datagrams the sending side handed to the adapter.
    pub datagrams_sent: u64,
    /// Datagrams lost because the adapter buffer was full.
    pub adapter_dropped: u64,
    /// Datagrams the receiving side dropped (input queue full).
    pub receive_dropped: u64,
}

impl Simulation {
    /// The run's results, gathered from the parts that own them, after the
    /// conservation check.
    pub(super) fn finish(self) -> Result<RunResult, SimulationError> {
        self.check_conservation()?;
        let dur = (self.k.end - atmlab_engine::SimTime::ZERO).as_secs_f64();
        let host_name = |h: crate::ids::HostId| self.hosts.name(h).to_owned();

        let connections = self.transport.connection_results(dur, &host_name);
        let goodputs: Vec<f64> = connections.iter().map(|c| c.goodput_bps).collect();
        let tcp_goodput_bps: f64 = goodputs.iter().sum();
        let efficiency_basis = self.efficiency_basis(dur);
        let efficiency = efficiency_basis.as_ref().map(|b| tcp_goodput_bps / b.max_goodput_bps);
        let udp_flows = self.transport.flow_results(dur, &host_name, |f| self.udp_in_flight(f));
        let mut cell_sources = self.sources.results(dur, &host_name);
        for (app, sent, pcr) in self.abr.persistent_sent() {
            // A persistent ABR source: its cells are counted where they are
            // made, at the ABR end; it offers up to its PCR.
            let r = &mut cell_sources[app as usize];
            (r.sources, r.cells_sent) = (1, sent);
            r.peak_bps = (pcr * atmlab_engine::CELL_BITS as f64).round() as u64;
            r.mean_bps = r.peak_bps as f64;
        }
        let ports = self.net.port_results(self.k.end);
        let (offered, dropped) =
            ports.iter().filter(|p| p.kind == "switch").fold((0, 0), |(o, d), p| (o + p.cells_in, d + p.dropped));
        let link_cells_lost = ports.iter().map(|p| p.lost_on_link).sum();
        let series = self.probes.results(|target| match target {
            ProbeTarget::Conn(c, _) => self.transport.conn_name(c).to_owned(),
            ProbeTarget::Flow(f) => self.transport.flow_name(f).to_owned(),
            ProbeTarget::Port(q, _) => self.net.port_name(q).to_owned(),
            ProbeTarget::Abr(e, _) => self.abr.name(e).to_owned(),
            ProbeTarget::CellApp(a) => self.sources.app_name(a).to_owned(),
        });
        let counts = self.tables.pdus.counts();
        let hosts = self.hosts.results();
        let (discarded, dead) = hosts.iter().fold((0, 0), |(f, c), h| (f + h.frames_discarded, c + h.dead_cells));
        let held_frames = self.abr.frames_held();
        Ok(RunResult {
            scenario: self.meta.scenario.clone(),
            seed: self.meta.seed,
            replication: self.meta.replication,
            duration_s: dur,
            efficiency,
            fairness: jain_fairness(&goodputs),
            efficiency_basis,
            tcp_goodput_bps,
            cell_loss_ratio: if offered == 0 { 0.0 } else { dropped as f64 / offered as f64 },
            switch_cells_offered: offered,
            switch_cells_dropped: dropped,
            link_cells_lost,
            // Frames held at ABR ends have no PDU entry yet (`sim/abr.rs`).
            frames: FrameCounts {
                sent: counts.created + held_frames,
                delivered: counts.delivered,
                lost: counts.lost,
                in_flight: self.tables.frames_in_flight() + held_frames,
                discarded_by_receivers: discarded,
                dead_cells: dead,
            },
            connections,
            udp_flows,
            cell_sources,
            abr: self.abr_results(),
            abr_ports: self.control_results(),
            upc: self.net.upc_results(),
            ports,
            hosts,
            series,
            cell_hops: self.k.counts.cell_hops,
            events: self.k.counts.events,
        })
    }

    /// What the efficiency metric refers to: the reference link's rate, the
    /// background traffic through it and the largest share of a cell that
    /// TCP payload can fill (`None` without TCP or a reference link).
    fn efficiency_basis(&self, dur: f64) -> Option<EfficiencyBasis> {
        let p = self.efficiency.port.filter(|_| self.transport.has_connections())?;
        // An ABR VC spends one in-rate cell in Nrm on forward RM cells.
        let rm_share =
            |src: super::VcEnd| self.hosts.abr_end(src).map_or(1.0, |e| 1.0 - 1.0 / f64::from(self.abr.nrm(e)));
        let payload_fraction = self
            .transport
            .senders()
            .map(|(src, mss)| tcp_payload_efficiency(mss, self.hosts.encapsulation(src.host)) * rm_share(src))
            .fold(0.0, f64::max);
        let background_bps = match self.efficiency.capacity {
            super::EfficiencyCapacity::Link => 0.0,
            super::EfficiencyCapacity::LeftByOnoff => self.sources.mean_bps_through(p),
            super::EfficiencyCapacity::LeftByMeasured => {
                self.sources.received_through(p) as f64 * CELL_BITS as f64 / dur
            }
        };
        let (link, rate) = self.net.link(p);
        Some(EfficiencyBasis {
            link: link.to_owned(),
            link_rate_bps: rate.bps(),
            background_bps,
            payload_fraction,
            max_goodput_bps: (rate.bps() as f64 - background_bps).max(0.0) * payload_fraction,
        })
    }

    /// Datagrams of flow `f` with a fragment still on its way: in the
    /// network, waiting for a sending CPU, or waiting for a receiving one.
    fn udp_in_flight(&self, f: u32) -> u64 {
        use super::datagram::{Datagram, Endpoint};
        let target = Endpoint::UdpSink(f);
        let seq = |d: &Datagram| if d.dest == target { d.payload.udp_seq() } else { None };
        let network = self.tables.pdus.live().filter(|p| !p.is_delivered()).filter_map(|p| seq(&p.payload));
        let held = self.abr.datagrams_held().filter_map(seq);
        let at_hosts = self.hosts.datagrams_waiting().filter_map(seq);
        let seqs: std::collections::BTreeSet<u64> = network.chain(held).chain(at_hosts).collect();
        seqs.len() as u64
    }

    /// Cells offered to every port = sent + dropped + queued, and every cell
    /// ever created is received, dropped, queued or on a link.
    fn check_conservation(&self) -> Result<(), SimulationError> {
        let super::network::LinkTotals { dropped, queued, on_links, sent, lost } = self.net.conservation()?;
        // RM cells that ended at a VS/VD switch count as received there.
        let received: u64 = self.hosts.cells_received() + self.k.counts.rm_absorbed;
        let arrived_over_links = self.k.counts.cell_hops;
        if sent != arrived_over_links + on_links + lost {
            return Err(SimulationError::Conservation(format!(
                "links: {sent} cells sent != {arrived_over_links} arrived + {on_links} in flight + {lost} lost"
            )));
        }
        let policed = self.k.counts.policed;
        let at_abr = self.abr.waiting_cells();
        if self.k.counts.cells_created != received + dropped + lost + policed + queued + on_links + at_abr {
            return Err(SimulationError::Conservation(format!(
                "{} cells created != {received} received + {dropped} dropped + {lost} lost on links + {policed} \
                 discarded by UPC + {queued} queued + {on_links} on links + {at_abr} waiting at ABR sources",
                self.k.counts.cells_created
            )));
        }
        let by_policers = self.net.policed();
        if by_policers != policed {
            return Err(SimulationError::Conservation(format!(
                "{by_policers} UPC discards counted, {policed} settled"
            )));
        }
        // Cell sources' cells are not AAL5: they have no PDU and are counted apart.
        let raw = self.k.counts.raw_created - self.k.counts.raw_received - self.k.counts.raw_lost;
        let held = self.abr.cells_held();
        let outstanding = self.tables.pdus.outstanding_cells() + self.tables.rms.outstanding_cells() + raw + held;
        if outstanding != queued + on_links + at_abr {
            return Err(SimulationError::Conservation(format!(
                "{outstanding} cells are unsettled (PDU and RM tables, cell sources) but {queued} are queued, \
                 {on_links} on links and {at_abr} waiting at ABR sources"
            )));
        }
        Ok(())
    }
}
