//! The trace: one record per event of the kinds asked for, written as it
//! happens (CSV, one row per record, memory flat in simulated time).
//!
//! Each part of the simulation emits its own records through the kernel's
//! [`Trace`] (when the run has one; else nothing is done but one test of an
//! `Option`):
//!
//! | kind | part | events |
//! |---|---|---|
//! | `drop` | the network | `dropped` (a cell, with why: `overflow`, `frame` (EPD/PPD), `clp`, `upc`, `link`, and the port's queue), `frame_discard` (the first cell of a frame a port's EPD or PPD discards) |
//! | `frame` | the hosts | `delivered`, `lost` (an AAL5 frame at its receiving host, with its cells) |
//! | `rm` | the ABR ends | `frm_sent`, `brm_sent` (in rate or out of rate), `frm_received` (turned around), `brm_received` (with the source's ACR after it); ER, CCR, CI, NI |
//! | `control` | the switch controllers | `interval` (a controller's decision: its readings at the end of an averaging interval) |
//! | `tcp` | the transport | `send`, `retransmit` (a segment sent again), `timeout`, `fast_retransmit`, `cwnd` (the window after a change, with ssthresh) |
//!
//! Filters: the kinds, the VCs (by name; a record of a VC is kept if its
//! VC is asked for), the ports (a record at a port is kept if its port is
//! asked for), and a time window `[from, until)`.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use atmlab_engine::SimTime;

/// The kinds of record, as a scenario names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// Cells dropped, frames discarded.
    Drop,
    /// AAL5 frames delivered or lost at hosts.
    Frame,
    /// RM cells sent, turned around, received.
    Rm,
    /// Switch controllers' interval decisions.
    Control,
    /// TCP sends, retransmissions, timeouts, fast retransmits, windows.
    Tcp,
}

impl TraceKind {
    /// Every kind.
    pub const ALL: [TraceKind; 5] =
        [TraceKind::Drop, TraceKind::Frame, TraceKind::Rm, TraceKind::Control, TraceKind::Tcp];

    /// Its name in scenarios and records.
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Drop => "drop",
            TraceKind::Frame => "frame",
            TraceKind::Rm => "rm",
            TraceKind::Control => "control",
            TraceKind::Tcp => "tcp",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// What to trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// The kinds of record.
    pub kinds: Vec<TraceKind>,
    /// The VCs, by name (`None`: every VC).
    pub vcs: Option<Vec<String>>,
    /// The ports, by name `from->to` (`None`: every port).
    pub ports: Option<Vec<String>>,
    /// The window: records at or after `from` and before `until`.
    pub from: SimTime,
    /// See `from`.
    pub until: SimTime,
}

impl Default for TraceSpec {
    fn default() -> TraceSpec {
        TraceSpec { kinds: TraceKind::ALL.to_vec(), vcs: None, ports: None, from: SimTime::ZERO, until: SimTime::MAX }
    }
}

/// One row of the trace file (the columns are the same for every kind;
/// a column a record has nothing for is empty).
#[derive(Serialize, Default)]
struct Row<'a> {
    time_ps: u64,
    time_s: f64,
    kind: &'static str,
    event: &'static str,
    port: &'a str,
    host: &'a str,
    vc: &'a str,
    dir: &'static str,
    reason: &'static str,
    queue: Option<u32>,
    cells: Option<u32>,
    er_bps: Option<f64>,
    ccr_bps: Option<f64>,
    ci: Option<bool>,
    ni: Option<bool>,
    acr_bps: Option<f64>,
    load_factor: Option<f64>,
    fair_share_bps: Option<f64>,
    abr_capacity_bps: Option<f64>,
    active_vcs: Option<f64>,
    conn: &'a str,
    seq: Option<u64>,
    len: Option<u32>,
    cwnd: Option<u64>,
    ssthresh: Option<u64>,
}

/// A VC as the trace names it: its name's index and the direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct VcRef {
    name: u32,
    forward: bool,
}

/// A trace being written.
pub struct Trace {
    kinds: u8,
    from: SimTime,
    until: SimTime,
    /// Per port: its name, and whether it is traced.
    ports: Vec<(String, bool)>,
    hosts: Vec<String>,
    /// VC names, and whether each is traced.
    vcs: Vec<(String, bool)>,
    /// Per port, per VC index there: the VC (`None`: not named).
    port_vcs: Vec<Vec<Option<VcRef>>>,
    /// Per host, per VC index there: the VC.
    host_vcs: Vec<Vec<Option<VcRef>>>,
    /// TCP connections: name, and the VC their segments go on.
    conns: Vec<(String, Option<VcRef>)>,
    /// Per connection: the highest sequence number sent (a segment below
    /// it is a retransmission).
    sent_to: Vec<u64>,
    /// Per connection: its sender's window, threshold, timeouts and fast
    /// retransmits as last written.
    senders: Vec<(u64, u64, u64, u64)>,
    /// Per (port, VC index): the last frame a `frame_discard` was written for.
    discarding: BTreeMap<(u32, u16), u32>,
    out: csv::Writer<Box<dyn Write + Send>>,
    /// The first write error, reported when the run ends.
    error: Option<String>,
    records: u64,
}

/// The names the trace needs, from the builder.
pub(super) struct TraceNames {
    pub(super) ports: Vec<String>,
    pub(super) hosts: Vec<String>,
    pub(super) vcs: Vec<String>,
    pub(super) port_vcs: Vec<Vec<Option<VcRef>>>,
    pub(super) host_vcs: Vec<Vec<Option<VcRef>>>,
    pub(super) conns: Vec<(String, Option<VcRef>)>,
}

impl VcRef {
    /// VC name `name` (an index into the names), one direction.
    pub(super) fn new(name: u32, forward: bool) -> VcRef {
        VcRef { name, forward }
    }
}

impl Trace {
    /// A trace of `spec` written to `out`. Names in `spec` that the network
    /// does not have are the caller's to refuse first.
    pub(super) fn new(spec: &TraceSpec, names: TraceNames, out: Box<dyn Write + Send>) -> Trace {
        let kinds = spec.kinds.iter().fold(0, |k, kind| k | kind.bit());
        let on = |list: &Option<Vec<String>>, name: &str| list.as_ref().is_none_or(|l| l.iter().any(|n| n == name));
        let conns = names.conns.len();
        Trace {
            kinds,
            from: spec.from,
            until: spec.until,
            ports: names.ports.into_iter().map(|n| (n.clone(), on(&spec.ports, &n))).collect(),
            hosts: names.hosts,
            vcs: names.vcs.into_iter().map(|n| (n.clone(), on(&spec.vcs, &n))).collect(),
            port_vcs: names.port_vcs,
            host_vcs: names.host_vcs,
            conns: names.conns,
            sent_to: vec![0; conns],
            senders: vec![(0, 0, 0, 0); conns],
            discarding: BTreeMap::new(),
            out: csv::WriterBuilder::new().from_writer(out),
            error: None,
            records: 0,
        }
    }

    /// Whether records of `kind` at `now` are wanted at all.
    #[inline]
    pub(super) fn wants(&self, kind: TraceKind, now: SimTime) -> bool {
        self.kinds & kind.bit() != 0 && now >= self.from && now < self.until
    }

    fn vc_on(&self, vc: Option<VcRef>) -> bool {
        vc.is_none_or(|v| self.vcs[v.name as usize].1)
    }

    fn vc_name(&self, vc: Option<VcRef>) -> (&str, &'static str) {
        match vc {
            Some(v) => (&self.vcs[v.name as usize].0, if v.forward { "forward" } else { "backward" }),
            None => ("", ""),
        }
    }

    fn write(&mut self, row: &Row<'_>) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.out.serialize(row) {
            self.error = Some(e.to_string());
        }
        self.records += 1;
    }

    fn row<'a>(now: SimTime, kind: TraceKind, event: &'static str) -> Row<'a> {
        Row { time_ps: now.as_ps(), time_s: now.as_secs_f64(), kind: kind.name(), event, ..Row::default() }
    }

    /// A cell of VC index `vc` dropped at port `port` (`queue` cells queued
    /// there), for `reason`; the first of a frame a policy discards also
    /// writes a `frame_discard` (`pdu`: the frame's entry).
    pub(super) fn drop(
        &mut self,
        now: SimTime,
        port: u32,
        vc: u16,
        reason: &'static str,
        queue: u32,
        pdu: Option<u32>,
    ) {
        if !self.wants(TraceKind::Drop, now) || !self.ports[port as usize].1 {
            return;
        }
        let vref = self.port_vcs[port as usize].get(usize::from(vc)).copied().flatten();
        if !self.vc_on(vref) {
            return;
        }
        let new_discard = reason == "frame" && pdu.is_some_and(|id| self.discarding.insert((port, vc), id) != Some(id));
        let (name, dir) = self.vc_name(vref);
        let (name, port_name) = (name.to_string(), self.ports[port as usize].0.clone());
        let mut row = Trace::row(now, TraceKind::Drop, "dropped");
        (row.port, row.vc, row.dir, row.reason, row.queue) = (&port_name, &name, dir, reason, Some(queue));
        if new_discard {
            let mut first = Trace::row(now, TraceKind::Drop, "frame_discard");
            (first.port, first.vc, first.dir, first.reason, first.queue) =
                (&port_name, &name, dir, reason, Some(queue));
            self.write(&first);
        }
        self.write(&row);
    }

    /// An AAL5 frame of `cells` cells delivered (or lost) at host `host` on
    /// its VC index `vc`.
    pub(super) fn frame(&mut self, now: SimTime, host: u32, vc: u32, delivered: bool, cells: u32) {
        if !self.wants(TraceKind::Frame, now) {
            return;
        }
        let vref = self.host_vcs[host as usize].get(vc as usize).copied().flatten();
        if !self.vc_on(vref) {
            return;
        }
        let (name, dir) = self.vc_name(vref);
        let (name, host_name) = (name.to_string(), self.hosts[host as usize].clone());
        let mut row = Trace::row(now, TraceKind::Frame, if delivered { "delivered" } else { "lost" });
        (row.host, row.vc, row.dir, row.cells) = (&host_name, &name, dir, Some(cells));
        self.write(&row);
    }

    /// An RM cell event at the ABR end of `host` (or the VS/VD switch of
    /// that name) on VC `vc`: `event` with the cell's fields, rates in
    /// bit/s, and the source's ACR where it matters.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rm(
        &mut self,
        now: SimTime,
        event: &'static str,
        at: &str,
        vc: Option<VcRef>,
        rm: &crate::abr::RmCell,
        out_of_rate: bool,
        acr_bps: Option<f64>,
    ) {
        if !self.wants(TraceKind::Rm, now) || !self.vc_on(vc) {
            return;
        }
        let bits = atmlab_engine::CELL_BITS as f64;
        let (name, dir) = self.vc_name(vc);
        let name = name.to_string();
        let mut row = Trace::row(now, TraceKind::Rm, event);
        (row.host, row.vc, row.dir) = (at, &name, dir);
        row.reason = if out_of_rate { "out_of_rate" } else { "" };
        (row.er_bps, row.ccr_bps, row.ci, row.ni, row.acr_bps) =
            (Some(rm.er * bits), Some(rm.ccr * bits), Some(rm.ci), Some(rm.ni), acr_bps);
        self.write(&row);
    }

    /// The VC of a host's VC index, for [`Trace::rm`].
    pub(super) fn host_vc(&self, host: u32, vc: u32) -> Option<VcRef> {
        self.host_vcs.get(host as usize)?.get(vc as usize).copied().flatten()
    }

    /// The VC of a port's VC index, for [`Trace::rm`].
    pub(super) fn port_vc(&self, port: u32, vc: u16) -> Option<VcRef> {
        self.port_vcs.get(port as usize)?.get(usize::from(vc)).copied().flatten()
    }

    /// A switch controller's decision at port `port`: its readings.
    pub(super) fn control(&mut self, now: SimTime, port: u32, readings: &[crate::abr::control::Reading]) {
        if !self.wants(TraceKind::Control, now) || !self.ports[port as usize].1 {
            return;
        }
        let port_name = self.ports[port as usize].0.clone();
        let mut row = Trace::row(now, TraceKind::Control, "interval");
        row.port = &port_name;
        for r in readings {
            match r.name {
                "load_factor" => row.load_factor = r.value,
                "fair_share_bps" => row.fair_share_bps = r.value,
                "abr_capacity_bps" => row.abr_capacity_bps = r.value,
                "active_vcs" => row.active_vcs = r.value,
                "er_bps" => row.er_bps = r.value,
                _ => {}
            }
        }
        self.write(&row);
    }

    /// TCP connection `conn`'s sender: a segment sent (`seq`, `len`: a
    /// retransmission if below the highest sent).
    pub(super) fn tcp_send(&mut self, now: SimTime, conn: u32, seq: u64, len: u32) {
        let c = conn as usize;
        let again = seq < self.sent_to[c];
        self.sent_to[c] = self.sent_to[c].max(seq + u64::from(len));
        if len == 0 || !self.tcp_on(now, conn) {
            return;
        }
        let name = self.conns[c].0.clone();
        let (vc, dir) = self.vc_name(self.conns[c].1);
        let vc = vc.to_string();
        let mut row = Trace::row(now, TraceKind::Tcp, if again { "retransmit" } else { "send" });
        (row.conn, row.vc, row.dir, row.seq, row.len) = (&name, &vc, dir, Some(seq), Some(len));
        self.write(&row);
    }

    /// TCP connection `conn`'s sender after it acted: a `timeout` or
    /// `fast_retransmit` record for each new one (its counters rose), and a
    /// `cwnd` record if its window or threshold changed, each with the
    /// window and threshold after it.
    pub(super) fn tcp_sender(&mut self, now: SimTime, conn: u32, cwnd: u64, ssthresh: u64, timeouts: u64, fast: u64) {
        let c = conn as usize;
        let (last_cwnd, last_ssthresh, last_timeouts, last_fast) = self.senders[c];
        self.senders[c] = (cwnd, ssthresh, timeouts, fast);
        if !self.tcp_on(now, conn) {
            return;
        }
        let name = self.conns[c].0.clone();
        let (vc, dir) = self.vc_name(self.conns[c].1);
        let vc = vc.to_string();
        let events = [
            ("timeout", timeouts > last_timeouts),
            ("fast_retransmit", fast > last_fast),
            ("cwnd", (cwnd, ssthresh) != (last_cwnd, last_ssthresh)),
        ];
        for (event, happened) in events {
            if happened {
                let mut row = Trace::row(now, TraceKind::Tcp, event);
                (row.conn, row.vc, row.dir, row.cwnd, row.ssthresh) = (&name, &vc, dir, Some(cwnd), Some(ssthresh));
                self.write(&row);
            }
        }
    }

    fn tcp_on(&self, now: SimTime, conn: u32) -> bool {
        self.wants(TraceKind::Tcp, now) && self.vc_on(self.conns[conn as usize].1)
    }

    /// Flushes the file; the records written, or the first write error.
    pub(super) fn finish(&mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush().map_err(|e| e.to_string())?;
        Ok(self.records)
    }
}
