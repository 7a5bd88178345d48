//! From a parsed [`Scenario`] to a ready-to-run [`Simulation`], with every
//! check that needs more than one key (names, references, topology) reported
//! at the key path where the problem is.

use crate::error::ScenarioError;
use crate::schema::*;
use atmlab_engine::CELL_BITS;
use atmlab_engine::{Duration, RngStreams, SimTime};
use atmlab_net::aal5::Encapsulation;
use atmlab_net::abr::source::AbrParams;
use atmlab_net::atm::{
    Conformance, Contract, DropPolicy, Epd, Fba, GuaranteedRate, PortConfig, Ppd, Queueing, SchedulerKind,
    SelectiveDrop, ServiceCategory, StrictPriority, TailDrop, VcLabel,
};
use atmlab_net::ids::{ConnId, FlowId};
use atmlab_net::ids::{HostId, PortId};
use atmlab_net::sim::{
    BuildError, CbrParams, Dist, HostModel, LossModel, NetworkBuilder, NodeRef, OnOffParams, ProbeSpec, ProbeTarget,
    RunMeta, Simulation, VcHandle,
};
use atmlab_net::sim::{Intervals, Piecewise, TraceKind, TraceSpec};
use atmlab_net::tcp::{DelayedAckRule, RtoAlgorithm, RtoConfig, SocketConfig, TcpConfig};
use rand::RngExt;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Default IP MTU of Classical IP over ATM (RFC 1577).
pub const DEFAULT_MTU: u64 = 9180;
/// Default threshold `R` of EPD, Selective Drop and FBA, as a fraction of the
/// buffer (recalled for the OSU UBR+ studies, unverified: atmlab's choice,
/// docs/models/atm.md, "Threshold default").
pub const DEFAULT_THRESHOLD_FRACTION: f64 = 0.9;
/// Default `Z` of Selective Drop and FBA (same source).
pub const DEFAULT_Z: f64 = 0.8;

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

struct Ctx<'a> {
    sc: &'a Scenario,
    b: NetworkBuilder,
    /// EPD policies with `frame_cells = "auto"`, resolved once the VCs are known.
    auto_frames: Vec<AutoFrame<'a>>,
    nodes: BTreeMap<&'a str, NodeRef>,
    vcs: BTreeMap<&'a str, (usize, VcHandle)>,
    apps: BTreeMap<&'a str, AppRef>,
    /// FGN values the run's piecewise sources may still generate.
    fgn_budget: u64,
}

/// A drop policy whose largest frame depends on the VCs through its port.
struct AutoFrame<'a> {
    port: PortId,
    category: ServiceCategory,
    path: String,
    spec: &'a DropPolicySpec,
    pool: u32,
}

#[derive(Clone, Copy)]
enum AppRef {
    Tcp(ConnId),
    Udp(FlowId),
    /// An application of cell sources (onoff, piecewise).
    Cells(u32),
}

/// The largest memory guard a scenario may set (160 GB of cell records).
const MAX_CELLS_HELD: u64 = 10_000_000_000;

/// A name is printed in results, tables and file names: it must have a
/// visible character and no control character (a newline, a NUL).
fn check_name(path: String, name: &str) -> Result<(), ScenarioError> {
    if name.trim().is_empty() {
        return Err(err(path, "a name must not be empty"));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(err(path, format!("{name:?} contains the control character {c:?}")));
    }
    Ok(())
}

/// The most sources one piecewise application may multiplex.
const MAX_SOURCES: u32 = 10_000;

/// The longest FGN block a source may generate (2^24 values, 128 MB).
const MAX_FGN_LENGTH: u64 = 1 << 24;

/// The most FGN values all sources of a run may generate together (2^24,
/// about 4 s of generation; 97-0177R2's 9 sources need 9 x 2^15): what
/// bounds the time to build a run, whatever the sources, intervals and
/// lengths.
const MAX_FGN_TOTAL: u64 = 1 << 24;

/// Probes may not ask for more samples than this in one run.
const MAX_SAMPLES: u64 = 10_000_000;

impl Scenario {
    /// Checks the scenario and builds the simulation of replication
    /// `replication` with master seed `seed`.
    pub fn build(&self, seed: u64, replication: u64) -> Result<Simulation, ScenarioError> {
        self.build_with_capture(seed, replication, None)
    }

    /// [`build`](Self::build), and with `pcap_dir` a packet capture of the
    /// links `simulation.capture` names (every link without it): one pcap
    /// file per direction, `<from>-<to>.pcap` in `pcap_dir` (created if
    /// missing), written as the run goes.
    pub fn build_with_capture(
        &self,
        seed: u64,
        replication: u64,
        pcap_dir: Option<&Path>,
    ) -> Result<Simulation, ScenarioError> {
        self.build_with_outputs(seed, replication, pcap_dir, None)
    }

    /// [`build_with_capture`](Self::build_with_capture), and with
    /// `trace_file` a trace of the records `[trace]` asks for (every record
    /// without it) written there as CSV (`atmlab_net::sim::trace`).
    pub fn build_with_outputs(
        &self,
        seed: u64,
        replication: u64,
        pcap_dir: Option<&Path>,
        trace_file: Option<&Path>,
    ) -> Result<Simulation, ScenarioError> {
        if let Some(name) = &self.name {
            check_name("name".into(), name)?;
        }
        let duration = self.simulation.duration.0;
        if duration.is_zero() {
            return Err(err("simulation.duration", "must be longer than 0 s"));
        }
        let mut cx = Ctx {
            sc: self,
            b: NetworkBuilder::new(RngStreams::new(seed, replication)),
            auto_frames: Vec::new(),
            nodes: BTreeMap::new(),
            vcs: BTreeMap::new(),
            apps: BTreeMap::new(),
            fgn_budget: MAX_FGN_TOTAL,
        };
        cx.b.set_slot_phase(self.simulation.slot_phase.unwrap_or_default());
        cx.b.set_clock_tolerance(self.simulation.clock_tolerance_ppm.unwrap_or(0.0))
            .map_err(|e| err("simulation.clock_tolerance_ppm", e.to_string()))?;
        if let Some(limit) = self.simulation.max_cells_held {
            if !(1..=MAX_CELLS_HELD).contains(&limit.0) {
                return Err(err(
                    "simulation.max_cells_held",
                    format!("{} cells is outside 1..{MAX_CELLS_HELD} cells", limit.0),
                ));
            }
            cx.b.set_max_cells_held(limit.0);
        }
        cx.nodes()?;
        cx.links()?;
        cx.vcs()?;
        cx.resolve_frame_cells()?;
        cx.apps()?;
        cx.metrics()?;
        cx.probes()?;
        cx.capture(pcap_dir)?;
        cx.trace(trace_file)?;
        let meta = RunMeta { scenario: self.name.clone().unwrap_or_else(|| "scenario".into()), seed, replication };
        Ok(cx.b.build(meta, duration))
    }
}

impl<'a> Ctx<'a> {
    fn name(&mut self, path: String, name: &'a str) -> Result<(), ScenarioError> {
        check_name(path.clone(), name)?;
        if self.nodes.contains_key(name) {
            return Err(err(path, format!("the name '{name}' is used twice")));
        }
        Ok(())
    }

    fn nodes(&mut self) -> Result<(), ScenarioError> {
        for (i, h) in self.sc.hosts.iter().enumerate() {
            self.name(format!("hosts[{i}].name"), &h.name)?;
            let mtu = h.mtu.map_or(DEFAULT_MTU, |m| m.0);
            // Down to 28 bytes (a 20-byte header and one 8-byte fragment):
            // van den Bergh measured at MTU 48; 65527 is the AAL5 limit.
            if !(28..=65_527).contains(&mtu) {
                return Err(err(format!("hosts[{i}].mtu"), format!("{mtu} bytes is outside 28..65527")));
            }
            let enc = h.encapsulation.unwrap_or(Encapsulation::LlcSnap);
            let id = self.b.add_host(&h.name, mtu as u32, enc);
            self.b.set_fragmentation(id, h.fragmentation.unwrap_or_default());
            let time = |t: Option<Time>| t.map_or(Duration::ZERO, |t| t.0);
            let receive_queue = match h.cpu.receive_queue {
                Some(0) => return Err(err(format!("hosts[{i}].cpu.receive_queue"), "must hold at least 1 datagram")),
                Some(n) => {
                    Some(u32::try_from(n).map_err(|_| err(format!("hosts[{i}].cpu.receive_queue"), "too large"))?)
                }
                None => None,
            };
            let adapter_buffer = match h.adapter.buffer {
                Some(c) => Some(positive_cells(format!("hosts[{i}].adapter.buffer"), c)?),
                None => None,
            };
            if h.adapter.overflow.is_some() && adapter_buffer.is_none() {
                return Err(err(format!("hosts[{i}].adapter.overflow"), "needs a finite adapter.buffer"));
            }
            let model = HostModel {
                per_datagram: time(h.cpu.per_datagram),
                per_cell: time(h.cpu.per_cell),
                adapter_buffer,
                overflow: h.adapter.overflow.unwrap_or_default(),
                receive_per_datagram: time(h.cpu.receive_per_datagram),
                receive_queue,
            };
            self.b.set_host_model(id, model).map_err(|e| err(format!("hosts[{i}].adapter.buffer"), e.to_string()))?;
            if let Some(x) = &h.external {
                self.external(i, id, x)?;
            }
            self.nodes.insert(&h.name, NodeRef::Host(id));
        }
        for (i, s) in self.sc.switches.iter().enumerate() {
            self.name(format!("switches[{i}].name"), &s.name)?;
            let id = self.b.add_switch(&s.name);
            if s.vs_vd {
                self.b.set_vs_vd(id);
            }
            self.nodes.insert(&s.name, NodeRef::Switch(id));
        }
        Ok(())
    }

    /// `hosts[i].external`: the address (a unicast IPv4 address, unique)
    /// and the name of a congestion control.
    fn external(&mut self, i: usize, id: HostId, x: &ExternalSpec) -> Result<(), ScenarioError> {
        let path = format!("hosts[{i}].external.address");
        let address: std::net::Ipv4Addr = x
            .address
            .parse()
            .map_err(|_| err(&path, format!("'{}' is not an IPv4 address (like \"10.200.0.1\")", x.address)))?;
        if address.is_unspecified() || address.is_loopback() || address.is_multicast() || address.is_broadcast() {
            return Err(err(&path, format!("{address} is not a host's unicast address")));
        }
        self.b.set_external(id, address).map_err(|_| err(&path, format!("{address} is given to another host")))?;
        if let Some(c) = &x.congestion {
            let ok = !c.is_empty()
                && c.len() <= 16
                && c.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_');
            if !ok {
                return Err(err(
                    format!("hosts[{i}].external.congestion"),
                    format!("'{c}' is not a congestion control's name (like \"cubic\", \"reno\", \"bbr\")"),
                ));
            }
        }
        Ok(())
    }

    /// An `exec` application: the command of an external host, checked
    /// here and run only by `atmlab emulate`.
    fn exec_app(&self, path: &str, a: &AppSpec) -> Result<(), ScenarioError> {
        only_keys(path, a, &[])?;
        for (key, given) in [("vc", a.vc.is_some()), ("start_jitter", a.start_jitter.is_some())] {
            if given {
                return Err(err(format!("{path}.{key}"), "is not a key of an exec application"));
            }
        }
        let external = |name: &str| self.sc.hosts.iter().any(|h| h.name == name && h.external.is_some());
        let host = a.host.as_deref().ok_or_else(|| err(format!("{path}.host"), "an exec application needs a host"))?;
        if !external(host) {
            return Err(err(format!("{path}.host"), format!("'{host}' is no external host")));
        }
        let command = a.command.as_deref().unwrap_or_default();
        if command.trim().is_empty() {
            return Err(err(format!("{path}.command"), "an exec application needs a command"));
        }
        let mut rest = command;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            let name = &rest[open + 1..open + close];
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') && !external(name) {
                return Err(err(format!("{path}.command"), format!("{{{name}}} names no external host")));
            }
            rest = &rest[open + close + 1..];
        }
        Ok(())
    }

    fn node(&self, path: String, name: &str) -> Result<NodeRef, ScenarioError> {
        self.nodes.get(name).copied().ok_or_else(|| err(path, format!("no host or switch is named '{name}'")))
    }

    /// The configuration of the port of `from` toward `to_name`, and the
    /// policies in it whose largest frame is `"auto"` (category, key path,
    /// spec, pool), to be resolved once the VCs are known.
    #[allow(clippy::type_complexity)]
    fn port_config(
        &self,
        from: NodeRef,
        to_name: &str,
    ) -> Result<(PortConfig, Vec<(ServiceCategory, String, &'a DropPolicySpec, u32)>), ScenarioError> {
        let NodeRef::Switch(s) = from else {
            return Ok((PortConfig::host_adapter(), Vec::new()));
        };
        let sc: &'a Scenario = self.sc;
        let i = s.idx();
        let spec = &sc.switches[i];
        let over = spec.port_to.get(to_name);
        let base = format!("switches[{i}].port");
        let at = |key: &str| match over {
            Some(_) => format!("switches[{i}].port_to.{to_name}.{key}"),
            None => format!("{base}.{key}"),
        };
        let buffer = over.and_then(|o| o.buffer).or(spec.port.buffer).ok_or_else(|| {
            err(format!("{base}.buffer"), format!("the port from {} to {to_name} needs a buffer size", spec.name))
        })?;
        let buffer = positive_cells(at("buffer"), buffer)?;
        let default_policy = over.and_then(|o| o.drop_policy.as_ref()).or(spec.port.drop_policy.as_ref());
        if let Some(p) = default_policy
            && p.categories.as_ref().is_some_and(Vec::is_empty)
        {
            return Err(err(
                at("drop_policy.categories"),
                "names no category: give at least one of cbr, vbr, abr, ubr",
            ));
        }
        let mut class_buffers = [None; 4];
        let mut policies = [DropPolicy::TailDrop(TailDrop); 4];
        let mut auto = Vec::new();
        for c in ServiceCategory::ALL {
            let class = over.and_then(|o| o.classes.get(&c)).or(spec.port.classes.get(&c));
            let cpath = |key: &str| at(&format!("classes.{c}.{key}"));
            let own = class.and_then(|k| k.buffer).map(|b| positive_cells(cpath("buffer"), b)).transpose()?;
            class_buffers[c.index()] = own;
            let pool = own.unwrap_or(buffer);
            let (policy, ppath) = match class.and_then(|k| k.drop_policy.as_ref()) {
                Some(p) if p.categories.is_some() => {
                    return Err(err(
                        cpath("drop_policy.categories"),
                        format!(
                            "a class's policy applies to its class ({c}) alone; name categories in the port's drop_policy"
                        ),
                    ));
                }
                Some(p) => (Some(p), cpath("drop_policy")),
                // The port's policy covers the categories it names (UBR by
                // default); the others tail-drop.
                None => (default_policy.filter(|p| applies_to(p, c)), at("drop_policy")),
            };
            policies[c.index()] = match policy {
                None => DropPolicy::TailDrop(TailDrop),
                Some(p) => {
                    if p.frame_cells == Some(FrameCells::Auto) {
                        auto.push((c, ppath.clone(), p, pool));
                    }
                    drop_policy(ppath, p, pool, None)?
                }
            };
        }
        let sched_path = at("scheduler");
        let scheduler = match over.and_then(|o| o.scheduler).or(spec.port.scheduler) {
            None => SchedulerKind::StrictPriority(StrictPriority),
            Some(sc) => scheduler(&sched_path, &sc)?,
        };
        let clp_threshold = match over.and_then(|o| o.clp_threshold).or(spec.port.clp_threshold) {
            None => None,
            Some(t) if t.0 > u64::from(buffer) => {
                return Err(err(at("clp_threshold"), format!("{} cells exceeds the {buffer}-cell buffer", t.0)));
            }
            Some(t) => Some(t.0 as u32),
        };
        let per_vc = over.and_then(|o| o.scheduler).or(spec.port.scheduler).map(|s| s.kind)
            == Some(SchedulerKindName::RoundRobin);
        let config = PortConfig {
            queueing: if per_vc { Queueing::PerVc } else { Queueing::PerCategory },
            buffer: Some(buffer),
            class_buffers,
            policies,
            scheduler,
            clp_threshold,
        };
        Ok((config, auto))
    }

    /// Sets the policies whose `frame_cells` is `"auto"`: the largest AAL5
    /// frame any VC sends through the port, a full-sized IP datagram of the
    /// VC's path MTU (the smaller MTU of its two hosts, which TCP's MSS
    /// follows) in the sending host's encapsulation (002's MTU*).
    fn resolve_frame_cells(&mut self) -> Result<(), ScenarioError> {
        for a in std::mem::take(&mut self.auto_frames) {
            let mut frame = None;
            for (_, h) in self.vcs.values() {
                let mtu = self.path_mtu(h);
                let directions = [(&h.forward, h.src.host), (&h.reverse, h.dst.host)];
                for (ports, sender) in directions.into_iter().take(if h.duplex { 2 } else { 1 }) {
                    if ports.contains(&a.port) {
                        let cells = self.b.host(sender).encapsulation.cells_for_datagram(mtu);
                        frame = frame.max(Some(u64::from(cells)));
                    }
                }
            }
            let Some(frame) = frame else {
                return Err(err(
                    format!("{}.frame_cells", a.path),
                    "\"auto\" needs a VC through the port to take the largest frame from",
                ));
            };
            let policy = drop_policy(a.path, a.spec, a.pool, Some(frame))?;
            self.b.set_drop_policy(a.port, a.category, policy);
        }
        Ok(())
    }

    /// A host adapter's peak cell rate, or a switch port's shaping rate.
    fn shape(&mut self, from: NodeRef, to: &str, port: PortId) -> Result<(), ScenarioError> {
        let (rate, path) = match from {
            NodeRef::Host(h) => {
                let i = h.idx();
                (self.sc.hosts[i].adapter.peak, format!("hosts[{i}].adapter.peak"))
            }
            NodeRef::Switch(s) => {
                let i = s.idx();
                let spec = &self.sc.switches[i];
                match spec.port_to.get(to).and_then(|o| o.shape) {
                    Some(r) => (Some(r), format!("switches[{i}].port_to.{to}.shape")),
                    None => (spec.port.shape, format!("switches[{i}].port.shape")),
                }
            }
        };
        if let Some(r) = rate {
            self.b.shape_port(port, r.0).map_err(|e| err(path, e.to_string()))?;
        }
        Ok(())
    }

    /// The ABR controller of a switch's port toward `to`, if its `abr`
    /// table asks for one.
    fn abr_control(&mut self, from: NodeRef, to: &str, port: PortId) -> Result<(), ScenarioError> {
        let NodeRef::Switch(s) = from else { return Ok(()) };
        let i = s.idx();
        let spec = &self.sc.switches[i];
        let (abr, path) = match spec.port_to.get(to).and_then(|o| o.abr.as_ref()) {
            Some(a) => (Some(a), format!("switches[{i}].port_to.{to}.abr")),
            None => (spec.port.abr.as_ref(), format!("switches[{i}].port.abr")),
        };
        if let Some(config) = abr.map(|a| crate::abr_switch::controller(&path, a)).transpose()?.flatten() {
            self.b.set_abr_control(port, config).map_err(|e| match e {
                BuildError::Control(p) => err(format!("{path}.{}", crate::abr_switch::param_key(p.param)), p.problem),
                e => err(path.clone(), e.to_string()),
            })?;
        }
        Ok(())
    }

    fn links(&mut self) -> Result<(), ScenarioError> {
        for (i, l) in self.sc.links.iter().enumerate() {
            let a = self.node(format!("links[{i}].between[0]"), &l.between[0])?;
            let b = self.node(format!("links[{i}].between[1]"), &l.between[1])?;
            let (pab, auto_ab) = self.port_config(a, &l.between[1])?;
            let (pba, auto_ba) = self.port_config(b, &l.between[0])?;
            let (fwd, bwd) = self
                .b
                .add_link(a, b, l.rate.0, l.delay.0, pab, pba)
                .map_err(|e| err(format!("links[{i}]"), e.to_string()))?;
            for (from, to, port) in [(a, &l.between[1], fwd), (b, &l.between[0], bwd)] {
                self.shape(from, to, port)?;
                self.abr_control(from, to, port)?;
            }
            for (port, autos) in [(fwd, auto_ab), (bwd, auto_ba)] {
                for (category, path, spec, pool) in autos {
                    self.auto_frames.push(AutoFrame { port, category, path, spec, pool });
                }
            }
            if let Some(loss) = &l.loss {
                let model = loss_model(&format!("links[{i}].loss"), loss)?;
                let dir = loss.direction.unwrap_or(LossDirection::Both);
                if dir != LossDirection::Backward {
                    self.b.set_link_loss(fwd, model.clone());
                }
                if dir != LossDirection::Forward {
                    self.b.set_link_loss(bwd, model);
                }
            }
        }
        for (i, s) in self.sc.switches.iter().enumerate() {
            let me = self.nodes[s.name.as_str()];
            for to in s.port_to.keys() {
                let peer = self.node(format!("switches[{i}].port_to.{to}"), to)?;
                if self.b.port_toward(me, peer).is_none() {
                    return Err(err(format!("switches[{i}].port_to.{to}"), format!("{} has no link to {to}", s.name)));
                }
            }
        }
        Ok(())
    }

    fn vcs(&mut self) -> Result<(), ScenarioError> {
        for (i, v) in self.sc.vcs.iter().enumerate() {
            let path = format!("vcs[{i}]");
            check_name(format!("{path}.name"), &v.name)?;
            if self.vcs.contains_key(v.name.as_str()) {
                return Err(err(format!("{path}.name"), format!("the VC name '{}' is used twice", v.name)));
            }
            let nodes = v
                .path
                .iter()
                .enumerate()
                .map(|(j, n)| self.node(format!("{path}.path[{j}]"), n))
                .collect::<Result<Vec<_>, _>>()?;
            let label = v.label.as_deref().map(|l| parse_label(format!("{path}.label"), l)).transpose()?;
            let category = match (v.category, &v.abr) {
                (Some(c), Some(_)) if c != ServiceCategory::Abr => {
                    return Err(err(format!("{path}.category"), format!("a VC with abr parameters is abr, not {c}")));
                }
                (Some(c), _) => c,
                (None, Some(_)) => ServiceCategory::Abr,
                (None, None) => ServiceCategory::Ubr,
            };
            let handle = if v.simplex {
                self.b.add_simplex_vc(&nodes, category, label)
            } else {
                self.b.add_vc(&nodes, category, label)
            }
            .map_err(|e| err(format!("{path}.path"), e.to_string()))?;
            self.b.name_vc(&handle, &v.name);
            if category == ServiceCategory::Abr {
                // An abr VC is an ABR VC: with its `abr` table, or the defaults.
                let pcr = nodes
                    .iter()
                    .filter_map(|n| match n {
                        NodeRef::Host(h) => self.b.host(*h).port.map(|p| self.b.port(p).rate),
                        NodeRef::Switch(_) => None,
                    })
                    .min()
                    .expect("a VC has two hosts with links");
                let params = abr_params(v.abr.as_ref().unwrap_or(&AbrSpec::default()), pcr);
                self.b.set_abr(&v.name, &handle, &params).map_err(|e| match e {
                    BuildError::AbrParams(ref p) => err(format!("{path}.abr.{}", p.name.to_lowercase()), e.to_string()),
                    BuildError::Abr(m) => {
                        err(if v.simplex { format!("{path}.simplex") } else { format!("{path}.abr") }, m)
                    }
                    e => err(format!("{path}.abr"), e.to_string()),
                })?;
            }
            let contract = v.contract.as_ref().map(|c| contract(&format!("{path}.contract"), c)).transpose()?;
            if let Some(upc) = &v.upc {
                let contract =
                    contract.ok_or_else(|| err(format!("{path}.upc"), "policing needs the VC's contract"))?;
                let hop = match &upc.at {
                    None => 1,
                    Some(name) => {
                        v.path[1..v.path.len() - 1].iter().position(|n| n == name).map(|j| j + 1).ok_or_else(|| {
                            err(format!("{path}.upc.at"), format!("'{name}' is not a switch on the VC's path"))
                        })?
                    }
                };
                self.b
                    .add_upc(&v.name, &handle, hop, contract, upc.action.unwrap_or_default())
                    .map_err(|e| err(format!("{path}.upc"), e.to_string()))?;
            }
            self.vcs.insert(&v.name, (i, handle));
        }
        Ok(())
    }

    fn vc(&self, path: String, name: &str) -> Result<VcHandle, ScenarioError> {
        self.vcs.get(name).map(|(_, h)| h.clone()).ok_or_else(|| err(path, format!("no VC is named '{name}'")))
    }

    /// `start`, plus a uniform draw from `[0, jitter)` on the application's
    /// own stream `app:<name>:start`.
    fn start(&self, app: &str, start: Option<Time>, jitter: Option<Time>) -> SimTime {
        let mut t = SimTime::ZERO + start.map_or(Duration::ZERO, |s| s.0);
        if let Some(j) = jitter.filter(|j| !j.0.is_zero()) {
            let mut rng = self.b.rng().stream(&format!("app:{app}:start"));
            t += Duration::from_ps(rng.random_range(0..j.0.as_ps()));
        }
        t
    }

    fn apps(&mut self) -> Result<(), ScenarioError> {
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, a) in self.sc.apps.iter().enumerate() {
            let path = format!("apps[{i}]");
            check_name(format!("{path}.name"), &a.name)?;
            if let Some(j) = names.insert(&a.name, i) {
                return Err(err(
                    format!("{path}.name"),
                    format!("the application name '{}' is also used by apps[{j}]", a.name),
                ));
            }
            if a.kind == AppKind::Exec {
                self.exec_app(&path, a)?;
                continue;
            }
            for (key, given) in
                [("host", a.host.is_some()), ("command", a.command.is_some()), ("wait", a.wait.is_some())]
            {
                if given {
                    return Err(err(
                        format!("{path}.{key}"),
                        format!("is not a key of a {} application", a.kind.name()),
                    ));
                }
            }
            let vc = a.vc.as_deref().ok_or_else(|| err(format!("{path}.vc"), "missing field `vc`"))?;
            let handle = self.vc(format!("{path}.vc"), vc)?;
            let t = self.start(&a.name, a.start, a.start_jitter);
            match a.kind {
                AppKind::TcpBulk => {
                    only_keys(&path, a, &["bytes", "tcp", "duration"])?;
                    let mtu = self.path_mtu(&handle);
                    let none = TcpSpec::default();
                    let cfg = tcp_config(&path, &self.sc.tcp, a.tcp.as_ref().unwrap_or(&none), mtu)?;
                    let bytes = a.bytes.unwrap_or_default().0;
                    let id = self.b.add_tcp(&a.name, &handle, cfg, t, bytes).map_err(|e| {
                        let key = if matches!(e, BuildError::SimplexVc(_)) { "vc" } else { "tcp.mss" };
                        err(format!("{path}.{key}"), e.to_string())
                    })?;
                    if let Some(d) = a.duration {
                        if a.bytes.is_some_and(|b| b.0.is_some()) {
                            return Err(err(format!("{path}.duration"), "give bytes or duration, not both"));
                        }
                        self.b.set_tcp_stop(id, t + d.0);
                    }
                    self.apps.insert(&a.name, AppRef::Tcp(id));
                }
                AppKind::Onoff => {
                    only_keys(&path, a, &["peak", "on", "off", "period", "duty"])?;
                    let peak =
                        a.peak.ok_or_else(|| err(format!("{path}.peak"), "an onoff application needs a peak rate"))?.0;
                    let (on, off) = match (a.on, a.off, a.period, a.duty) {
                        (Some(on), Some(off), None, None) => (on.0, off.0),
                        (None, None, Some(period), Some(duty)) => {
                            if !(duty > 0.0 && duty <= 1.0) {
                                return Err(err(format!("{path}.duty"), format!("{duty} is not in (0, 1]")));
                            }
                            let on = Duration::from_ps((period.0.as_ps() as f64 * duty).round() as u64);
                            (on, period.0 - on)
                        }
                        _ => {
                            return Err(err(
                                path.clone(),
                                "an onoff application needs either on and off, or period and duty",
                            ));
                        }
                    };
                    let params = OnOffParams { peak, on, off, start: t };
                    let app = self.b.add_onoff(&a.name, &handle, params).map_err(|e| {
                        let key = match e {
                            BuildError::PeakAboveLink { .. } => "peak",
                            BuildError::Abr(_) => "vc",
                            _ => "on",
                        };
                        err(format!("{path}.{key}"), e.to_string())
                    })?;
                    self.apps.insert(&a.name, AppRef::Cells(app));
                }
                AppKind::Exec => unreachable!("exec apps are taken above"),
                AppKind::AbrPersistent => {
                    only_keys(&path, a, &[])?;
                    let app = self
                        .b
                        .add_abr_persistent(&a.name, &handle, t)
                        .map_err(|e| err(format!("{path}.vc"), e.to_string()))?;
                    self.apps.insert(&a.name, AppRef::Cells(app));
                }
                AppKind::Piecewise => {
                    only_keys(&path, a, &["sources", "rates", "intervals", "cycle", "frame_cells", "peak"])?;
                    let app = self.piecewise(&path, a, &handle, t)?;
                    self.apps.insert(&a.name, AppRef::Cells(app));
                }
                AppKind::UdpCbr | AppKind::Udp => {
                    let cbr = a.kind == AppKind::UdpCbr;
                    let keys: &[&str] = if cbr {
                        &["payload", "interval", "count", "max_payload", "record_arrivals"]
                    } else {
                        &["payload", "interval", "count", "bytes", "duration", "max_payload", "record_arrivals"]
                    };
                    only_keys(&path, a, keys)?;
                    let kind = a.kind.name();
                    let need = |k: &str| err(format!("{path}.{k}"), format!("a {kind} application needs a {k}"));
                    let payload = dist(&path, "payload", a.payload.ok_or_else(|| need("payload"))?, cbr, |b| b.0)?;
                    let interval =
                        dist(&path, "interval", a.interval.ok_or_else(|| need("interval"))?, cbr, |t| t.0.as_ps())?;
                    if matches!(interval, Dist::Constant(0)) {
                        return Err(err(format!("{path}.interval"), "must be longer than 0 s"));
                    }
                    let first = match payload {
                        Dist::Constant(v) => {
                            u32::try_from(v).map_err(|_| err(format!("{path}.payload"), "too large"))?
                        }
                        _ => 0,
                    };
                    let max_payload = a.max_payload.map(|m| m.0.min(u64::from(u32::MAX)) as u32);
                    if max_payload.is_some() && !payload.is_constant() {
                        return Err(err(format!("{path}.max_payload"), "needs a constant payload"));
                    }
                    let record = match a.record_arrivals {
                        Some(r) if r.count < 2 => {
                            return Err(err(format!("{path}.record_arrivals.count"), "needs at least 2 arrivals"));
                        }
                        Some(r) => Some((SimTime::ZERO + r.from.map_or(Duration::ZERO, |f| f.0), r.count)),
                        None => None,
                    };
                    let mean_interval = Duration::from_ps(interval.mean().round().max(1.0) as u64);
                    let params = CbrParams {
                        payload: first,
                        interval: mean_interval,
                        start: t,
                        count: a.count,
                        max_payload,
                        record,
                    };
                    let id = self
                        .b
                        .add_udp_cbr(&a.name, &handle, params)
                        .map_err(|e| err(format!("{path}.payload"), e.to_string()))?;
                    if !cbr {
                        let bytes = a.bytes.and_then(|b| b.0);
                        let stop = a.duration.map(|d| t + d.0);
                        self.b.vary_udp(id, payload, interval, bytes, stop).map_err(|e| {
                            let key = match e {
                                BuildError::Distribution(k) => k,
                                _ => "payload",
                            };
                            err(format!("{path}.{key}"), e.to_string())
                        })?;
                    }
                    self.apps.insert(&a.name, AppRef::Udp(id));
                }
            }
        }
        Ok(())
    }

    /// A piecewise application: `sources` sources, each with its own rates
    /// and interval lengths from its own streams (`app:<name>:<k>:rates`,
    /// `app:<name>:<k>:intervals`).
    fn piecewise(&mut self, path: &str, a: &AppSpec, vc: &VcHandle, start: SimTime) -> Result<u32, ScenarioError> {
        let n = a.sources.unwrap_or(1);
        if !(1..=MAX_SOURCES).contains(&n) {
            return Err(err(format!("{path}.sources"), format!("{n} is not in 1..={MAX_SOURCES}")));
        }
        let rates =
            a.rates.as_ref().ok_or_else(|| err(format!("{path}.rates"), "a piecewise application needs rates"))?;
        let intervals =
            a.intervals.ok_or_else(|| err(format!("{path}.intervals"), "a piecewise application needs intervals"))?;
        let (shortest, ipath) = match intervals {
            IntervalsSpec::Constant(t) => (t.0, format!("{path}.intervals")),
            IntervalsSpec::Uniform([lo, hi]) => {
                if lo.0 > hi.0 {
                    return Err(err(format!("{path}.intervals.uniform"), "the first bound is above the second"));
                }
                (lo.0, format!("{path}.intervals.uniform[0]"))
            }
        };
        if shortest.is_zero() {
            return Err(err(ipath, "must be longer than 0 s"));
        }
        // The most intervals the run can hold: every source needs that many rates.
        let needed = self.sc.simulation.duration.0.as_ps() / shortest.as_ps() + 1;
        let cycle = a.cycle.unwrap_or(false);
        let mut patterns = Vec::with_capacity(n as usize);
        for k in 0..n {
            let lengths = match intervals {
                IntervalsSpec::Constant(t) => Intervals::Constant(t.0),
                IntervalsSpec::Uniform([lo, hi]) => Intervals::Uniform {
                    min: lo.0,
                    max: hi.0,
                    rng: Box::new(self.b.rng().stream(&format!("app:{}:{k}:intervals", a.name))),
                },
            };
            let (list, peak) = match rates {
                RatesSpec::List(list) => {
                    if list.is_empty() {
                        return Err(err(format!("{path}.rates"), "the list of rates is empty"));
                    }
                    let list: Vec<f64> = list.iter().map(|r| r.0 as f64).collect();
                    let peak = a.peak.map_or_else(|| list.iter().copied().fold(0.0, f64::max), |p| p.0.bps() as f64);
                    if let Some(j) = list.iter().position(|r| *r > peak) {
                        return Err(err(format!("{path}.rates[{j}]"), "is above the application's peak"));
                    }
                    (list, peak)
                }
                RatesSpec::Fgn(f) => {
                    if a.peak.is_some() {
                        return Err(err(
                            format!("{path}.peak"),
                            "an fgn rate sequence has its own peak: rates.fgn.peak",
                        ));
                    }
                    let fpath = format!("{path}.rates.fgn");
                    let stream = format!("app:{}:{k}:rates", a.name);
                    let mut rng = self.b.rng().stream(&stream);
                    let budget = (&mut self.fgn_budget, u64::from(n - k));
                    (fgn_rates(&fpath, f, needed, cycle, budget, &mut rng)?, f.peak.0.bps() as f64)
                }
            };
            patterns.push(Piecewise::new(list, cycle, lengths, start, peak));
        }
        self.b.add_piecewise(&a.name, vc, patterns, a.frame_cells).map_err(|e| {
            let key = match e {
                BuildError::PeakAboveLink { .. } => "rates",
                BuildError::FrameCells => "frame_cells",
                BuildError::Abr(_) => "vc",
                _ => "intervals",
            };
            err(format!("{path}.{key}"), e.to_string())
        })
    }

    fn probes(&mut self) -> Result<(), ScenarioError> {
        let duration = self.sc.simulation.duration.0;
        let mut series: BTreeMap<String, usize> = BTreeMap::new();
        for (i, p) in self.sc.probes.iter().enumerate() {
            let path = format!("probes[{i}]");
            if p.interval.0.is_zero() {
                return Err(err(format!("{path}.interval"), "must be longer than 0 s"));
            }
            if duration.as_ps() / p.interval.0.as_ps() > MAX_SAMPLES {
                return Err(err(format!("{path}.interval"), format!("more than {MAX_SAMPLES} samples in the run")));
            }
            if p.kind.of_abr().is_none() {
                for (key, given) in [("vc", p.vc.is_some()), ("direction", p.direction.is_some())] {
                    if given {
                        return Err(err(
                            format!("{path}.{key}"),
                            format!("a {} probe does not watch an ABR VC", p.kind.name()),
                        ));
                    }
                }
            }
            let (target, label) = if let Some(quantity) = p.kind.of_abr() {
                for (key, given) in [("app", p.app.is_some()), ("port", p.port.is_some())] {
                    if given {
                        return Err(err(
                            format!("{path}.{key}"),
                            format!("a {} probe watches an ABR VC: give vc (and direction)", p.kind.name()),
                        ));
                    }
                }
                let name = p
                    .vc
                    .as_deref()
                    .ok_or_else(|| err(format!("{path}.vc"), format!("a {} probe needs an ABR vc", p.kind.name())))?;
                let handle = self.vc(format!("{path}.vc"), name)?;
                let direction = p.direction.unwrap_or_default();
                let end = match direction {
                    VcDirection::Forward => handle.src,
                    VcDirection::Backward => handle.dst,
                };
                let e = self.b.host(end.host).vcs[end.vc as usize]
                    .abr
                    .ok_or_else(|| err(format!("{path}.vc"), format!("VC '{name}' is not an ABR VC")))?;
                let dir = if direction == VcDirection::Forward { "forward" } else { "backward" };
                (ProbeTarget::Abr(e, quantity), format!("{name}:{dir}"))
            } else if let Some(quantity) = p.kind.of_port() {
                if p.app.is_some() {
                    return Err(err(
                        format!("{path}.app"),
                        format!("a {} probe watches a port, not an app", p.kind.name()),
                    ));
                }
                let [a, b] = p.port.as_ref().ok_or_else(|| {
                    err(format!("{path}.port"), format!("a {} probe needs a port [from, to]", p.kind.name()))
                })?;
                let na = self.node(format!("{path}.port[0]"), a)?;
                let nb = self.node(format!("{path}.port[1]"), b)?;
                let q = self
                    .b
                    .port_toward(na, nb)
                    .ok_or_else(|| err(format!("{path}.port"), format!("no link from {a} to {b}")))?;
                if let Some(reading) = p.kind.reading() {
                    let algorithm = self.b.abr_control(q).map(|c| c.algorithm());
                    if !algorithm.is_some_and(|al| al.readings().iter().any(|r| r.name == reading)) {
                        let has = algorithm.map_or("no controller".to_string(), |al| al.name().to_string());
                        return Err(err(
                            format!("{path}.port"),
                            format!(
                                "a {} probe reads a switch controller's {reading}, and the port {a}->{b} has {has}, \
                                 which does not report it",
                                p.kind.name()
                            ),
                        ));
                    }
                }
                (ProbeTarget::Port(q, quantity), format!("{a}->{b}"))
            } else {
                if p.port.is_some() {
                    return Err(err(
                        format!("{path}.port"),
                        format!("a {} probe watches an app, not a port", p.kind.name()),
                    ));
                }
                let name = p
                    .app
                    .as_deref()
                    .ok_or_else(|| err(format!("{path}.app"), format!("a {} probe needs an app", p.kind.name())))?;
                let app = *self
                    .apps
                    .get(name)
                    .ok_or_else(|| err(format!("{path}.app"), format!("no application is named '{name}'")))?;
                let (target, what) = match app {
                    AppRef::Tcp(c) => (p.kind.of_connection().map(|q| ProbeTarget::Conn(c, q)), "a TCP"),
                    AppRef::Udp(f) => (p.kind.of_flow().then_some(ProbeTarget::Flow(f)), "a UDP"),
                    AppRef::Cells(a) => (p.kind.of_cell_app().then_some(ProbeTarget::CellApp(a)), "a cell-source"),
                };
                let target = target.ok_or_else(|| {
                    err(format!("{path}.app"), format!("'{name}' is {what} application: it has no {}", p.kind.name()))
                })?;
                (target, name.to_owned())
            };
            let name = match &p.name {
                Some(n) => {
                    check_name(format!("{path}.name"), n)?;
                    n.clone()
                }
                None => format!("{}:{label}", p.kind.name()),
            };
            // Results name the series by their names: two of one name would be one.
            if let Some(j) = series.insert(name.clone(), i) {
                return Err(err(
                    format!("{path}.name"),
                    format!("probes[{j}] already records a series named '{name}'; give one of them another name"),
                ));
            }
            self.b.add_probe(ProbeSpec { name, target, interval: p.interval.0 });
        }
        Ok(())
    }

    /// The smaller MTU of the VC's two hosts (TCP's default MSS is MTU - 40).
    fn path_mtu(&self, h: &VcHandle) -> u32 {
        self.b.host(h.src.host).mtu.min(self.b.host(h.dst.host).mtu)
    }

    /// The captured link directions (`simulation.capture`, checked with or
    /// without a directory) and, with `dir`, their files.
    fn capture(&mut self, dir: Option<&Path>) -> Result<(), ScenarioError> {
        let mut chosen = BTreeSet::new();
        if let Some(list) = &self.sc.simulation.capture {
            for (i, [a, b]) in list.iter().enumerate() {
                let na = self.node(format!("simulation.capture[{i}][0]"), a)?;
                let nb = self.node(format!("simulation.capture[{i}][1]"), b)?;
                if self.b.port_toward(na, nb).is_none() {
                    return Err(err(format!("simulation.capture[{i}]"), format!("no link between {a} and {b}")));
                }
                chosen.insert(if self.sc.links.iter().any(|l| l.between == [a.clone(), b.clone()]) {
                    [a.as_str(), b.as_str()]
                } else {
                    [b.as_str(), a.as_str()]
                });
            }
        }
        let mut inputs = Vec::new();
        if let Some(list) = &self.sc.simulation.capture_input {
            for (i, [a, b]) in list.iter().enumerate() {
                let na = self.node(format!("simulation.capture_input[{i}][0]"), a)?;
                let nb = self.node(format!("simulation.capture_input[{i}][1]"), b)?;
                let port = self
                    .b
                    .port_toward(na, nb)
                    .ok_or_else(|| err(format!("simulation.capture_input[{i}]"), format!("no link from {a} to {b}")))?;
                inputs.push((i, a.as_str(), b.as_str(), port));
            }
        }
        let Some(dir) = dir else { return Ok(()) };
        for (i, a, b, port) in inputs {
            let file = format!("{a}-{b}.input.pcap");
            if a.contains(['/', '\\']) || b.contains(['/', '\\']) || a.starts_with('.') {
                return Err(err(
                    format!("simulation.capture_input[{i}]"),
                    format!("the port {a} -> {b} cannot be named as a file ({file:?}): rename the node"),
                ));
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| err("simulation.capture", format!("capture directory {}: {e}", dir.display())))?;
            let path = dir.join(&file);
            let f = std::fs::File::create(&path).map_err(|e| {
                err(format!("simulation.capture_input[{i}]"), format!("cannot create {}: {e}", path.display()))
            })?;
            self.b
                .capture_input(
                    port,
                    path.display().to_string(),
                    Box::new(std::io::BufWriter::with_capacity(1 << 16, f)),
                )
                .map_err(|e| err(format!("simulation.capture_input[{i}]"), e.to_string()))?;
        }
        let links: Vec<[&str; 2]> = match &self.sc.simulation.capture {
            Some(_) => chosen.into_iter().collect(),
            None => self.sc.links.iter().map(|l| [l.between[0].as_str(), l.between[1].as_str()]).collect(),
        };
        let dir_err =
            |e: std::io::Error| err("simulation.capture", format!("capture directory {}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(dir_err)?;
        let mut files = BTreeSet::new();
        for [a, b] in links {
            for (from, to) in [(a, b), (b, a)] {
                let file = format!("{from}-{to}.pcap");
                if from.contains(['/', '\\']) || to.contains(['/', '\\']) || from.starts_with('.') {
                    return Err(err(
                        "simulation.capture",
                        format!("the link {from} -> {to} cannot be named as a file ({file:?}): rename the node"),
                    ));
                }
                if !files.insert(file.clone()) {
                    return Err(err(
                        "simulation.capture",
                        format!("two link directions would both be written to {file:?}: rename a node"),
                    ));
                }
                let path = dir.join(&file);
                let f = std::fs::File::create(&path).map_err(|e| {
                    err("simulation.capture", format!("cannot create the capture file {}: {e}", path.display()))
                })?;
                let port = self.b.port_toward(self.nodes[from], self.nodes[to]).expect("a link has both directions");
                let out = Box::new(std::io::BufWriter::with_capacity(1 << 16, f));
                self.b.capture(port, path.display().to_string(), out);
            }
        }
        Ok(())
    }

    /// The trace (`[trace]`, checked with or without a file) and, with
    /// `file`, where it is written.
    fn trace(&mut self, file: Option<&Path>) -> Result<(), ScenarioError> {
        let t = self.sc.trace.clone().unwrap_or_default();
        let mut spec = TraceSpec::default();
        if let Some(kinds) = &t.kinds {
            if kinds.is_empty() {
                return Err(err("trace.kinds", "an empty list traces nothing: leave it out for every kind"));
            }
            spec.kinds = kinds
                .iter()
                .map(|k| match k {
                    TraceKindName::Drop => TraceKind::Drop,
                    TraceKindName::Frame => TraceKind::Frame,
                    TraceKindName::Rm => TraceKind::Rm,
                    TraceKindName::Control => TraceKind::Control,
                    TraceKindName::Tcp => TraceKind::Tcp,
                })
                .collect();
        }
        if let Some(vcs) = &t.vcs {
            for (i, v) in vcs.iter().enumerate() {
                if !self.vcs.contains_key(v.as_str()) {
                    return Err(err(format!("trace.vcs[{i}]"), format!("no VC named {v}")));
                }
            }
            spec.vcs = Some(vcs.clone());
        }
        if let Some(ports) = &t.ports {
            let mut names = Vec::new();
            for (i, [a, b]) in ports.iter().enumerate() {
                let na = self.node(format!("trace.ports[{i}][0]"), a)?;
                let nb = self.node(format!("trace.ports[{i}][1]"), b)?;
                if self.b.port_toward(na, nb).is_none() {
                    return Err(err(format!("trace.ports[{i}]"), format!("no link from {a} to {b}")));
                }
                names.push(format!("{a}->{b}"));
            }
            spec.ports = Some(names);
        }
        let base = SimTime::ZERO;
        if let Some(from) = t.from {
            spec.from = base + from.0;
        }
        if let Some(until) = t.until {
            spec.until = base + until.0;
            if spec.until <= spec.from {
                return Err(err("trace.until", "must be later than trace.from"));
            }
        }
        let Some(path) = file else { return Ok(()) };
        let f = std::fs::File::create(path)
            .map_err(|e| err("trace", format!("cannot create the trace file {}: {e}", path.display())))?;
        self.b.trace(spec, Box::new(std::io::BufWriter::with_capacity(1 << 16, f)));
        Ok(())
    }

    fn metrics(&mut self) -> Result<(), ScenarioError> {
        let port = match &self.sc.metrics.efficiency_link {
            Some([a, b]) => {
                let na = self.node("metrics.efficiency_link[0]".into(), a)?;
                let nb = self.node("metrics.efficiency_link[1]".into(), b)?;
                Some(
                    self.b
                        .port_toward(na, nb)
                        .ok_or_else(|| err("metrics.efficiency_link", format!("no link from {a} to {b}")))?,
                )
            }
            None => self.slowest_tcp_port(),
        };
        if let Some(p) = port {
            self.b.set_efficiency_port(p);
        }
        self.b.set_efficiency_capacity(self.sc.metrics.efficiency_capacity.unwrap_or_default());
        Ok(())
    }

    /// The slowest port any TCP connection's data crosses (first in path
    /// order among equals).
    fn slowest_tcp_port(&self) -> Option<PortId> {
        let mut best: Option<PortId> = None;
        for a in &self.sc.apps {
            if a.kind == AppKind::TcpBulk
                && let Some((_, h)) = a.vc.as_deref().and_then(|v| self.vcs.get(v))
            {
                for &p in &h.forward {
                    if best.is_none_or(|b| self.b.port(p).rate < self.b.port(b).rate) {
                        best = Some(p);
                    }
                }
            }
        }
        best
    }
}

fn loss_model(path: &str, l: &LossSpec) -> Result<LossModel, ScenarioError> {
    if l.kind != LossKind::Frames && l.frames.is_some() {
        return Err(err(format!("{path}.frames"), "is a key of kind = \"frames\" loss only"));
    }
    match l.kind {
        LossKind::Bernoulli => {
            if l.one_in.is_some() || l.phase.is_some() {
                let key = if l.one_in.is_some() { "one_in" } else { "phase" };
                return Err(err(format!("{path}.{key}"), "is not a key of bernoulli loss (use clr)"));
            }
            let p = l.clr.ok_or_else(|| err(format!("{path}.clr"), "bernoulli loss needs a clr"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(err(format!("{path}.clr"), format!("{p} is not a probability in [0, 1]")));
            }
            Ok(LossModel::Bernoulli(p))
        }
        LossKind::Periodic => {
            if l.clr.is_some() {
                return Err(err(format!("{path}.clr"), "is not a key of periodic loss (use one_in)"));
            }
            match l.one_in {
                Some(n) if n >= 1 => Ok(match l.phase {
                    Some(LossPhase::Random) => LossModel::PeriodicRandomPhase(n),
                    Some(LossPhase::Start) | None => LossModel::Periodic(n),
                }),
                Some(_) => Err(err(format!("{path}.one_in"), "must be at least 1")),
                None => Err(err(format!("{path}.one_in"), "periodic loss needs one_in")),
            }
        }
        LossKind::Frames => {
            for (key, given) in [("clr", l.clr.is_some()), ("one_in", l.one_in.is_some()), ("phase", l.phase.is_some())]
            {
                if given {
                    return Err(err(format!("{path}.{key}"), "is not a key of frames loss (use frames)"));
                }
            }
            let frames = l.frames.as_ref().ok_or_else(|| {
                err(format!("{path}.frames"), "frames loss needs frames, a list of frame numbers (from 1)")
            })?;
            if frames.is_empty() {
                return Err(err(format!("{path}.frames"), "is empty: list the frame numbers to lose (from 1)"));
            }
            for (j, &n) in frames.iter().enumerate() {
                if n == 0 {
                    return Err(err(format!("{path}.frames[{j}]"), "frame numbers count from 1"));
                }
                if j > 0 && n <= frames[j - 1] {
                    let prev = frames[j - 1];
                    return Err(err(
                        format!("{path}.frames[{j}]"),
                        format!("{n} follows {prev}: frame numbers must be strictly increasing"),
                    ));
                }
            }
            Ok(LossModel::Frames(frames.clone()))
        }
    }
}

/// A `Varying` quantity as the simulator's distribution (`constant_only`:
/// the kind takes constants only).
fn dist<T: Copy>(
    path: &str,
    key: &str,
    v: Varying<T>,
    constant_only: bool,
    raw: impl Fn(T) -> u64,
) -> Result<Dist, ScenarioError> {
    Ok(match v {
        Varying::Constant(c) => Dist::Constant(raw(c)),
        _ if constant_only => {
            return Err(err(
                format!("{path}.{key}"),
                "a udp_cbr application is constant; use kind = \"udp\" for a distribution",
            ));
        }
        Varying::Exponential(m) => Dist::Exponential { mean: raw(m) as f64 },
        Varying::Bivalue([x, y], p) => Dist::Bivalue { values: [raw(x), raw(y)], p },
    })
}

/// Refuses keys that belong to another kind of application.
fn only_keys(path: &str, a: &AppSpec, allowed: &[&str]) -> Result<(), ScenarioError> {
    let present = [
        ("bytes", a.bytes.is_some()),
        ("tcp", a.tcp.is_some()),
        ("payload", a.payload.is_some()),
        ("interval", a.interval.is_some()),
        ("count", a.count.is_some()),
        ("max_payload", a.max_payload.is_some()),
        ("peak", a.peak.is_some()),
        ("on", a.on.is_some()),
        ("off", a.off.is_some()),
        ("period", a.period.is_some()),
        ("duty", a.duty.is_some()),
        ("duration", a.duration.is_some()),
        ("record_arrivals", a.record_arrivals.is_some()),
        ("sources", a.sources.is_some()),
        ("rates", a.rates.is_some()),
        ("intervals", a.intervals.is_some()),
        ("cycle", a.cycle.is_some()),
        ("frame_cells", a.frame_cells.is_some()),
    ];
    match present.iter().find(|(k, p)| *p && !allowed.contains(k)) {
        Some((key, _)) => Err(err(format!("{path}.{key}"), format!("is not a key of a {} application", a.kind.name()))),
        None => Ok(()),
    }
}

fn positive_cells(path: String, c: Cells) -> Result<u32, ScenarioError> {
    if c.0 == 0 {
        return Err(err(path, "must be at least 1 cell"));
    }
    u32::try_from(c.0).map_err(|_| err(path, "more than 4294967295 cells"))
}

fn scheduler(path: &str, sc: &SchedulerSpec) -> Result<SchedulerKind, ScenarioError> {
    match sc.kind {
        SchedulerKindName::StrictPriority | SchedulerKindName::RoundRobin => {
            if sc.gr.is_some() || sc.class.is_some() {
                let key = if sc.gr.is_some() { "gr" } else { "class" };
                let name = if sc.kind == SchedulerKindName::RoundRobin { "round_robin" } else { "strict_priority" };
                return Err(err(format!("{path}.{key}"), format!("is not a key of the {name} scheduler")));
            }
            // Round robin: the port makes per-VC queues (see port_config).
            Ok(SchedulerKind::StrictPriority(StrictPriority))
        }
        SchedulerKindName::GuaranteedRate => {
            let gr = sc.gr.ok_or_else(|| err(format!("{path}.gr"), "the guaranteed_rate scheduler needs gr"))?;
            if !(0.0..=1.0).contains(&gr) {
                return Err(err(format!("{path}.gr"), format!("{gr} is not a fraction of the link in [0, 1]")));
            }
            // An exact fraction: micro-slot resolution, reduced.
            let (mut num, mut den) = ((gr * 1e6).round() as u64, 1_000_000u64);
            let g = gcd(num, den);
            num /= g;
            den /= g;
            let class = sc.class.unwrap_or(ServiceCategory::Ubr);
            Ok(SchedulerKind::GuaranteedRate(GuaranteedRate::new(num, den, class.index())))
        }
    }
}

/// A traffic contract from its scenario table.
fn contract(path: &str, c: &ContractSpec) -> Result<Contract, ScenarioError> {
    let key = |k: &str| format!("{path}.{k}");
    let pcr = c.pcr.0;
    let cdvt = c.cdvt.map_or(Duration::ZERO, |t| t.0);
    let scr = match (c.scr, c.mbs, c.bt) {
        (None, None, None) => None,
        (None, _, _) => return Err(err(key("scr"), "mbs and bt go with an scr")),
        (Some(scr), mbs, bt) => {
            if scr.0 > pcr {
                return Err(err(key("scr"), format!("{} exceeds the pcr {pcr}", scr.0)));
            }
            let bt = match (mbs, bt) {
                (Some(_), Some(_)) => return Err(err(path.to_owned(), "give either mbs or bt, not both")),
                (None, None) => return Err(err(key("mbs"), "a contract with an scr needs mbs or bt")),
                (Some(0), None) => return Err(err(key("mbs"), "must be at least 1 cell")),
                (Some(m), None) => {
                    let m = u32::try_from(m).map_err(|_| err(key("mbs"), format!("{m} cells is too large")))?;
                    Contract::burst_tolerance(pcr, scr.0, m)
                }
                (None, Some(bt)) => bt.0,
            };
            Some((scr.0, bt))
        }
    };
    let conformance = match c.conformance.as_deref() {
        None if scr.is_some() => Conformance::Vbr1,
        None => Conformance::Cbr1,
        Some("cbr.1") if scr.is_none() => Conformance::Cbr1,
        Some("cbr.1") => return Err(err(key("conformance"), "cbr.1 has no scr")),
        Some(v @ ("vbr.1" | "vbr.2" | "vbr.3")) if scr.is_none() => {
            return Err(err(key("scr"), format!("{v} needs an scr and an mbs or bt")));
        }
        Some("vbr.1") => Conformance::Vbr1,
        Some("vbr.2") => Conformance::Vbr2,
        Some("vbr.3") => Conformance::Vbr3,
        Some(other) => {
            return Err(err(key("conformance"), format!("'{other}' is not one of cbr.1, vbr.1, vbr.2, vbr.3")));
        }
    };
    Ok(Contract { conformance, pcr, cdvt, scr })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
}

/// The policy of `p` for a pool of `pool` cells; `frame` is the largest
/// frame at the port, for `frame_cells = "auto"` (`None` before the VCs
/// are known).
/// Whether a port's `drop_policy` covers `category` (its `categories`, UBR
/// by default).
fn applies_to(p: &DropPolicySpec, category: ServiceCategory) -> bool {
    p.categories.as_deref().map_or(category == ServiceCategory::Ubr, |cs| cs.contains(&category))
}

fn drop_policy(path: String, p: &DropPolicySpec, pool: u32, frame: Option<u64>) -> Result<DropPolicy, ScenarioError> {
    let kind = match p.kind {
        DropPolicyKind::TailDrop => "tail_drop",
        DropPolicyKind::Ppd => "ppd",
        DropPolicyKind::Epd => "epd",
        DropPolicyKind::SelectiveDrop => "selective_drop",
        DropPolicyKind::Fba => "fba",
    };
    // The keys each kind takes; any other key given is an error.
    let present = [
        ("threshold", p.threshold.is_some()),
        ("threshold_fraction", p.threshold_fraction.is_some()),
        ("z", p.z.is_some()),
        ("keep_end_of_frame", p.keep_end_of_frame.is_some()),
        ("excess_frames", p.excess_frames.is_some()),
        ("frame_cells", p.frame_cells.is_some()),
        ("compare", p.compare.is_some()),
        ("keep_end_of_refused_frame", p.keep_end_of_refused_frame.is_some()),
    ];
    let allowed: &[&str] = match p.kind {
        DropPolicyKind::TailDrop => &[],
        DropPolicyKind::Ppd => &["keep_end_of_frame"],
        DropPolicyKind::Epd => &[
            "threshold",
            "threshold_fraction",
            "keep_end_of_frame",
            "excess_frames",
            "frame_cells",
            "compare",
            "keep_end_of_refused_frame",
        ],
        DropPolicyKind::SelectiveDrop | DropPolicyKind::Fba => {
            &["threshold", "threshold_fraction", "z", "keep_end_of_frame"]
        }
    };
    if let Some((key, _)) = present.iter().find(|(k, given)| *given && !allowed.contains(k)) {
        return Err(err(format!("{path}.{key}"), format!("is not a key of the {kind} policy")));
    }
    let keep = p.keep_end_of_frame.unwrap_or(true);
    let threshold = || -> Result<u32, ScenarioError> {
        let forms = [p.threshold.is_some(), p.threshold_fraction.is_some(), p.excess_frames.is_some()];
        if forms.iter().filter(|f| **f).count() > 1 {
            return Err(err(path.clone(), "give one of threshold, threshold_fraction and excess_frames"));
        }
        if p.frame_cells.is_some() != p.excess_frames.is_some() {
            let key = if p.frame_cells.is_some() { "excess_frames" } else { "frame_cells" };
            return Err(err(format!("{path}.{key}"), "excess_frames and frame_cells go together"));
        }
        if let (Some(b), Some(spec)) = (p.excess_frames, p.frame_cells) {
            if !(b >= 0.0 && b.is_finite()) {
                return Err(err(format!("{path}.excess_frames"), format!("{b} must be a number >= 0")));
            }
            // "auto" is resolved once the VCs are known (Ctx::resolve_frame_cells);
            // until then a one-cell frame stands in for it.
            let mtu = match spec {
                FrameCells::Cells(c) => c,
                FrameCells::Auto => frame.unwrap_or(1),
            };
            let t = f64::from(pool) - b * mtu as f64;
            if t < 1.0 {
                let what = if spec == FrameCells::Auto {
                    format!("{mtu} cells (the largest frame here)")
                } else {
                    format!("{mtu} cells")
                };
                return Err(err(
                    format!("{path}.excess_frames"),
                    format!("{pool} - {b} x {what} leaves no threshold ({t})"),
                ));
            }
            return Ok(t.floor() as u32);
        }
        match (p.threshold, p.threshold_fraction) {
            (Some(t), None) if t.0 > u64::from(pool) => {
                Err(err(format!("{path}.threshold"), format!("{} cells exceeds the {pool}-cell buffer", t.0)))
            }
            (Some(t), _) => Ok(t.0 as u32),
            (None, f) => {
                let f = f.unwrap_or(DEFAULT_THRESHOLD_FRACTION);
                if !(f > 0.0 && f <= 1.0) {
                    return Err(err(format!("{path}.threshold_fraction"), format!("{f} is not in (0, 1]")));
                }
                Ok((f * f64::from(pool)).round() as u32)
            }
        }
    };
    let z = || -> Result<f64, ScenarioError> {
        let z = p.z.unwrap_or(DEFAULT_Z);
        if !(z > 0.0 && z.is_finite()) {
            return Err(err(format!("{path}.z"), format!("{z} must be a positive number")));
        }
        Ok(z)
    };
    Ok(match p.kind {
        DropPolicyKind::TailDrop => DropPolicy::TailDrop(TailDrop),
        DropPolicyKind::Ppd => DropPolicy::Ppd(Ppd { keep_end_of_frame: keep }),
        DropPolicyKind::Epd => {
            let strict = match p.compare.as_deref() {
                None | Some(">=") => false,
                Some(">") => true,
                Some(other) => return Err(err(format!("{path}.compare"), format!("'{other}' is not \">=\" or \">\""))),
            };
            DropPolicy::Epd(Epd {
                threshold: threshold()?,
                strict,
                keep_end_of_frame: keep,
                keep_end_of_refused_frame: p.keep_end_of_refused_frame.unwrap_or(false),
            })
        }
        DropPolicyKind::SelectiveDrop => {
            DropPolicy::SelectiveDrop(SelectiveDrop { threshold: threshold()?, z: z()?, keep_end_of_frame: keep })
        }
        DropPolicyKind::Fba => DropPolicy::Fba(Fba { threshold: threshold()?, z: z()?, keep_end_of_frame: keep }),
    })
}

fn parse_label(path: String, s: &str) -> Result<VcLabel, ScenarioError> {
    let bad = || err(path.clone(), format!("'{s}' is not a label 'vpi/vci' (e.g. '0/32', VPI 0..4095, VCI 32..65535)"));
    let (vpi, vci) = s.split_once('/').ok_or_else(bad)?;
    let vpi: u16 = vpi.trim().parse().map_err(|_| bad())?;
    let vci: u16 = vci.trim().parse().map_err(|_| bad())?;
    if vpi > 4095 || vci < 32 {
        return Err(bad());
    }
    Ok(VcLabel::new(vpi, vci))
}

fn tcp_config(path: &str, base: &TcpSpec, app: &TcpSpec, mtu: u32) -> Result<TcpConfig, ScenarioError> {
    macro_rules! pick {
        ($f:ident) => {
            app.$f.or(base.$f)
        };
    }
    let key = |k: &str| {
        if app_has(app, k) { format!("{path}.tcp.{k}") } else { format!("tcp.{k}") }
    };
    let d = TcpConfig::classic();
    let mss = pick!(mss).map_or(u64::from(mtu.saturating_sub(40)), |b| b.0);
    if mss == 0 {
        return Err(err(key("mss"), format!("must be at least 1 byte (the MTU of {mtu} bytes leaves none)")));
    }
    let window = pick!(window).map_or(u64::from(d.window), |b| b.0);
    // A window below one MSS is allowed: the sender then sends segments as
    // large as the window (BSD's rule, docs/models/tcp.md; 000's 8 KB
    // windows with a 9140-byte MSS).
    if window == 0 {
        return Err(err(key("window"), "must be at least 1 byte"));
    }
    if window > 1 << 30 {
        return Err(err(key("window"), "exceeds the RFC 1323 maximum of 2^30 bytes"));
    }
    let algorithm = pick!(rto_algorithm).unwrap_or(d.rto.algorithm);
    // Solaris 2.5 counts its timers in lbolt ticks of 10 ms (100 Hz).
    let default_tick = if algorithm == RtoAlgorithm::Solaris25 { Duration::from_ms(10) } else { d.rto.tick };
    let tick = pick!(timer_tick).map_or(default_tick, |t| t.0);
    if tick.is_zero() {
        return Err(err(key("timer_tick"), "must be longer than 0 s"));
    }
    if algorithm == RtoAlgorithm::Solaris25 && tick != Duration::from_ms(10) {
        return Err(err(
            key("timer_tick"),
            "must be 10 ms with rto_algorithm = \"solaris25\" (Solaris 2.5's lbolt runs at 100 Hz; its MS_TO_TICKS assumes it)",
        ));
    }
    let initial_cwnd = pick!(initial_cwnd).unwrap_or(d.initial_cwnd);
    if initial_cwnd == 0 {
        return Err(err(key("initial_cwnd"), "must be at least 1 segment"));
    }
    let dupack = pick!(dupack_threshold).unwrap_or(d.dupack_threshold);
    if dupack == 0 {
        return Err(err(key("dupack_threshold"), "must be at least 1"));
    }
    // Each estimator's own defaults (docs/models/tcp.md): 4.4BSD-Lite's (and 4.3BSD-Tahoe's)
    // first RTO is 2 x TCPTV_SRTTDFLT = 6 s; RFC 6298's is 1 s, and 1 s its
    // lower bound (s2.1, s2.4). Solaris 2.5's ndd table (tcp.c 1.106):
    // tcp_rexmit_interval_initial 500 ms, _min 200 ms, _max 1 minute.
    let (initial, min, max) = match algorithm {
        RtoAlgorithm::Ns2 => (d.rto.initial_rto, d.rto.min_rto, d.rto.max_rto),
        RtoAlgorithm::Bsd44Lite | RtoAlgorithm::Bsd43Tahoe => (Duration::from_secs(6), Duration::ZERO, d.rto.max_rto),
        RtoAlgorithm::Rfc6298 => (Duration::from_secs(1), Duration::from_secs(1), d.rto.max_rto),
        RtoAlgorithm::Solaris25 => (Duration::from_ms(500), Duration::from_ms(200), Duration::from_secs(60)),
    };
    let rto = RtoConfig {
        tick,
        initial_rto: pick!(initial_rto).map_or(initial, |t| t.0),
        min_rto: pick!(min_rto).map_or(min, |t| t.0),
        max_rto: pick!(max_rto).map_or(max, |t| t.0),
        algorithm,
    };
    if rto.max_rto < rto.min_rto {
        return Err(err(key("max_rto"), "is smaller than min_rto"));
    }
    let delack_timeout = pick!(delayed_ack_timeout).map_or(d.delayed_ack_timeout, |t| t.0);
    if delack_timeout.is_zero() {
        return Err(err(key("delayed_ack_timeout"), "must be longer than 0 s"));
    }
    let stretch_ack = pick!(stretch_ack).map(|t| t.0);
    if stretch_ack.is_some_and(|t| t.is_zero()) {
        return Err(err(key("stretch_ack"), "must be longer than 0 s"));
    }
    let delayed_ack = pick!(delayed_ack).unwrap_or(d.delayed_ack);
    let delayed_ack_rule = pick!(delayed_ack_rule).unwrap_or(d.delayed_ack_rule);
    if delayed_ack_rule == DelayedAckRule::Solaris {
        if !delayed_ack {
            return Err(err(key("delayed_ack_rule"), "\"solaris\" needs tcp.delayed_ack = true"));
        }
        if stretch_ack.is_some() {
            return Err(err(key("stretch_ack"), "cannot be combined with delayed_ack_rule = \"solaris\""));
        }
    }
    let delayed_ack_max = pick!(delayed_ack_max);
    if let Some(m) = delayed_ack_max {
        if delayed_ack_rule != DelayedAckRule::Solaris {
            return Err(err(key("delayed_ack_max"), "needs tcp.delayed_ack_rule = \"solaris\""));
        }
        if m > 16 {
            return Err(err(
                key("delayed_ack_max"),
                "must be 0 to 16 MSS (the range of Solaris's tcp_deferred_acks_max)",
            ));
        }
    }
    let socket = socket_config(&key, pick!(send_buffer), pick!(write_size), pick!(write_cost))?;
    let max_sack_blocks = pick!(max_sack_blocks).unwrap_or(d.max_sack_blocks);
    if !(1..=4).contains(&max_sack_blocks) {
        return Err(err(key("max_sack_blocks"), "must be 1 to 4 (the TCP option space)"));
    }
    Ok(TcpConfig {
        variant: pick!(variant).unwrap_or(d.variant),
        mss: mss.min(u64::from(u32::MAX)) as u32,
        window: window as u32,
        window_scaling: pick!(window_scaling).unwrap_or(d.window_scaling),
        initial_cwnd,
        initial_ssthresh: pick!(initial_ssthresh).map(|b| b.0.min(u64::from(u32::MAX)) as u32),
        rto,
        rto_timer: pick!(rto_timer).unwrap_or(d.rto_timer),
        dupack_threshold: dupack,
        delayed_ack,
        delayed_ack_timeout: delack_timeout,
        delayed_ack_timer: pick!(delayed_ack_timer).unwrap_or(d.delayed_ack_timer),
        delayed_ack_rule,
        delayed_ack_max,
        max_sack_blocks,
        stretch_ack,
        backoff_reset: pick!(backoff_reset).unwrap_or(d.backoff_reset),
        freeze_window_in_fast_recovery: pick!(freeze_window_in_fast_recovery)
            .unwrap_or(d.freeze_window_in_fast_recovery),
        keep_dupacks_on_timeout: pick!(keep_dupacks_on_timeout).unwrap_or(d.keep_dupacks_on_timeout),
        clock_phase: 0.0,
        socket,
    })
}

/// The socket send path's keys (all or nothing hangs on `send_buffer`).
fn socket_config(
    key: &dyn Fn(&str) -> String,
    send_buffer: Option<Bytes>,
    write_size: Option<Bytes>,
    write_cost: Option<Time>,
) -> Result<Option<SocketConfig>, ScenarioError> {
    let Some(buffer) = send_buffer else {
        if write_size.is_some() {
            return Err(err(key("write_size"), "needs tcp.send_buffer (the socket send path)"));
        }
        if write_cost.is_some() {
            return Err(err(key("write_cost"), "needs tcp.send_buffer (the socket send path)"));
        }
        return Ok(None);
    };
    let buffer = buffer.0;
    if buffer == 0 {
        return Err(err(key("send_buffer"), "must be at least 1 byte"));
    }
    if buffer > 1 << 30 {
        return Err(err(key("send_buffer"), "exceeds 2^30 bytes"));
    }
    let write = write_size.map_or(buffer, |b| b.0);
    if write == 0 {
        return Err(err(key("write_size"), "must be at least 1 byte"));
    }
    if write > 1 << 30 {
        return Err(err(key("write_size"), "exceeds 2^30 bytes"));
    }
    Ok(Some(SocketConfig {
        send_buffer: buffer as u32,
        write_size: write as u32,
        write_cost: write_cost.map_or(Duration::ZERO, |t| t.0),
    }))
}

/// Whether the application's own `tcp` table sets key `k` (for error paths).
fn app_has(app: &TcpSpec, k: &str) -> bool {
    match k {
        "mss" => app.mss.is_some(),
        "window" => app.window.is_some(),
        "timer_tick" => app.timer_tick.is_some(),
        "initial_cwnd" => app.initial_cwnd.is_some(),
        "dupack_threshold" => app.dupack_threshold.is_some(),
        "max_rto" => app.max_rto.is_some() || app.min_rto.is_some(),
        "delayed_ack_timeout" => app.delayed_ack_timeout.is_some(),
        "max_sack_blocks" => app.max_sack_blocks.is_some(),
        "stretch_ack" => app.stretch_ack.is_some(),
        "delayed_ack_rule" => app.delayed_ack_rule.is_some(),
        "delayed_ack_max" => app.delayed_ack_max.is_some(),
        "send_buffer" => app.send_buffer.is_some(),
        "write_size" => app.write_size.is_some(),
        "write_cost" => app.write_cost.is_some(),
        _ => false,
    }
}

/// The TM 4.0 parameters of `spec`, with PCR defaulting to `link` (the
/// slower host link) and every other parameter to the TM 4.0 defaults of
/// [`AbrParams::new`]. Rates in cells/s; the ranges are checked by the
/// builder (naming the parameter).
fn abr_params(spec: &AbrSpec, link: atmlab_engine::BitRate) -> AbrParams {
    let cells = |bps: u64| bps as f64 / CELL_BITS as f64;
    let mut p = AbrParams::new(cells(spec.pcr.map_or(link, |r| r.0).bps()));
    p.icr = spec.icr.map_or(p.pcr, |r| cells(r.0.bps()));
    if let Some(r) = spec.mcr {
        p.mcr = cells(r.0);
    }
    if let Some(r) = spec.tcr {
        p.tcr = cells(r.0.bps());
    }
    p.nrm = spec.nrm.unwrap_or(p.nrm);
    p.mrm = spec.mrm.unwrap_or(p.mrm);
    p.trm = spec.trm.map_or(p.trm, |t| t.0);
    p.rif = spec.rif.unwrap_or(p.rif);
    p.rdf = spec.rdf.unwrap_or(p.rdf);
    p.cdf = spec.cdf.unwrap_or(p.cdf);
    p.adtf = spec.adtf.map_or(p.adtf, |t| t.0);
    if let Some(t) = spec.tbe {
        p.tbe = u32::try_from(t.0).unwrap_or(u32::MAX);
    }
    p.frtt = spec.frtt.map_or(p.frtt, |t| t.0);
    p
}

/// One source's rates from an FGN block (docs/models/sources.md, "The rate sequence"): the accepted
/// values of a block of `length` values, at least `needed` of them (the
/// most intervals the run holds) unless the list cycles. The default length
/// is a power of two that holds twice the expected need, at least 2^15.
/// `budget` holds the FGN values the run may still generate and the
/// application's sources still to generate, this one included: their
/// blocks must fit in it.
fn fgn_rates(
    path: &str,
    f: &FgnSpec,
    needed: u64,
    cycle: bool,
    (budget, sources): (&mut u64, u64),
    rng: &mut atmlab_engine::SimRng,
) -> Result<Vec<f64>, ScenarioError> {
    use atmlab_engine::fgn::{FgnError, FgnMethod, RateParams, RateSequence};
    if !(f.hurst > 0.0 && f.hurst < 1.0) {
        return Err(err(format!("{path}.hurst"), format!("{} is not in (0, 1)", f.hurst)));
    }
    let method = match f.method {
        None | Some(FgnMethodName::Paxson) => FgnMethod::Paxson,
        Some(FgnMethodName::DaviesHarte) => FgnMethod::DaviesHarte,
    };
    let (mean, std, peak) = (f.mean.0.bps() as f64, f.std.0.bps() as f64, f.peak.0.bps() as f64);
    let probe = RateParams::new(mean, std, peak, f.hurst, 2).with_method(method);
    let acceptance = probe.expected_acceptance();
    if acceptance < 1e-3 {
        return Err(err(
            path.to_owned(),
            format!("fewer than 1 in 1000 rates of this normal law lie in [0, peak] ({acceptance:.2e})"),
        ));
    }
    let length = match f.length {
        Some(l) => {
            if !(2..=MAX_FGN_LENGTH).contains(&l) || (method == FgnMethod::Paxson && l % 2 == 1) {
                return Err(err(
                    format!("{path}.length"),
                    format!("{l} is not an even length in 2..={MAX_FGN_LENGTH} (Paxson's method needs an even one)"),
                ));
            }
            l
        }
        None => ((2.0 * needed as f64 / acceptance).ceil() as u64).next_power_of_two().max(1 << 15),
    };
    if length > MAX_FGN_LENGTH {
        return Err(err(
            format!("{path}.length"),
            format!("the run needs about {length} values per source, more than {MAX_FGN_LENGTH}; use longer intervals"),
        ));
    }
    // This source and the application's others still to come, at this length.
    if length.saturating_mul(sources) > *budget {
        return Err(err(
            path.to_owned(),
            format!(
                "the run's FGN blocks would hold more than {MAX_FGN_TOTAL} values in all ({sources} sources of \
                 {length}); use fewer sources, longer intervals or a shorter length"
            ),
        ));
    }
    *budget -= length;
    let params = RateParams { len: length as usize, ..probe };
    let rates: Vec<f64> = RateSequence::new(&params, rng)
        .map_err(|e| match e {
            FgnError::InvalidParameter { name: "std_dev", .. } => err(format!("{path}.std"), e.to_string()),
            e => err(path.to_owned(), e.to_string()),
        })?
        .collect();
    if !cycle && (rates.len() as u64) < needed {
        return Err(err(
            format!("{path}.length"),
            format!(
                "the block of {length} values holds {} rates in [0, peak], but the run can hold {needed} intervals; \
                 give a longer length",
                rates.len()
            ),
        ));
    }
    Ok(rates)
}
