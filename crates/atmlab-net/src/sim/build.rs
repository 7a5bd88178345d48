//! Building a network: hosts, switches, links, VCs and applications.
//!
//! The builder checks everything that depends on the topology (a VC hop
//! without a link, a label used twice on a link, an MSS that does not fit the
//! MTU) and reports it as a [`BuildError`]; the scenario layer adds the
//! position in the scenario file.

use super::abr::{AbrEnd, EndAt, Persistent};
use super::apps::{TcpConn, UdpCbr, UdpStats, VcEnd};
use super::host::{Host, HostModel, HostVc};
use super::probes::ProbeSpec;
use super::sources::{CellApp, CellSource, CellSourceStats, OnOff, Pattern, Piecewise, SourceGroup};
use super::{RunMeta, Simulation};
use crate::aal5::{Encapsulation, IPV4_HEADER, MAX_PAYLOAD, Reassembler, TCP_HEADER, UDP_HEADER};
use crate::abr::control::ControlConfig;
use crate::atm::{
    Contract, LinkLoss, NO_UPC, NextHop, Policer, Port, PortConfig, PortVc, ServiceCategory, Switch, UpcAction,
    VcLabel, VcRoute,
};
use crate::ids::{ConnId, FlowId, HostId, PortId, SwitchId};
use crate::ip::Fragmentation;
use crate::tcp::{TcpConfig, TcpReceiver, TcpSender};
use atmlab_engine::{BitRate, Duration, RngStreams, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// The largest UDP payload: 65535 - 20 (IP) - 8 (UDP).
pub const MAX_UDP_PAYLOAD: u32 = 65_535 - IPV4_HEADER - UDP_HEADER;

/// The largest clock tolerance accepted, in ppm (0.1%: far beyond any real
/// transmitter; SONET/SDH and the ATM UNI ask for 20 ppm).
pub const MAX_CLOCK_PPM: f64 = 1000.0;

/// How the slot grids of the links are placed in time.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlotPhase {
    /// Every link direction has its own random phase in `[0, cell time)`,
    /// drawn from the stream `link:<from>-><to>:phase`: independent
    /// transmitters are not slot-synchronised.
    #[default]
    Random,
    /// Every slot grid starts at `t = 0`. Equal links then deliver cells at
    /// exactly the same instants, and ties are broken by link index.
    Aligned,
}

/// A link's cell loss, as a scenario states it.
#[derive(Clone, PartialEq, Debug)]
pub enum LossModel {
    /// Each cell lost with this probability (0..=1).
    Bernoulli(f64),
    /// One cell in this many lost (>= 1): the `n`-th cell after the start
    /// is the first (004's police function board counts from set-up).
    Periodic(u64),
    /// One cell in this many lost, the counter starting at a uniform random
    /// point of its cycle (the same stream as Bernoulli loss).
    PeriodicRandomPhase(u64),
    /// Every cell of the AAL5 frames with these numbers lost: the frames
    /// that start on the link direction are numbered from 1, retransmissions
    /// included (ns-3's `ReceiveListErrorModel`).
    Frames(Vec<u64>),
}

/// A host or a switch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum NodeRef {
    /// A host.
    Host(HostId),
    /// A switch.
    Switch(SwitchId),
}

/// A topology error.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum BuildError {
    /// A host marked external twice, or an address given to two hosts.
    #[error("address {0} or its host is already external (host {1})")]
    ExternalTwice(String, String),
    /// UPC asked for where the VC does not enter a switch.
    #[error("VC {0} can only be policed where it enters a switch")]
    UpcNotAtSwitch(String),
    /// Two policers at one place.
    #[error("VC {0} is already policed there")]
    UpcTwice(String),
    /// A UDP payload beyond what one IP datagram can carry.
    #[error("{0} bytes exceed the largest UDP payload, {MAX_UDP_PAYLOAD} bytes (the IP total length is 16 bits)")]
    UdpTooLarge(u32),
    /// A cell source faster than its host's link.
    #[error("the peak rate {peak} exceeds the {link} link of the source host")]
    PeakAboveLink {
        /// The source's peak rate.
        peak: BitRate,
        /// The host's link rate.
        link: BitRate,
    },
    /// A clock tolerance out of range.
    #[error("{0} ppm is not a clock tolerance (0 to {MAX_CLOCK_PPM} ppm)")]
    ClockTolerance(f64),
    /// Two nodes are joined by more than one link.
    #[error("there is already a link between {0} and {1}")]
    DuplicateLink(String, String),
    /// A link from a node to itself.
    #[error("a link cannot join {0} to itself")]
    SelfLink(String),
    /// A host with a second link.
    #[error("host {0} already has a link; a host has one ATM adapter")]
    HostHasLink(String),
    /// A VC path shorter than two nodes.
    #[error("a VC path needs at least two nodes")]
    PathTooShort,
    /// A VC that does not start and end at hosts or passes through one.
    #[error("{0} is a {1} but must be a {2} at this position of a VC path")]
    WrongNodeKind(String, &'static str, &'static str),
    /// A VC that visits a node twice.
    #[error("the path visits {0} twice")]
    Loop(String),
    /// Consecutive path nodes without a link.
    #[error("no link between {0} and {1}")]
    NoLink(String, String),
    /// A label already used on a link.
    #[error("label {label} is already used on the link {from}->{to}")]
    LabelInUse {
        /// The label.
        label: VcLabel,
        /// One end of the link.
        from: String,
        /// The other end.
        to: String,
    },
    /// No free label left on a link.
    #[error("no free VPI/VCI left on the link {0}->{1}")]
    LabelsExhausted(String, String),
    /// A host without a link used by a VC.
    #[error("host {0} has no link")]
    HostWithoutLink(String),
    /// A two-way application on a one-way VC.
    #[error("{0} needs a duplex VC (ACKs flow back); this VC is simplex")]
    SimplexVc(String),
    /// An adapter buffer smaller than the host's largest datagram.
    #[error("{cells} cells cannot hold one datagram of the MTU ({mtu} bytes = {need} cells)")]
    AdapterBuffer {
        /// The buffer.
        cells: u32,
        /// Cells of an MTU-sized datagram.
        need: u32,
        /// The MTU.
        mtu: u32,
    },
    /// A distribution with impossible parameters.
    #[error("the {0} distribution needs a mean of at least 1 (ps or byte), values above 0 for times, and p in [0, 1]")]
    Distribution(&'static str),
    /// A receive queue of no datagrams.
    #[error("a receive queue must hold at least one datagram")]
    ReceiveQueue,
    /// An ON/OFF source with an empty ON time.
    #[error("the ON time must be longer than 0 s")]
    EmptyOn,
    /// A piecewise source with intervals that may be empty.
    #[error("every interval must be longer than 0 s")]
    EmptyInterval,
    /// Frames of no cells.
    #[error("a frame has at least one cell")]
    FrameCells,
    /// ABR on a VC that cannot carry it.
    #[error("{0}")]
    Abr(String),
    /// Bad ABR source parameters.
    #[error(transparent)]
    AbrParams(#[from] crate::abr::source::AbrParamError),
    /// A switch controller's parameters that cannot work at its port.
    #[error(transparent)]
    Control(#[from] crate::abr::control::ControlError),
    /// A packet that does not fit the MTU.
    #[error(
        "{what} of {bytes} bytes does not fit the MTU of {mtu} bytes at host {host} (fragmentation is not modelled yet)"
    )]
    ExceedsMtu {
        /// What does not fit.
        what: String,
        /// Its size.
        bytes: u32,
        /// The MTU.
        mtu: u32,
        /// The host.
        host: String,
    },
}

/// Parameters of a constant-rate UDP source (see [`UdpCbr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrParams {
    /// User data bytes per datagram.
    pub payload: u32,
    /// Time between datagrams.
    pub interval: Duration,
    /// First datagram.
    pub start: SimTime,
    /// Datagrams to send (`None`: until the end).
    pub count: Option<u64>,
    /// The largest write the sending program accepts.
    pub max_payload: Option<u32>,
    /// Record the arrival times of this many frames from this time on.
    pub record: Option<(SimTime, u32)>,
}

/// Both ends of a VC and the ports it crosses.
#[derive(Clone, Debug)]
pub struct VcHandle {
    /// Where the path starts.
    pub src: VcEnd,
    /// Where the path ends.
    pub dst: VcEnd,
    /// The output ports along the path, source to destination.
    pub forward: Vec<PortId>,
    /// The VC's index at each of those ports.
    pub forward_vcs: Vec<u16>,
    /// The output ports of the reverse direction, destination to source.
    pub reverse: Vec<PortId>,
    /// Whether cells can flow back (a simplex VC is registered one way).
    pub duplex: bool,
    /// The nodes of the path, source to destination.
    pub path: Vec<NodeRef>,
    /// The VC's label on each link of the path, in path order.
    pub labels: Vec<VcLabel>,
    /// The VC's index at the reverse-direction port of each link of the
    /// path, in path order (empty for a simplex VC).
    pub reverse_vcs: Vec<u16>,
}

/// Parameters of an ON/OFF cell source (the pattern of `sources::OnOff`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOffParams {
    /// Cell rate while ON.
    pub peak: BitRate,
    /// ON time of each period.
    pub on: Duration,
    /// OFF time of each period.
    pub off: Duration,
    /// Start of the first ON period.
    pub start: SimTime,
}

/// What the efficiency metric takes as the capacity of its reference link.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EfficiencyCapacity {
    /// The link's cell rate.
    #[default]
    Link,
    /// The link's cell rate less the mean rate of the ON/OFF sources that
    /// cross it (97-0424 s4.2: "80.5% of 50% of 155.52 Mbps").
    LeftByOnoff,
    /// The link's cell rate less the measured throughput of the cell
    /// sources that cross it (97-0177R2 s7.1: "ABR capacity" = 149.76 Mbit/s
    /// less the measured VBR throughput).
    LeftByMeasured,
}

/// Assembles a [`Simulation`].
pub struct NetworkBuilder {
    pub(super) rng: RngStreams,
    pub(super) hosts: Vec<Host>,
    pub(super) switches: Vec<Switch>,
    pub(super) ports: Vec<Port>,
    pub(super) port_owner: Vec<NodeRef>,
    pub(super) port_peer: Vec<NodeRef>,
    toward: BTreeMap<(NodeRef, NodeRef), PortId>,
    labels: BTreeSet<(PortId, VcLabel)>,
    /// Per port, a VCI on VPI 0 below which every label is taken (labels
    /// are only ever added): where the search for a free one starts.
    free_from: BTreeMap<PortId, u16>,
    pub(super) conns: Vec<TcpConn>,
    pub(super) flows: Vec<UdpCbr>,
    pub(super) sources: Vec<CellSource>,
    /// The events the cell sources share (made by `Simulation::plan`).
    pub(super) source_groups: Vec<SourceGroup>,
    pub(super) cell_apps: Vec<CellApp>,
    pub(super) efficiency_capacity: EfficiencyCapacity,
    pub(super) efficiency_port: Option<PortId>,
    pub(super) event_elision: bool,
    pub(super) slot_phase: SlotPhase,
    pub(super) clock_ppm: f64,
    pub(super) probes: Vec<ProbeSpec>,
    pub(super) upcs: Vec<Upc>,
    pub(super) max_cells_held: u64,
    /// The host ends of ABR VCs (two per VC).
    pub(super) abr_ends: Vec<AbrEnd>,
    /// The switch output ports with an ABR controller.
    pub(super) abr_controls: Vec<(PortId, ControlConfig)>,
    /// The switches that are ABR virtual sources and destinations.
    pub(super) vs_vd: Vec<SwitchId>,
    /// The packet capture's taps, if any link is captured.
    pub(super) capture: Option<super::capture::Capture>,
    /// The trace, if the run writes one (`trace.rs`).
    pub(super) trace: Option<(super::trace::TraceSpec, Box<dyn std::io::Write + Send>)>,
    /// VC names (`name_vc`), and where each VC sits: per (port, VC index)
    /// and per (host, VC index), the name's index and direction.
    vc_names: Vec<String>,
    port_vc_names: BTreeMap<(PortId, u16), super::trace::VcRef>,
    host_vc_names: BTreeMap<(HostId, u32), super::trace::VcRef>,
    /// The external hosts (`sim/external.rs`).
    pub(super) external: Vec<super::external::ExternalHost>,
    /// Every VC's two ends and whether it carries cells both ways, in the
    /// order added: the routes between external hosts.
    pub(super) vc_ends: Vec<(VcEnd, VcEnd, bool)>,
}

/// A policer and where it sits.
#[derive(Clone, Debug)]
pub struct Upc {
    /// The VC's name.
    pub vc: String,
    /// The switch whose ingress it is.
    pub at: String,
    /// The contract's GCRAs and counters.
    pub policer: Policer,
}

impl NetworkBuilder {
    /// An empty network whose components draw from `rng`.
    pub fn new(rng: RngStreams) -> NetworkBuilder {
        NetworkBuilder {
            rng,
            hosts: Vec::new(),
            switches: Vec::new(),
            ports: Vec::new(),
            port_owner: Vec::new(),
            port_peer: Vec::new(),
            toward: BTreeMap::new(),
            labels: BTreeSet::new(),
            free_from: BTreeMap::new(),
            conns: Vec::new(),
            flows: Vec::new(),
            sources: Vec::new(),
            source_groups: Vec::new(),
            cell_apps: Vec::new(),
            efficiency_capacity: EfficiencyCapacity::Link,
            efficiency_port: None,
            event_elision: true,
            slot_phase: SlotPhase::default(),
            clock_ppm: 0.0,
            probes: Vec::new(),
            upcs: Vec::new(),
            max_cells_held: super::DEFAULT_MAX_CELLS_HELD,
            abr_ends: Vec::new(),
            abr_controls: Vec::new(),
            vs_vd: Vec::new(),
            capture: None,
            trace: None,
            vc_names: Vec::new(),
            port_vc_names: BTreeMap::new(),
            host_vc_names: BTreeMap::new(),
            external: Vec::new(),
            vc_ends: Vec::new(),
        }
    }

    /// Writes a trace of the run (`trace.rs`) to `out`: the records of
    /// `spec`'s kinds, VCs, ports and window. The names in `spec` must be
    /// the network's (the scenario layer checks them). Tracing changes no
    /// result.
    ///
    /// A traced run runs without event elision (the reference mode, where
    /// every slot and every cell-hop is an event), so that every record is
    /// written at its own time, in time order; its results are those of
    /// the run without the trace.
    pub fn trace(&mut self, spec: super::trace::TraceSpec, out: Box<dyn std::io::Write + Send>) {
        self.event_elision = false;
        self.trace = Some((spec, out));
    }

    /// Names the VC `vc` (its forward direction runs source to destination)
    /// for the trace's records.
    pub fn name_vc(&mut self, vc: &VcHandle, name: &str) {
        let k = self.vc_names.len() as u32;
        self.vc_names.push(name.to_string());
        for (p, index) in vc.forward.iter().zip(&vc.forward_vcs) {
            self.port_vc_names.insert((*p, *index), super::trace::VcRef::new(k, true));
        }
        // `reverse` runs destination to source; its slots are in path order.
        for (p, index) in vc.reverse.iter().rev().zip(&vc.reverse_vcs) {
            self.port_vc_names.insert((*p, *index), super::trace::VcRef::new(k, false));
        }
        self.host_vc_names.insert((vc.src.host, vc.src.vc), super::trace::VcRef::new(k, true));
        self.host_vc_names.insert((vc.dst.host, vc.dst.vc), super::trace::VcRef::new(k, false));
    }

    /// The names the trace needs (`trace.rs`).
    pub(super) fn trace_names(&self) -> super::trace::TraceNames {
        let port_vcs = (0..self.ports.len())
            .map(|p| {
                (0..self.ports[p].vcs.len())
                    .map(|v| self.port_vc_names.get(&(PortId(p as u32), v as u16)).copied())
                    .collect()
            })
            .collect();
        let host_vcs = (0..self.hosts.len())
            .map(|h| {
                (0..self.hosts[h].vcs.len())
                    .map(|v| self.host_vc_names.get(&(HostId(h as u32), v as u32)).copied())
                    .collect()
            })
            .collect();
        let conns = self
            .conns
            .iter()
            .map(|c| (c.name.clone(), self.host_vc_names.get(&(c.src.host, c.src.vc)).copied()))
            .collect();
        super::trace::TraceNames {
            ports: self.ports.iter().map(|p| p.name.clone()).collect(),
            hosts: self.hosts.iter().map(|h| h.name.clone()).collect(),
            vcs: self.vc_names.clone(),
            port_vcs,
            host_vcs,
            conns,
        }
    }

    /// Captures the AAL5 frames that cross the link driven by `port` into a
    /// pcap file written to `out` (`sim/capture.rs`); `name` is what an
    /// error writing it names (the file). Capturing changes no result.
    pub fn capture(&mut self, port: PortId, name: String, out: Box<dyn std::io::Write + Send>) {
        let n = self.ports.len();
        self.capture.get_or_insert_with(|| super::capture::Capture::new(n)).add(port.idx(), false, name, out);
    }

    /// Captures the AAL5 frames offered to `port`, a switch's output port
    /// (at the switch, before the port's buffer may drop any of their
    /// cells), into a pcap file written to `out`, as
    /// [`capture`](Self::capture) does for a link. Capturing changes no
    /// result. A host's port is refused.
    pub fn capture_input(
        &mut self,
        port: PortId,
        name: String,
        out: Box<dyn std::io::Write + Send>,
    ) -> Result<(), BuildError> {
        if !matches!(self.port_owner[port.idx()], NodeRef::Switch(_)) {
            return Err(BuildError::Abr(format!(
                "port {} is a host's: only a switch's output port has an input to capture",
                self.ports[port.idx()].name
            )));
        }
        let n = self.ports.len();
        self.capture.get_or_insert_with(|| super::capture::Capture::new(n)).add(port.idx(), true, name, out);
        Ok(())
    }

    /// The memory guard: the run stops with [`SimulationError::Limit`]
    /// (naming the place that grew) when what is held in queues, on links
    /// and at hosts takes the memory of more than `cells` cells (the
    /// frames and datagrams they belong to counted too, `guard.rs`; default
    /// [`DEFAULT_MAX_CELLS_HELD`](super::DEFAULT_MAX_CELLS_HELD)).
    ///
    /// [`SimulationError::Limit`]: super::SimulationError::Limit
    pub fn set_max_cells_held(&mut self, cells: u64) {
        self.max_cells_held = cells;
    }

    /// The run's random streams.
    pub fn rng(&self) -> RngStreams {
        self.rng
    }

    /// The name of a node.
    pub fn node_name(&self, n: NodeRef) -> &str {
        match n {
            NodeRef::Host(h) => &self.hosts[h.idx()].name,
            NodeRef::Switch(s) => &self.switches[s.idx()].name,
        }
    }

    /// Adds a host.
    pub fn add_host(&mut self, name: &str, mtu: u32, encapsulation: Encapsulation) -> HostId {
        self.hosts.push(Host::new(name.to_owned(), mtu, encapsulation));
        HostId(self.hosts.len() as u32 - 1)
    }

    /// Limits host `h`'s adapter to the peak cell rate `peak` (at most its
    /// link's rate): cells leave at most one per `424 / peak`. Call after
    /// the host's link is added.
    pub fn set_adapter_peak(&mut self, h: HostId, peak: BitRate) -> Result<(), BuildError> {
        let host = &self.hosts[h.idx()];
        let port = host.port.ok_or_else(|| BuildError::HostWithoutLink(host.name.clone()))?;
        self.shape_port(port, peak)
    }

    /// Sets the drop policy of `category` at port `p` (before the run).
    pub fn set_drop_policy(&mut self, p: PortId, category: ServiceCategory, policy: crate::atm::DropPolicy) {
        self.ports[p.idx()].set_drop_policy(category, policy);
    }

    /// Shapes output port `p` to the cell rate `rate` (at most its link's).
    pub fn shape_port(&mut self, p: PortId, rate: BitRate) -> Result<(), BuildError> {
        let port = &mut self.ports[p.idx()];
        if rate > port.line {
            return Err(BuildError::PeakAboveLink { peak: rate, link: port.line });
        }
        port.set_service_rate(rate);
        Ok(())
    }

    /// Polices VC `vc` (named `name`) against `contract` where it enters the
    /// switch at position `hop` of its path (1 = the first switch). Returns
    /// the policer's index.
    pub fn add_upc(
        &mut self,
        name: &str,
        vc: &VcHandle,
        hop: usize,
        contract: Contract,
        action: UpcAction,
    ) -> Result<u32, BuildError> {
        if hop == 0 || hop >= vc.forward.len() {
            return Err(BuildError::UpcNotAtSwitch(name.to_owned()));
        }
        let (port, index) = (vc.forward[hop - 1], vc.forward_vcs[hop - 1]);
        let entry = &mut self.ports[port.idx()].vcs[index as usize];
        if entry.upc != NO_UPC {
            return Err(BuildError::UpcTwice(name.to_owned()));
        }
        let index = self.upcs.len() as u32;
        entry.upc = index;
        let (_, at) = self.ports[port.idx()].name.split_once("->").expect("port names are from->to");
        self.upcs.push(Upc { vc: name.to_owned(), at: at.to_owned(), policer: Policer::new(contract, action) });
        Ok(index)
    }

    /// How host `h` cuts datagrams larger than its MTU (default RFC 791).
    pub fn set_fragmentation(&mut self, h: HostId, rule: Fragmentation) {
        self.hosts[h.idx()].fragmentation = rule;
    }

    /// Adds a switch.
    pub fn add_switch(&mut self, name: &str) -> SwitchId {
        self.switches.push(Switch::new(name.to_owned()));
        SwitchId(self.switches.len() as u32 - 1)
    }

    /// Adds a full-duplex link; returns the output ports `a->b` and `b->a`.
    pub fn add_link(
        &mut self,
        a: NodeRef,
        b: NodeRef,
        rate: BitRate,
        delay: Duration,
        port_ab: PortConfig,
        port_ba: PortConfig,
    ) -> Result<(PortId, PortId), BuildError> {
        let (na, nb) = (self.node_name(a).to_owned(), self.node_name(b).to_owned());
        if a == b {
            return Err(BuildError::SelfLink(na));
        }
        if self.toward.contains_key(&(a, b)) {
            return Err(BuildError::DuplicateLink(na, nb));
        }
        for n in [a, b] {
            if let NodeRef::Host(h) = n
                && self.hosts[h.idx()].port.is_some()
            {
                return Err(BuildError::HostHasLink(self.hosts[h.idx()].name.clone()));
            }
        }
        let pab = self.add_port(a, b, format!("{na}->{nb}"), rate, delay, port_ab);
        let pba = self.add_port(b, a, format!("{nb}->{na}"), rate, delay, port_ba);
        Ok((pab, pba))
    }

    fn add_port(
        &mut self,
        from: NodeRef,
        to: NodeRef,
        name: String,
        rate: BitRate,
        delay: Duration,
        cfg: PortConfig,
    ) -> PortId {
        let id = PortId(self.ports.len() as u32);
        self.ports.push(Port::new(name, rate, delay, cfg));
        self.port_owner.push(from);
        self.port_peer.push(to);
        self.toward.insert((from, to), id);
        match from {
            NodeRef::Host(h) => self.hosts[h.idx()].port = Some(id),
            NodeRef::Switch(s) => self.switches[s.idx()].ports.push(id),
        }
        id
    }

    /// The output port of `from` toward `to`, if they are linked.
    pub fn port_toward(&self, from: NodeRef, to: NodeRef) -> Option<PortId> {
        self.toward.get(&(from, to)).copied()
    }

    /// Whether the simulation may skip events whose outcome is known in
    /// advance (the default): FIFO ports compute departures on acceptance,
    /// ports fed by one link accept cells when they are put on it, and links
    /// into hosts have events only for frame ends (see `Simulation::plan`).
    /// Turning it off simulates every slot and every cell-hop as an event,
    /// which gives identical results more slowly: the reference the
    /// optimisations are tested against.
    pub fn set_event_elision(&mut self, on: bool) {
        self.event_elision = on;
    }

    /// What the efficiency's capacity is (default: the link rate).
    pub fn set_efficiency_capacity(&mut self, capacity: EfficiencyCapacity) {
        self.efficiency_capacity = capacity;
    }

    /// Samples a quantity during the run (see [`ProbeSpec`]).
    pub fn add_probe(&mut self, probe: ProbeSpec) {
        self.probes.push(probe);
    }

    /// Makes the link driven by `port` lose cells: with probability `p` each
    /// (`Bernoulli`, from the stream `link:<from>-><to>:loss`), or one in
    /// `n` (`Periodic`), or chosen frames (`Frames`).
    pub fn set_link_loss(&mut self, port: PortId, loss: LossModel) {
        let p = &mut self.ports[port.idx()];
        let model = match loss {
            LossModel::Bernoulli(prob) => {
                LinkLoss::Bernoulli { p: prob, rng: Box::new(self.rng.stream(&format!("link:{}:loss", p.name))) }
            }
            LossModel::Periodic(one_in) => LinkLoss::Periodic { one_in, seen: 0 },
            LossModel::PeriodicRandomPhase(one_in) => {
                use rand::RngExt;
                let seen = self.rng.stream(&format!("link:{}:loss", p.name)).random_range(0..one_in);
                LinkLoss::Periodic { one_in, seen }
            }
            LossModel::Frames(frames) => LinkLoss::frames(frames),
        };
        p.set_loss(model);
    }

    /// How the links' slot grids are placed (default: random phases).
    pub fn set_slot_phase(&mut self, phase: SlotPhase) {
        self.slot_phase = phase;
    }

    /// Clock tolerance: every link direction runs at its nominal rate times
    /// `1 + e`, `e` uniform in `[-ppm, +ppm] x 1e-6` from the stream
    /// `link:<from>-><to>:clock`, rounded to a whole bit/s (default 0: every
    /// link exactly at its nominal rate).
    pub fn set_clock_tolerance(&mut self, ppm: f64) -> Result<(), BuildError> {
        if !(0.0..=MAX_CLOCK_PPM).contains(&ppm) {
            return Err(BuildError::ClockTolerance(ppm));
        }
        self.clock_ppm = ppm;
        Ok(())
    }

    /// Uses the link of `port` as the capacity reference of the efficiency
    /// metric.
    pub fn set_efficiency_port(&mut self, port: PortId) {
        self.efficiency_port = Some(port);
    }

    /// A host.
    pub fn host(&self, h: HostId) -> &Host {
        &self.hosts[h.idx()]
    }

    /// The configuration of a port.
    pub fn port(&self, port: PortId) -> &Port {
        &self.ports[port.idx()]
    }

    /// Adds a bidirectional VC along `path` (host, switches..., host). Each
    /// link gets `label` if given, else the lowest free VCI >= 32 on VPI 0.
    pub fn add_vc(
        &mut self,
        path: &[NodeRef],
        category: ServiceCategory,
        label: Option<VcLabel>,
    ) -> Result<VcHandle, BuildError> {
        self.add_vc_directed(path, category, label, true)
    }

    /// As [`add_vc`](Self::add_vc), for traffic in one direction only (a
    /// cell source): the reverse direction is not registered at the ports,
    /// so it does not count as a VC of its category there.
    pub fn add_simplex_vc(
        &mut self,
        path: &[NodeRef],
        category: ServiceCategory,
        label: Option<VcLabel>,
    ) -> Result<VcHandle, BuildError> {
        self.add_vc_directed(path, category, label, false)
    }

    fn add_vc_directed(
        &mut self,
        path: &[NodeRef],
        category: ServiceCategory,
        label: Option<VcLabel>,
        duplex: bool,
    ) -> Result<VcHandle, BuildError> {
        let n = path.len();
        if n < 2 {
            return Err(BuildError::PathTooShort);
        }
        for (i, node) in path.iter().enumerate() {
            let endpoint = i == 0 || i == n - 1;
            match (node, endpoint) {
                (NodeRef::Host(_), false) => {
                    return Err(BuildError::WrongNodeKind(self.node_name(*node).into(), "host", "switch"));
                }
                (NodeRef::Switch(_), true) => {
                    return Err(BuildError::WrongNodeKind(self.node_name(*node).into(), "switch", "host"));
                }
                _ => {}
            }
            if path[..i].contains(node) {
                return Err(BuildError::Loop(self.node_name(*node).into()));
            }
        }
        let (NodeRef::Host(src), NodeRef::Host(dst)) = (path[0], path[n - 1]) else { unreachable!("checked above") };
        let mut fwd = Vec::with_capacity(n - 1);
        let mut rev = Vec::with_capacity(n - 1);
        for w in path.windows(2) {
            let no_link = || BuildError::NoLink(self.node_name(w[0]).into(), self.node_name(w[1]).into());
            fwd.push(self.port_toward(w[0], w[1]).ok_or_else(no_link)?);
            rev.push(self.port_toward(w[1], w[0]).ok_or_else(no_link)?);
        }
        let mut labels = Vec::with_capacity(n - 1);
        for i in 0..n - 1 {
            let l = self.pick_label(fwd[i], rev[i], label)?;
            labels.push(l);
        }
        for i in 0..n - 1 {
            for p in [fwd[i], rev[i]] {
                self.labels.insert((p, labels[i]));
                let from = self.free_from.entry(p).or_insert(32);
                while *from < u16::MAX && self.labels.contains(&(p, VcLabel::new(0, *from))) {
                    *from += 1;
                }
            }
        }
        let src_vc = self.add_host_vc(src, labels[0]);
        let dst_vc = self.add_host_vc(dst, labels[n - 2]);

        // Forward: build from the destination back, so each hop knows the
        // next hop's VC index.
        let mut next = NextHop::Host { host: dst, vc: dst_vc };
        let mut forward_vcs = vec![0; n - 1];
        for i in (0..n - 1).rev() {
            let vc = self.ports[fwd[i].idx()].add_vc(PortVc::new(category, next));
            forward_vcs[i] = vc;
            if i == 0 {
                self.hosts[src.idx()].vcs[src_vc as usize].port_vc = vc;
            } else {
                let NodeRef::Switch(sw) = path[i] else { unreachable!() };
                let route = VcRoute { out_port: fwd[i], out_label: labels[i] };
                self.switches[sw.idx()].vc_table.insert((fwd[i - 1], labels[i - 1]), route);
            }
            next = NextHop::Port { port: fwd[i], label: labels[i], vc };
        }
        // Reverse: rev[i] carries cells from path[i+1] to path[i].
        let mut next = NextHop::Host { host: src, vc: src_vc };
        let mut reverse_vcs = vec![0; n - 1];
        for i in (0..n - 1).filter(|_| duplex) {
            let vc = self.ports[rev[i].idx()].add_vc(PortVc::new(category, next));
            reverse_vcs[i] = vc;
            if i == n - 2 {
                self.hosts[dst.idx()].vcs[dst_vc as usize].port_vc = vc;
            } else {
                let NodeRef::Switch(sw) = path[i + 1] else { unreachable!() };
                let route = VcRoute { out_port: rev[i], out_label: labels[i] };
                self.switches[sw.idx()].vc_table.insert((rev[i + 1], labels[i + 1]), route);
            }
            next = NextHop::Port { port: rev[i], label: labels[i], vc };
        }
        // At switch path[k] the VC leaves by fwd[k] one way and rev[k - 1]
        // the other: each is the other's feedback port.
        for k in (1..n - 1).filter(|_| duplex) {
            let (f, fs, r, rs) = (fwd[k], forward_vcs[k], rev[k - 1], reverse_vcs[k - 1]);
            self.ports[f.idx()].vcs[fs as usize].feedback = Some((r, rs));
            self.ports[r.idx()].vcs[rs as usize].feedback = Some((f, fs));
        }
        rev.reverse();
        self.vc_ends.push((VcEnd { host: src, vc: src_vc }, VcEnd { host: dst, vc: dst_vc }, duplex));
        Ok(VcHandle {
            src: VcEnd { host: src, vc: src_vc },
            dst: VcEnd { host: dst, vc: dst_vc },
            forward: fwd,
            forward_vcs,
            reverse: rev,
            duplex,
            path: path.to_vec(),
            labels,
            reverse_vcs: if duplex { reverse_vcs } else { Vec::new() },
        })
    }

    fn pick_label(&self, fwd: PortId, rev: PortId, wanted: Option<VcLabel>) -> Result<VcLabel, BuildError> {
        let free = |l: VcLabel| !self.labels.contains(&(fwd, l)) && !self.labels.contains(&(rev, l));
        let (from, to) = self.ports[fwd.idx()].name.split_once("->").expect("port names are from->to");
        match wanted {
            Some(l) if free(l) => Ok(l),
            Some(l) => Err(BuildError::LabelInUse { label: l, from: from.into(), to: to.into() }),
            None => {
                // Below both ports' hints every label is taken on one of them.
                let start = [fwd, rev].iter().map(|p| self.free_from.get(p).copied().unwrap_or(32)).max();
                (start.unwrap_or(32)..=u16::MAX)
                    .map(|vci| VcLabel::new(0, vci))
                    .find(|l| free(*l))
                    .ok_or_else(|| BuildError::LabelsExhausted(from.into(), to.into()))
            }
        }
    }

    fn add_host_vc(&mut self, host: HostId, label: VcLabel) -> u32 {
        let h = &mut self.hosts[host.idx()];
        h.vcs.push(HostVc { label, port_vc: 0, reassembler: Reassembler::new(), cell_sink: None, abr: None });
        h.vcs.len() as u32 - 1
    }

    fn check_fits(&self, end: VcEnd, what: &str, ip_bytes: u32) -> Result<(), BuildError> {
        let h = &self.hosts[end.host.idx()];
        if h.port.is_none() {
            return Err(BuildError::HostWithoutLink(h.name.clone()));
        }
        let limit = h.mtu.min(MAX_PAYLOAD - h.encapsulation.header_bytes());
        if ip_bytes > limit {
            return Err(BuildError::ExceedsMtu {
                what: what.into(),
                bytes: ip_bytes,
                mtu: limit,
                host: h.name.clone(),
            });
        }
        Ok(())
    }

    /// Adds a TCP bulk transfer over `vc` from its source to its destination,
    /// opened at `start`, of `bytes` bytes (`None`: forever).
    pub fn add_tcp(
        &mut self,
        name: &str,
        vc: &VcHandle,
        cfg: TcpConfig,
        start: SimTime,
        bytes: Option<u64>,
    ) -> Result<ConnId, BuildError> {
        if !vc.duplex {
            return Err(BuildError::SimplexVc("TCP".into()));
        }
        let seg = cfg.mss + IPV4_HEADER + TCP_HEADER;
        self.check_fits(vc.src, &format!("a TCP segment (MSS {})", cfg.mss), seg)?;
        self.check_fits(vc.dst, &format!("a TCP segment (MSS {})", cfg.mss), seg)?;
        // Each host's clock ticks with its own phase, drawn once per host.
        let host_phase = |h: HostId| {
            use rand::RngExt;
            let name = &self.hosts[h.idx()].name;
            self.rng.stream(&format!("host:{name}:clock")).random::<f64>()
        };
        let (mut send_cfg, mut recv_cfg) = (cfg.clone(), cfg);
        if send_cfg.rto_timer.uses_host_phase() || send_cfg.delayed_ack_timer.uses_host_phase() {
            send_cfg.clock_phase = host_phase(vc.src.host);
            recv_cfg.clock_phase = host_phase(vc.dst.host);
        }
        self.conns.push(TcpConn {
            name: name.to_owned(),
            sender: TcpSender::new(send_cfg, bytes),
            receiver: TcpReceiver::new(recv_cfg),
            src: vc.src,
            dst: vc.dst,
            start,
            bytes,
            completed_at: None,
            stop: None,
            rto_timer: Default::default(),
            delack_timer: Default::default(),
            write_timer: Default::default(),
        });
        Ok(ConnId(self.conns.len() as u32 - 1))
    }

    /// Makes UDP flow `f` an application class of the CM Toolset (000
    /// s5.2): payloads and intervals drawn from distributions (each from
    /// its own stream, `app:<name>:payload` and `app:<name>:interval`), and
    /// an amount of data as bytes or a stop time besides a TSDU count.
    /// Payload draws are capped at [`MAX_UDP_PAYLOAD`].
    pub fn vary_udp(
        &mut self,
        f: FlowId,
        payload: super::apps::Dist,
        interval: super::apps::Dist,
        bytes: Option<u64>,
        stop: Option<SimTime>,
    ) -> Result<(), BuildError> {
        use super::apps::Dist;
        let check = |d: Dist, what: &'static str| match d {
            Dist::Exponential { mean } if !(mean.is_finite() && mean >= 1.0) => Err(BuildError::Distribution(what)),
            Dist::Bivalue { p, .. } if !(0.0..=1.0).contains(&p) => Err(BuildError::Distribution(what)),
            _ => Ok(()),
        };
        check(payload, "payload")?;
        check(interval, "interval")?;
        if let Dist::Constant(0) | Dist::Bivalue { values: [0, _] | [_, 0], .. } = interval {
            return Err(BuildError::Distribution("interval"));
        }
        let largest = match payload {
            Dist::Constant(v) => v,
            Dist::Bivalue { values, .. } => values[0].max(values[1]),
            Dist::Exponential { .. } => 0, // draws are capped
        };
        if largest > u64::from(MAX_UDP_PAYLOAD) {
            return Err(BuildError::UdpTooLarge(largest.min(u64::from(u32::MAX)) as u32));
        }
        let rng = self.rng;
        let flow = &mut self.flows[f.idx()];
        let stream = |what: &str| Box::new(rng.stream(&format!("app:{}:{what}", flow.name)));
        flow.rng_payload = (!payload.is_constant()).then(|| stream("payload"));
        flow.rng_interval = (!interval.is_constant()).then(|| stream("interval"));
        flow.payload_dist = payload;
        flow.interval_dist = interval;
        flow.bytes = bytes;
        flow.stop = stop;
        Ok(())
    }

    /// The application of connection `c` stops writing at `t` (a transfer
    /// that lasts a given time, 000's 3-minute sessions).
    pub fn set_tcp_stop(&mut self, c: ConnId, t: SimTime) {
        self.conns[c.idx()].stop = Some(t);
    }

    /// The host's CPU costs and buffer limits. The adapter buffer must hold
    /// the host's largest datagram (else a blocking driver would wait forever).
    pub fn set_host_model(&mut self, h: HostId, model: HostModel) -> Result<(), BuildError> {
        let host = &mut self.hosts[h.idx()];
        if let Some(cap) = model.adapter_buffer {
            let need = host.encapsulation.cells_for_datagram(host.mtu);
            if cap < need {
                return Err(BuildError::AdapterBuffer { cells: cap, need, mtu: host.mtu });
            }
        }
        if model.receive_queue == Some(0) {
            return Err(BuildError::ReceiveQueue);
        }
        host.model = model;
        Ok(())
    }

    /// Adds a constant-rate UDP source over `vc`.
    pub fn add_udp_cbr(&mut self, name: &str, vc: &VcHandle, p: CbrParams) -> Result<FlowId, BuildError> {
        // A datagram larger than the MTU is fragmented; the IP total length
        // (16 bits) is the limit.
        if p.max_payload.is_none_or(|m| p.payload <= m) && p.payload > MAX_UDP_PAYLOAD {
            return Err(BuildError::UdpTooLarge(p.payload));
        }
        self.check_fits(vc.src, "its sender", 0)?;
        self.check_fits(vc.dst, "its receiver", 0)?;
        self.flows.push(UdpCbr {
            name: name.to_owned(),
            src: vc.src,
            dst: vc.dst,
            start: p.start,
            count: p.count,
            max_payload: p.max_payload,
            stats: UdpStats::default(),
            fragments: Default::default(),
            record: p.record,
            arrivals: Vec::new(),
            payload_dist: super::apps::Dist::Constant(u64::from(p.payload)),
            interval_dist: super::apps::Dist::Constant(p.interval.as_ps()),
            bytes: None,
            stop: None,
            bytes_sent: 0,
            rng_payload: None,
            rng_interval: None,
        });
        Ok(FlowId(self.flows.len() as u32 - 1))
    }

    /// Adds an ON/OFF cell source over `vc` (see [`OnOff`]).
    pub fn add_onoff(&mut self, name: &str, vc: &VcHandle, p: OnOffParams) -> Result<u32, BuildError> {
        if p.on.is_zero() {
            return Err(BuildError::EmptyOn);
        }
        let link = self.ports[vc.forward[0].idx()].rate;
        if p.peak > link {
            return Err(BuildError::PeakAboveLink { peak: p.peak, link });
        }
        let app = self.add_cell_app(name, vc)?;
        self.add_cell_source(app, vc, Pattern::OnOff(OnOff::new(p.peak, p.on, p.off, p.start)), None);
        Ok(app)
    }

    /// Adds an application of piecewise-rate cell sources over `vc`, one
    /// per pattern, multiplexed on the VC (see [`Piecewise`]); every
    /// `frame_cells`-th cell of each source ends a frame.
    pub fn add_piecewise(
        &mut self,
        name: &str,
        vc: &VcHandle,
        patterns: Vec<Piecewise>,
        frame_cells: Option<u32>,
    ) -> Result<u32, BuildError> {
        let link = self.ports[vc.forward[0].idx()].rate;
        for p in &patterns {
            if p.intervals.min().is_zero() {
                return Err(BuildError::EmptyInterval);
            }
            if p.peak_bps > link.bps() as f64 {
                let peak = BitRate::from_bps(p.peak_bps.round() as u64).unwrap_or(link);
                return Err(BuildError::PeakAboveLink { peak, link });
            }
        }
        if frame_cells == Some(0) {
            return Err(BuildError::FrameCells);
        }
        let app = self.add_cell_app(name, vc)?;
        for p in patterns {
            self.add_cell_source(app, vc, Pattern::Piecewise(p), frame_cells);
        }
        Ok(app)
    }

    /// Adds a persistent source on the ABR VC `vc` (made one by
    /// [`set_abr`](Self::set_abr) before): from `start` its ABR source
    /// always has cells, raw data cells sent at its ACR, counted at the
    /// sink as a cell application's (the ATM Forum's test configurations'
    /// "persistent sources").
    pub fn add_abr_persistent(&mut self, name: &str, vc: &VcHandle, start: SimTime) -> Result<u32, BuildError> {
        let Some(e) = self.hosts[vc.src.host.idx()].vcs[vc.src.vc as usize].abr else {
            return Err(BuildError::Abr("a persistent ABR source needs an ABR VC (category = \"abr\")".into()));
        };
        if self.abr_ends[e as usize].persistent.is_some() {
            return Err(BuildError::Abr("the VC already has a persistent source".into()));
        }
        self.check_fits(vc.src, "a cell", 0)?;
        let app = self.push_cell_app(name, vc);
        self.abr_ends[e as usize].persistent = Some(Persistent::new(app, start));
        Ok(app)
    }

    fn add_cell_app(&mut self, name: &str, vc: &VcHandle) -> Result<u32, BuildError> {
        self.check_fits(vc.src, "a cell", 0)?;
        if self.hosts[vc.src.host.idx()].vcs[vc.src.vc as usize].abr.is_some() {
            return Err(BuildError::Abr(
                "a cell source cannot send on an ABR VC (its cells would bypass the ABR source's rate; \
                 kind = \"abr_persistent\" is a source that sends at it)"
                    .into(),
            ));
        }
        Ok(self.push_cell_app(name, vc))
    }

    fn push_cell_app(&mut self, name: &str, vc: &VcHandle) -> u32 {
        let app = self.cell_apps.len() as u32;
        self.cell_apps.push(CellApp {
            name: name.to_owned(),
            src: vc.src,
            dst: vc.dst,
            path: vc.forward.clone(),
            received: 0,
            early: None,
        });
        self.hosts[vc.dst.host.idx()].vcs[vc.dst.vc as usize].cell_sink = Some(app);
        app
    }

    fn add_cell_source(&mut self, app: u32, vc: &VcHandle, pattern: Pattern, frame_cells: Option<u32>) {
        self.sources.push(CellSource {
            app,
            src: vc.src,
            stats: CellSourceStats::default(),
            pattern,
            frame_cells,
            first: None, // when the run's end is known (Simulation::new)
            frame_left: frame_cells.unwrap_or(0),
        });
    }

    /// Makes `vc` an ABR VC: each direction gets a TM 4.0 source with
    /// `params` at the end that sends it and a destination at the end that
    /// receives it (rules 1-13; see `sim/abr.rs`). The VC must be duplex
    /// (the RM cells come back on it) and of the ABR category, and carry no
    /// cell source. PCR may not exceed either host's link.
    pub fn set_abr(
        &mut self,
        name: &str,
        vc: &VcHandle,
        params: &crate::abr::source::AbrParams,
    ) -> Result<(), BuildError> {
        use crate::abr::source::{AbrParamError, AbrSource};
        if !vc.duplex {
            return Err(BuildError::Abr("an ABR VC must be duplex: its RM cells come back on it".into()));
        }
        let category = self.ports[vc.forward[0].idx()].vcs[vc.forward_vcs[0] as usize].category;
        if category != ServiceCategory::Abr {
            return Err(BuildError::Abr(format!("the VC's service category is {category}, not abr")));
        }
        if self.sources.iter().any(|s| s.src == vc.src || s.src == vc.dst) {
            return Err(BuildError::Abr(
                "a cell source cannot send on an ABR VC (its cells would bypass the ABR source's rate)".into(),
            ));
        }
        for end in [vc.src, vc.dst] {
            let host = &self.hosts[end.host.idx()];
            let port = host.port.ok_or_else(|| BuildError::HostWithoutLink(host.name.clone()))?;
            let link = self.ports[port.idx()].rate.bps() as f64 / atmlab_engine::CELL_BITS as f64;
            if params.pcr > link * (1.0 + 1e-12) {
                return Err(BuildError::AbrParams(AbrParamError {
                    name: "PCR",
                    value: format!("{} cells/s", params.pcr),
                    range: "at most the cell rate of the host's link",
                }));
            }
        }
        for (end, direction) in [(vc.src, "forward"), (vc.dst, "backward")] {
            let source = AbrSource::new(*params, SimTime::ZERO)?;
            let e = self.abr_ends.len() as u32;
            let host = &self.hosts[end.host.idx()];
            let hv = &host.vcs[end.vc as usize];
            let out = (host.port.expect("checked above"), hv.label, hv.port_vc);
            let at = EndAt::Host { host: end.host, vc: end.vc };
            self.abr_ends.push(AbrEnd::new(format!("{name}:{direction}"), at, out, source));
            self.hosts[end.host.idx()].vcs[end.vc as usize].abr = Some(e);
        }
        // Each VS/VD switch on the path splits the loops: a pair of ends,
        // one sending each way (TM 4.0 s5.10.10; docs/models/abr.md, "Virtual source and destination").
        for k in 1..vc.path.len() - 1 {
            let NodeRef::Switch(sw) = vc.path[k] else { continue };
            if !self.vs_vd.contains(&sw) {
                continue;
            }
            let down = (vc.forward[k], vc.labels[k], vc.forward_vcs[k]);
            let up_port = self.port_toward(vc.path[k], vc.path[k - 1]).expect("the path is linked");
            let up = (up_port, vc.labels[k - 1], vc.reverse_vcs[k - 1]);
            let (e_down, e_up) = (self.abr_ends.len() as u32, self.abr_ends.len() as u32 + 1);
            let switch = self.switches[sw.idx()].name.clone();
            for (out, peer, direction) in [(down, e_up, "forward"), (up, e_down, "backward")] {
                // A virtual source sends no faster than its own port.
                let cell_rate = self.ports[out.0.idx()].rate.bps() as f64 / atmlab_engine::CELL_BITS as f64;
                let mut p = *params;
                p.pcr = p.pcr.min(cell_rate);
                p.icr = p.icr.min(p.pcr);
                let source = AbrSource::new(p, SimTime::ZERO)?;
                let at = EndAt::Switch { switch: sw, peer };
                self.abr_ends.push(AbrEnd::new(format!("{name}:{direction}@{switch}"), at, out, source));
            }
            self.ports[down.0.idx()].vcs[down.2 as usize].vs = Some(e_down);
            self.ports[up.0.idx()].vcs[up.2 as usize].vs = Some(e_up);
        }
        Ok(())
    }

    /// Makes switch `sw` an ABR virtual source and destination (TM 4.0
    /// s5.10.10): every ABR VC through it, set with [`set_abr`](Self::set_abr)
    /// after this call, has its loops split there, with per-VC queues.
    pub fn set_vs_vd(&mut self, sw: SwitchId) {
        if !self.vs_vd.contains(&sw) {
            self.vs_vd.push(sw);
        }
    }

    /// Gives switch output port `port` an ABR controller (any algorithm of
    /// [`crate::abr::control`]). It acts on the port's ABR VCs; it needs no
    /// VC to exist yet. Parameters that cannot work at the port (an
    /// interval shorter than a cell time of its link) are an error naming
    /// the parameter: checked here, once.
    pub fn set_abr_control(&mut self, port: PortId, config: ControlConfig) -> Result<(), BuildError> {
        if !matches!(self.port_owner[port.idx()], NodeRef::Switch(_)) {
            return Err(BuildError::Abr(format!(
                "port {} is not a switch's: only switches run ABR control",
                self.ports[port.idx()].name
            )));
        }
        config.check(self.ports[port.idx()].rate.bps() as f64 / atmlab_engine::CELL_BITS as f64)?;
        self.abr_controls.retain(|(p, _)| *p != port);
        self.abr_controls.push((port, config));
        Ok(())
    }

    /// The controller configured for port `port`, if any.
    pub fn abr_control(&self, port: PortId) -> Option<&ControlConfig> {
        self.abr_controls.iter().find(|(p, _)| *p == port).map(|(_, c)| c)
    }

    /// Marks host `h` external, with IPv4 address `address`: IP packets
    /// from outside enter the network there and leave it at the other
    /// external hosts (`sim/external.rs`). An address given twice is an
    /// error.
    pub fn set_external(&mut self, h: HostId, address: std::net::Ipv4Addr) -> Result<(), BuildError> {
        let address = address.octets();
        if let Some(x) = self.external.iter().find(|x| x.address == address || x.host == h) {
            let other = self.hosts[x.host.idx()].name.clone();
            return Err(BuildError::ExternalTwice(std::net::Ipv4Addr::from(address).to_string(), other));
        }
        self.external.push(super::external::ExternalHost { host: h, address });
        Ok(())
    }

    /// Finishes the network: a simulation of `duration` ready to run.
    pub fn build(self, meta: RunMeta, duration: Duration) -> Simulation {
        Simulation::new(self, meta, duration)
    }
}
