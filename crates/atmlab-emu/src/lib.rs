//! # atmlab-emu
//!
//! Real operating-system TCP/IP across a simulated atmlab network
//! (`docs/emulate.md`). The simulation core (`atmlab-net`) knows no clock
//! and does no I/O: it takes IP packets at external hosts at a simulated
//! time ([`Simulation::inject`]) and gives back those delivered
//! ([`Simulation::drain`]). This crate drives it:
//!
//! * [`Driver`]: the real-time loop, written against two traits, a
//!   [`Clock`] and the packets' I/O ([`PacketIo`]), so that tests run it
//!   with a fake clock and fake devices, exactly;
//! * [`tun`] (Linux): the wall clock and TUN devices, the only place in
//!   atmlab that reads the wall clock;
//! * [`replay`]: a recorded pcap injected at its timestamps, with no clock
//!   at all: deterministic.

use std::time::Duration;

use atmlab_engine::SimTime;
use atmlab_net::ids::HostId;
use atmlab_net::sim::{InjectError, RunResult, Simulation, SimulationError};

pub mod replay;
#[cfg(target_os = "linux")]
pub mod tun;

/// A clock: the time since the emulation's origin.
pub trait Clock {
    /// Time since the origin.
    fn now(&mut self) -> Duration;
}

/// The packets' way in and out: one device per external host, in the order
/// of [`Simulation::external_hosts`].
pub trait PacketIo {
    /// Waits until one of the devices whose `watch` entry is true may have
    /// a packet to read, or until `deadline` (on the driver's clock; `None`:
    /// no deadline) has passed. It may return early.
    fn wait(&mut self, watch: &[bool], deadline: Option<Duration>) -> std::io::Result<()>;
    /// Reads one packet from device `dev` into `buf` without blocking:
    /// its length, or `None` when there is none.
    fn recv(&mut self, dev: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>>;
    /// Writes one packet to device `dev`.
    fn send(&mut self, dev: usize, packet: &[u8]) -> std::io::Result<()>;
}

/// A clock that can start over, telling its devices (the wall clock and
/// the TUN devices).
#[cfg(target_os = "linux")]
pub trait HasRestart<I> {
    /// Starts `clock` over at zero and `io`'s deadlines with it.
    fn restart(clock: &mut Self, io: &mut I);
}

#[cfg(target_os = "linux")]
impl HasRestart<tun::TunIo> for tun::WallClock {
    fn restart(clock: &mut Self, io: &mut tun::TunIo) {
        *clock = tun::WallClock::start();
        io.set_clock(clock);
    }
}

/// How the driver runs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Abort when an event runs this much later than its time (`None`:
    /// never; the lag is always reported).
    pub max_lag: Option<Duration>,
    /// Stop reading a host's device while this many cells wait at its
    /// adapter (back-pressure: the kernel's queue then holds the packets).
    pub backlog_cells: u64,
    /// A packet delivered (or an event run) later than this counts as late.
    pub late: Duration,
    /// Do not wait for an event closer than this: run it in a busy loop.
    pub spin: Duration,
    /// Packets read from one device in one turn, at most.
    pub burst: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_lag: None,
            backlog_cells: 1000,
            late: Duration::from_millis(1),
            spin: Duration::from_micros(50),
            burst: 64,
        }
    }
}

/// Why the driver stopped early.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The simulation fell further behind the wall clock than allowed.
    #[error(
        "the simulation fell {lag_ms:.3} ms behind the wall clock at t = {at_s:.6} s, more than \
         realtime.max_lag = {max_ms:.3} ms (the machine is too slow or too loaded for this scenario \
         in real time)"
    )]
    Lag {
        /// How far behind, ms.
        lag_ms: f64,
        /// The limit, ms.
        max_ms: f64,
        /// When, simulated seconds.
        at_s: f64,
    },
    /// A device failed.
    #[error("device {dev}: {source}")]
    Io {
        /// The device's index.
        dev: usize,
        /// The error.
        source: std::io::Error,
    },
    /// The simulation stopped (its memory guard) or failed a check.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
}

/// Bins of the lag histogram: 1 us each, up to 100 ms (beyond: the last).
const BINS: usize = 100_000;

/// Lag samples, kept as a histogram of 1 us bins (memory flat in time).
#[derive(Clone, Debug)]
struct Histogram {
    bins: Vec<u32>,
    n: u64,
    max: Duration,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram { bins: vec![0; BINS], n: 0, max: Duration::ZERO }
    }

    fn add(&mut self, d: Duration) {
        let i = (d.as_micros() as usize).min(BINS - 1);
        self.bins[i] = self.bins[i].saturating_add(1);
        self.n += 1;
        self.max = self.max.max(d);
    }

    /// The `q` quantile (0..1), to the microsecond below it.
    fn quantile(&self, q: f64) -> Duration {
        if self.n == 0 {
            return Duration::ZERO;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return if i == BINS - 1 { self.max } else { Duration::from_micros(i as u64) };
            }
        }
        self.max
    }
}

/// How far the run fell behind the wall clock, and what crossed the
/// boundary: always reported.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LagReport {
    /// Turns of the loop.
    pub turns: u64,
    /// Turns that ran events later than their time (samples below).
    pub lag_samples: u64,
    /// How late the events of a turn ran (the earliest of them): median, s.
    pub lag_p50_s: f64,
    /// 99th percentile, s.
    pub lag_p99_s: f64,
    /// Largest, s.
    pub lag_max_s: f64,
    /// Wall time spent in turns that started more than `late` behind, s.
    pub behind_s: f64,
    /// Packets read from the devices and taken by the network.
    pub packets_in: u64,
    /// Packets the network refused (no route, too big, not IPv4), dropped.
    pub packets_refused: u64,
    /// Why, with how many of each (the first [`REFUSAL_REASONS`] reasons
    /// by their text, the rest under "other"): a multicast report or a
    /// packet to an address no host has shows where it went.
    pub refused: std::collections::BTreeMap<String, u64>,
    /// Packets delivered and written to the devices.
    pub packets_out: u64,
    /// Packets whose write failed (a device whose peer was down: `EIO`),
    /// counted as lost.
    pub write_errors: u64,
    /// How late packets were written after their delivery time: median, s.
    pub delivery_p50_s: f64,
    /// 99th percentile, s.
    pub delivery_p99_s: f64,
    /// Largest, s.
    pub delivery_max_s: f64,
    /// Packets written more than `late` (1 ms) after their delivery time.
    pub late_packets: u64,
    /// Turns in which back-pressure kept a device unread.
    pub blocked_turns: u64,
}

/// How many reasons for refusal [`LagReport::refused`] tells apart.
pub const REFUSAL_REASONS: usize = 16;

impl LagReport {
    /// A packet was refused for `why`.
    fn refuse(&mut self, why: &dyn std::fmt::Display) {
        self.packets_refused += 1;
        let mut key = why.to_string();
        if !self.refused.contains_key(&key) && self.refused.len() >= REFUSAL_REASONS {
            key = "other".into();
        }
        *self.refused.entry(key).or_default() += 1;
    }
}

/// Whether the run goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Not at the end yet.
    Running,
    /// At the end of the run.
    Finished,
}

/// The real-time loop (module docs): paces a [`Simulation`] to a
/// [`Clock`], moves packets between it and a [`PacketIo`].
///
/// Each turn reads the clock (`t`), injects the packets waiting at the
/// devices at `t` (no earlier than where the run is), runs every event up
/// to and including `t`, in order (when behind, events run back to back,
/// never skipped nor reordered), writes the packets delivered, and waits
/// for the next event or a packet. A device whose host's adapter holds
/// [`Config::backlog_cells`] or more is not read (back-pressure).
pub struct Driver<C: Clock, I: PacketIo> {
    sim: Simulation,
    clock: C,
    io: I,
    hosts: Vec<HostId>,
    cfg: Config,
    lag: Histogram,
    delivery: Histogram,
    report: LagReport,
    behind: Duration,
    buf: Vec<u8>,
    watch: Vec<bool>,
    /// The commands are done: no more real time, no more traffic from
    /// outside ([`Driver::end_now`]).
    done: bool,
}

impl<C: Clock, I: PacketIo> Driver<C, I> {
    /// A driver of `sim`, whose external hosts are `io`'s devices in order.
    pub fn new(sim: Simulation, clock: C, io: I, cfg: Config) -> Driver<C, I> {
        let hosts: Vec<HostId> = sim.external_hosts().into_iter().map(|h| h.0).collect();
        let n = hosts.len();
        Driver {
            sim,
            clock,
            io,
            hosts,
            cfg,
            lag: Histogram::new(),
            delivery: Histogram::new(),
            report: LagReport::default(),
            behind: Duration::ZERO,
            buf: vec![0; 65_536],
            watch: vec![true; n],
            done: false,
        }
    }

    /// Starts the clock over and the devices' deadlines with it (the
    /// emulation starts now: the devices were set up meanwhile).
    #[cfg(target_os = "linux")]
    pub fn restart_clock(&mut self)
    where
        C: HasRestart<I>,
    {
        C::restart(&mut self.clock, &mut self.io);
    }

    /// The simulation.
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// Runs turns until the run's end or until `budget` of the clock has
    /// passed (a caller that must see signals runs in steps).
    pub fn run_for(&mut self, budget: Duration) -> Result<Status, DriverError> {
        let stop = self.clock.now().saturating_add(budget);
        loop {
            if self.turn_until(Some(stop))? == Status::Finished {
                return Ok(Status::Finished);
            }
            if self.clock.now() >= stop {
                return Ok(Status::Running);
            }
        }
    }

    /// The commands of the emulation are done: the real-time part ends
    /// (the next turn reports [`Status::Finished`]) and [`finish`](Self::finish)
    /// simulates the rest of the run's duration at full speed, with no more
    /// traffic from outside. (Moving the run's end earlier instead would
    /// break what the event elision has already done for the later end:
    /// cells sent ahead, taken early by the next port.)
    pub fn end_now(&mut self) {
        self.done = true;
    }

    /// Runs to the end of the run.
    pub fn run(&mut self) -> Result<(), DriverError> {
        while self.turn()? == Status::Running {}
        Ok(())
    }

    /// One turn of the loop.
    pub fn turn(&mut self) -> Result<Status, DriverError> {
        self.turn_until(None)
    }

    /// One turn of the loop, waiting at most until `stop` on the clock.
    fn turn_until(&mut self, stop: Option<Duration>) -> Result<Status, DriverError> {
        if self.done {
            return Ok(Status::Finished);
        }
        let wall = self.clock.now();
        let end = self.sim.end();
        let t = sim_time(wall).min(end);
        self.report.turns += 1;
        // What the devices hold, at t (or where the run already is).
        let horizon = self.sim.now().max(t);
        if horizon < end {
            self.read_devices(horizon)?;
        }
        // How late the earliest event due runs.
        let mut turn_lag = Duration::ZERO;
        if let Some(e) = self.sim.next_event_time()
            && e < t
        {
            let lag = Duration::from_nanos((t - e).as_ps() / 1000);
            turn_lag = lag;
            self.lag.add(lag);
            if let Some(max) = self.cfg.max_lag
                && lag > max
            {
                return Err(DriverError::Lag {
                    lag_ms: lag.as_secs_f64() * 1e3,
                    max_ms: max.as_secs_f64() * 1e3,
                    at_s: e.as_secs_f64(),
                });
            }
        }
        // Every event at or before t, in order.
        let until = if t >= end { end } else { t.saturating_add(atmlab_engine::Duration::from_ps(1)) };
        self.sim.advance(until);
        self.write_delivered()?;
        let after = self.clock.now();
        if turn_lag > self.cfg.late {
            self.behind += after.saturating_sub(wall);
        }
        if t >= end {
            return Ok(Status::Finished);
        }
        let next = self.sim.next_event_time().map(|e| Duration::from_nanos(e.as_ps().div_ceil(1000)));
        let close = next.is_some_and(|n| n.saturating_sub(after) < self.cfg.spin);
        if !close {
            let deadline = Some(next.unwrap_or(Duration::MAX).min(wall_time(end)).min(stop.unwrap_or(Duration::MAX)));
            self.io.wait(&self.watch, deadline).map_err(|source| DriverError::Io { dev: usize::MAX, source })?;
        }
        Ok(Status::Running)
    }

    /// Reads each device whose host is not backed up and injects what it
    /// holds at `at`.
    fn read_devices(&mut self, at: SimTime) -> Result<(), DriverError> {
        let mut blocked = false;
        for dev in 0..self.hosts.len() {
            let host = self.hosts[dev];
            let mut backlog = self.sim.adapter_backlog(host);
            let mut read = 0;
            while backlog < self.cfg.backlog_cells && read < self.cfg.burst {
                let Some(n) = self.io.recv(dev, &mut self.buf).map_err(|source| DriverError::Io { dev, source })?
                else {
                    break;
                };
                read += 1;
                match self.sim.inject(host, at, &self.buf[..n]) {
                    Ok(()) => {
                        self.report.packets_in += 1;
                        backlog += cells(n as u64);
                    }
                    Err(InjectError::AfterEnd(_)) => break,
                    Err(e) => self.report.refuse(&e),
                }
            }
            self.watch[dev] = backlog < self.cfg.backlog_cells;
            blocked |= !self.watch[dev];
        }
        if blocked {
            self.report.blocked_turns += 1;
        }
        Ok(())
    }

    /// Writes the packets delivered to their hosts' devices.
    fn write_delivered(&mut self) -> Result<(), DriverError> {
        let out = self.sim.drain();
        if out.is_empty() {
            return Ok(());
        }
        for d in out {
            let Some(dev) = self.hosts.iter().position(|&h| h == d.host) else { continue };
            match self.io.send(dev, &d.bytes) {
                Ok(()) => self.report.packets_out += 1,
                // A device whose other side is down (EIO), or full: lost.
                Err(_) => self.report.write_errors += 1,
            }
            let now = self.clock.now();
            let late = now.saturating_sub(wall_time(d.at));
            self.delivery.add(late);
            if late > self.cfg.late {
                self.report.late_packets += 1;
            }
        }
        Ok(())
    }

    /// The lag report so far.
    pub fn report(&self) -> LagReport {
        let s = |d: Duration| d.as_secs_f64();
        LagReport {
            lag_samples: self.lag.n,
            lag_p50_s: s(self.lag.quantile(0.5)),
            lag_p99_s: s(self.lag.quantile(0.99)),
            lag_max_s: s(self.lag.max),
            behind_s: s(self.behind),
            delivery_p50_s: s(self.delivery.quantile(0.5)),
            delivery_p99_s: s(self.delivery.quantile(0.99)),
            delivery_max_s: s(self.delivery.max),
            ..self.report.clone()
        }
    }

    /// Ends the run: its results (the capture files flushed) and the lag
    /// report.
    pub fn finish(self) -> (Result<RunResult, SimulationError>, LagReport) {
        let report = self.report();
        (self.sim.run(), report)
    }
}

/// The cells of an IP packet of `bytes` in LLC/SNAP (for back-pressure; an
/// estimate for other encapsulations).
fn cells(bytes: u64) -> u64 {
    (bytes + 16).div_ceil(48)
}

/// A clock reading as a simulated time (nanoseconds, exactly).
fn sim_time(d: Duration) -> SimTime {
    SimTime::from_ps(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX / 1000).saturating_mul(1000))
}

/// A simulated time as a clock reading (to the nanosecond below).
fn wall_time(t: SimTime) -> Duration {
    Duration::from_nanos(t.as_ps() / 1000)
}

#[cfg(test)]
mod tests;
