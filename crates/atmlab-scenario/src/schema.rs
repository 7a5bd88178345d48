//! The scenario file format (TOML, or the same structure as JSON).
//!
//! Every struct denies unknown keys, and every quantity is a string with its
//! unit, parsed while deserializing, so a mistake is reported with the key
//! path where it happened (`switches[0].port.buffer: ...`).
//! `docs/scenario-format.md` documents each key; this file is the schema.

pub use crate::abr_switch::AbrSwitchSpec;
use crate::units;
use atmlab_engine::{BitRate, Duration, MAX_SCENARIO_TIME};
use atmlab_net::aal5::Encapsulation;
use atmlab_net::atm::{ServiceCategory, UpcAction};
use atmlab_net::ip::Fragmentation;
use atmlab_net::sim::{EfficiencyCapacity, ProbeKind, SlotPhase};
use atmlab_net::tcp::{BackoffReset, DelayedAckRule, RtoAlgorithm, TcpVariant, TimerModel, WindowScaling};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

macro_rules! quantity {
    ($(#[$m:meta])* $name:ident($inner:ty), $expect:literal, $parse:path, units: $units:expr, int: $int:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(|m| E::custom(format!("'{s}': {m}")))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        let int: Option<fn(i64) -> Result<$inner, String>> = $int;
                        match int {
                            Some(f) => f(v).map($name).map_err(E::custom),
                            None => Err(E::custom(format!("{v} has no unit; write it as {}", $expect))),
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(i64::try_from(v).map_err(|_| E::custom("value too large"))?)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as {}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&format!("{:?}", self.0))
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let int: Option<fn(i64) -> Result<$inner, String>> = $int;
                quantity_schema($expect, $units, int.is_some(), &[])
            }
        }
    };
}

/// The schema of a quantity written with one of `units` (the parser's own
/// lists, [`units::TIME_UNITS`], ...): a string matching the number and
/// unit (or, if `int`, a whole number: a bare count), or one of `words`.
fn quantity_schema(description: &str, units: &[(&str, u128)], int: bool, words: &[&str]) -> Schema {
    // Unit names hold letters, "/" and "µ": nothing a regular expression reads specially.
    let names: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
    let pattern =
        format!(r"^\s*\+?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)([eE][+-]?[0-9]+)?\s*({})\s*$", names.join("|"));
    let mut any = vec![json!({ "type": "string", "pattern": pattern })];
    if int {
        any.push(json!({ "type": "integer", "minimum": 0 }));
    }
    if !words.is_empty() {
        any.push(json!({ "enum": words }));
    }
    if any.len() == 1 {
        return json_schema!({ "description": description, "type": "string", "pattern": any[0]["pattern"] });
    }
    json_schema!({ "description": description, "anyOf": any })
}

fn nonneg_bytes(v: i64) -> Result<u64, String> {
    u64::try_from(v).map_err(|_| "must not be negative".to_string())
}

/// The slowest rate a scenario may state: 1 kbit/s (a cell every 0.424 s).
pub const MIN_RATE_BPS: u64 = 1_000;
/// The fastest rate a scenario may state: 1 Tbit/s.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;

/// A time of the scenario: at most [`MAX_SCENARIO_TIME`], so that no sum of
/// the core's times can overflow its 64-bit picoseconds.
fn scenario_time(s: &str) -> Result<Duration, String> {
    let d = units::duration(s)?;
    if d > MAX_SCENARIO_TIME {
        return Err(format!("must be at most {MAX_SCENARIO_TIME} (about 11.6 days)"));
    }
    Ok(d)
}

/// A rate of the scenario: from [`MIN_RATE_BPS`] to [`MAX_RATE_BPS`].
fn scenario_rate(s: &str) -> Result<BitRate, String> {
    let r = units::rate(s)?;
    if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&r.bps()) {
        return Err("must be between 1 kbit/s and 1 Tbit/s".to_string());
    }
    Ok(r)
}

quantity!(
    /// A time span, e.g. `"5 us"` (at most 10^6 s).
    Time(Duration), "a time with its unit, e.g. \"5 us\"", scenario_time, units: units::TIME_UNITS, int: None
);
quantity!(
    /// A rate, e.g. `"155.52 Mbit/s"` (1 kbit/s to 1 Tbit/s).
    Rate(BitRate), "a rate with its unit, e.g. \"155.52 Mbit/s\"", scenario_rate, units: units::RATE_UNITS, int: None
);
quantity!(
    /// A size in bytes, e.g. `"512 bytes"` (a bare integer means bytes).
    Bytes(u64), "a size, e.g. \"512 bytes\" or 512", units::bytes, units: units::BYTE_UNITS, int: Some(nonneg_bytes)
);
quantity!(
    /// A size in cells, e.g. `"1000 cells"` (a bare integer means cells).
    Cells(u64), "a size in cells, e.g. \"1000 cells\" or 1000", units::cells, units: units::CELL_UNITS, int: Some(nonneg_bytes)
);

/// A rate of the scenario that may be zero (a silent interval, an MCR of
/// 0): at most [`MAX_RATE_BPS`].
fn scenario_rate_or_zero(s: &str) -> Result<u64, String> {
    let r = units::rate_bps(s)?;
    if r > MAX_RATE_BPS {
        return Err("must be at most 1 Tbit/s".to_string());
    }
    Ok(r)
}

quantity!(
    /// A rate that may be zero, in bit/s, e.g. `"0 cells/s"`.
    RateOrZero(u64), "a rate with its unit, e.g. \"0 cells/s\"", scenario_rate_or_zero, units: units::RATE_UNITS, int: None
);

/// A quantity that is constant (`"80 bytes"`) or drawn from a distribution
/// for each TSDU: `{ exponential = "10 ms" }` (the mean) or
/// `{ bivalue = ["80 bytes", "1500 bytes"], p = 0.2 }` (the second value
/// with probability `p`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Varying<T> {
    /// Always this value.
    Constant(T),
    /// Exponential with this mean.
    Exponential(T),
    /// Two values, the second with probability `p`.
    Bivalue([T; 2], f64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DistTable<T> {
    exponential: Option<T>,
    bivalue: Option<[T; 2]>,
    p: Option<f64>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Varying<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{
            F64Deserializer, I64Deserializer, MapAccessDeserializer, StrDeserializer, U64Deserializer,
        };
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Varying<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quantity, or { exponential = mean } or { bivalue = [a, b], p = probability of b }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                T::deserialize(StrDeserializer::<E>::new(s)).map(Varying::Constant)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(I64Deserializer::<E>::new(v)).map(Varying::Constant)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(U64Deserializer::<E>::new(v)).map(Varying::Constant)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(F64Deserializer::<E>::new(v)).map(Varying::Constant)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let t = DistTable::<T>::deserialize(MapAccessDeserializer::new(map))?;
                match (t.exponential, t.bivalue, t.p) {
                    (Some(mean), None, None) => Ok(Varying::Exponential(mean)),
                    (None, Some(values), Some(p)) if (0.0..=1.0).contains(&p) => Ok(Varying::Bivalue(values, p)),
                    (None, Some(_), Some(p)) => Err(de::Error::custom(format!("p = {p} is not a probability"))),
                    (None, Some(_), None) => Err(de::Error::custom("a bivalue distribution needs p")),
                    (Some(_), None, Some(_)) => Err(de::Error::custom("p goes with bivalue, not exponential")),
                    _ => Err(de::Error::custom("give exactly one of exponential or bivalue")),
                }
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A byte count that may be infinite (`"inf"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Amount(pub Option<u64>);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(i64),
            Str(String),
        }
        match Repr::deserialize(d).map_err(|_| de::Error::custom("expected a size such as \"1 MB\", or \"inf\""))? {
            Repr::Str(s) if s.trim() == "inf" => Ok(Amount(None)),
            Repr::Str(s) => {
                units::bytes(&s).map(|b| Amount(Some(b))).map_err(|m| de::Error::custom(format!("'{s}': {m}")))
            }
            Repr::Int(v) => nonneg_bytes(v).map(|b| Amount(Some(b))).map_err(de::Error::custom),
        }
    }
}

/// The whole scenario.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name used in results (defaults to the file name).
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Run length and default seed.
    pub simulation: SimulationSpec,
    /// Defaults for every TCP application.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// End systems.
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
    /// Switches.
    #[serde(default)]
    pub switches: Vec<SwitchSpec>,
    /// Links.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Virtual channels.
    #[serde(default)]
    pub vcs: Vec<VcSpec>,
    /// Applications.
    #[serde(default)]
    pub apps: Vec<AppSpec>,
    /// How run-level metrics are computed.
    #[serde(default)]
    pub metrics: MetricsSpec,
    /// Time series to record.
    #[serde(default)]
    pub probes: Vec<ProbeSpecToml>,
    /// What a traced run (`atmlab run --trace FILE`) records: kinds, VCs,
    /// ports, a time window (default: everything).
    #[serde(default)]
    pub trace: Option<TraceTable>,
    /// How `atmlab emulate` paces the run (read only there).
    #[serde(default)]
    pub realtime: Option<RealtimeSpec>,
}

/// `[trace]`: which records a traced run writes (docs/experiments.md,
/// "Traces"). The file is the run's to say (`--trace FILE`); without one
/// nothing is traced.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceTable {
    /// The kinds of record: `drop`, `frame`, `rm`, `control`, `tcp`
    /// (default: all).
    pub kinds: Option<Vec<TraceKindName>>,
    /// Only these VCs' records (default: every VC).
    pub vcs: Option<Vec<String>>,
    /// Only records at these ports, `[from, to]` (default: every port).
    pub ports: Option<Vec<[String; 2]>>,
    /// Records from this time on (default 0 s).
    pub from: Option<Time>,
    /// Records before this time (default: the end of the run).
    pub until: Option<Time>,
}

/// A kind of trace record.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceKindName {
    /// Cells dropped (with why) and frames discarded by EPD/PPD.
    Drop,
    /// AAL5 frames delivered or lost at hosts.
    Frame,
    /// RM cells sent, turned around, received (ER, CCR, CI, NI, ACR).
    Rm,
    /// Switch controllers' decisions at the end of their intervals.
    Control,
    /// TCP sends, retransmissions, timeouts, fast retransmits, windows.
    Tcp,
}

/// `[simulation]`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Simulated time.
    pub duration: Time,
    /// Seed used when the command line gives none.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `random` (default): each link direction's slot grid has its own random
    /// phase; `aligned`: all start at t = 0.
    #[serde(default)]
    pub slot_phase: Option<SlotPhase>,
    /// Each link direction's rate is off by up to this many ppm (uniform,
    /// its own stream); 0 (default): exact rates.
    #[serde(default)]
    pub clock_tolerance_ppm: Option<f64>,
    /// The memory guard: the run stops with an error naming the queue that
    /// grew when what is held in queues, on links and at hosts' CPUs takes
    /// the memory of more cells than this (a cell held is one, an AAL5 frame
    /// in flight 9 more, a datagram waiting 8; default 50,000,000 cells,
    /// about 16 bytes each, at most 32: a flood stops at about 1.2 GB).
    #[serde(default)]
    pub max_cells_held: Option<Cells>,
    /// The links (`[a, b]`, either order) whose AAL5 frames a run with a
    /// capture directory (`atmlab run --pcap DIR`) writes to pcap files,
    /// one per direction (`DIR/a-b.pcap`, `DIR/b-a.pcap`); default: every
    /// link. Without a capture directory nothing is written.
    #[serde(default)]
    pub capture: Option<Vec<[String; 2]>>,
    /// Output ports `[from, to]` whose offered cells a capture also writes,
    /// before the port's buffer may drop them (`DIR/from-to.input.pcap`):
    /// a frame a switch drops is still in that file.
    #[serde(default)]
    pub capture_input: Option<Vec<[String; 2]>>,
}

fn default_seed() -> u64 {
    1
}

/// `[tcp]` and per-application `tcp = {...}`: every key optional; an
/// application's keys override the scenario's, which override the defaults.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// `vanilla`, `tahoe`, `reno`, `newreno` or `sack`.
    pub variant: Option<TcpVariant>,
    /// Maximum segment size (default: MTU - 40).
    pub mss: Option<Bytes>,
    /// Receive window (default 65535 bytes).
    pub window: Option<Bytes>,
    /// `auto` (default), `on`, `off`.
    pub window_scaling: Option<WindowScaling>,
    /// Initial congestion window in segments (default 1).
    pub initial_cwnd: Option<u32>,
    /// Initial slow-start threshold (default: the window).
    pub initial_ssthresh: Option<Bytes>,
    /// Timer granularity (default 100 ms; `solaris25` 10 ms, Solaris's `lbolt`).
    pub timer_tick: Option<Time>,
    /// The RTO estimator: `ns2` (default), `bsd44_lite`, `bsd43_tahoe`, `rfc6298` or
    /// `solaris25` (Solaris 2.5's estimator, timer and timeout).
    pub rto_algorithm: Option<RtoAlgorithm>,
    /// RTO before the first RTT sample (default 3 s; `bsd44_lite` and `bsd43_tahoe` 6 s,
    /// `rfc6298` 1 s, `solaris25` 500 ms).
    pub initial_rto: Option<Time>,
    /// Lower bound of the RTO (default 0: two ticks apply; `rfc6298` 1 s; `solaris25` 200 ms).
    pub min_rto: Option<Time>,
    /// Upper bound of the RTO (default 64 s; `solaris25` 60 s).
    pub max_rto: Option<Time>,
    /// `tick_aligned` (BSD ticks from t = 0, default), `host_ticks` (BSD
    /// ticks with a random phase per host) or `exact` (ns-2).
    pub rto_timer: Option<TimerModel>,
    /// Duplicate ACKs that trigger fast retransmit (default 3).
    pub dupack_threshold: Option<u32>,
    /// Delay ACKs (default false).
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout (default 200 ms).
    pub delayed_ack_timeout: Option<Time>,
    /// `tick_aligned` (default), `host_ticks` or `exact`, as `rto_timer`.
    pub delayed_ack_timer: Option<TimerModel>,
    /// How delayed ACKs are counted (needs `delayed_ack = true`): `bsd`
    /// (default: every second segment) or `solaris` (Solaris 2.x: the
    /// unacknowledged bytes against a limit in units of the MSS).
    pub delayed_ack_rule: Option<DelayedAckRule>,
    /// `solaris` rule only: the most data whose ACK may be deferred, in MSS,
    /// 0..16 (Solaris 7-9's `tcp_deferred_acks_max`; default: Solaris 2.x's,
    /// half the receive window in whole MSS, the window at least 4 MSS).
    pub delayed_ack_max: Option<u32>,
    /// SACK blocks per ACK, 1..4 (default 3).
    pub max_sack_blocks: Option<u8>,
    /// Timer-driven stretch ACKs: ACK only when this timer, started by the
    /// first unacknowledged segment, fires (Linux 2.0: about 4 ms).
    pub stretch_ack: Option<Time>,
    /// `rtt_sample` (default, BSD) or `new_ack`: what resets the RTO backoff.
    pub backoff_reset: Option<BackoffReset>,
    /// No fast-recovery window inflation (002 s5.3's modified TCP).
    pub freeze_window_in_fast_recovery: Option<bool>,
    /// A timeout keeps the duplicate-ACK count (002 s5.3's modified TCP).
    pub keep_dupacks_on_timeout: Option<bool>,
    /// The socket send buffer (`SO_SNDBUF`). Setting it turns on the BSD
    /// socket send path: the application writes `write_size` bytes per call
    /// into this buffer and TCP sends from it under the window and Nagle's
    /// rule (default: none, a greedy source that always has full segments).
    pub send_buffer: Option<Bytes>,
    /// Bytes per application write call, the TSDU (socket send path;
    /// default: the send buffer).
    pub write_size: Option<Bytes>,
    /// The application's time per write call before it copies (socket send
    /// path; default 0 s).
    pub write_cost: Option<Time>,
}

/// `[[hosts]]`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Unique node name.
    pub name: String,
    /// IP MTU (default 9180 bytes, RFC 1577).
    #[serde(default)]
    pub mtu: Option<Bytes>,
    /// `llc_snap` (default) or `null`.
    #[serde(default)]
    pub encapsulation: Option<Encapsulation>,
    /// `rfc791` (default) or `berkeley`: how datagrams larger than the MTU
    /// are cut.
    #[serde(default)]
    pub fragmentation: Option<Fragmentation>,
    /// The ATM adapter.
    #[serde(default)]
    pub adapter: AdapterSpec,
    /// The end system's processing costs (default: none).
    #[serde(default)]
    pub cpu: CpuSpec,
    /// A host whose IP packets come from outside the simulation: a real
    /// operating system's stack, in a network namespace, through a TUN
    /// device (`atmlab emulate`; docs/emulate.md). A run without a
    /// driver sends nothing from it.
    #[serde(default)]
    pub external: Option<ExternalSpec>,
}

/// `hosts[i].external`: the host's IPv4 address and its kernel's TCP
/// congestion control.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    /// The host's IPv4 address (`"10.200.0.1"`), unique among the
    /// external hosts: packets are routed to the host by it.
    pub address: String,
    /// The TCP congestion control of the host's namespace
    /// (`net.ipv4.tcp_congestion_control`: `"cubic"`, `"reno"`, `"bbr"`,
    /// ...; default: the kernel's).
    #[serde(default)]
    pub congestion: Option<String>,
}

/// `[realtime]`: how `atmlab emulate` paces the run to the wall clock.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RealtimeSpec {
    /// Abort when the simulation falls this far behind the wall clock
    /// (default: never; the lag is always reported).
    #[serde(default)]
    pub max_lag: Option<Time>,
}

/// `hosts[i].cpu`: the end system's processing costs (004 Annex A).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    /// CPU time per datagram sent (the interdatagram gap T_d).
    pub per_datagram: Option<Time>,
    /// CPU time per cell sent (the intercell gap).
    pub per_cell: Option<Time>,
    /// CPU time per datagram received.
    pub receive_per_datagram: Option<Time>,
    /// Datagrams the receiving side can hold; more are dropped.
    pub receive_queue: Option<u64>,
}

/// `hosts[i].adapter`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdapterSpec {
    /// Peak cell rate the adapter sends at (default: the link rate).
    pub peak: Option<Rate>,
    /// The adapter's transmit buffer (default: unlimited).
    pub buffer: Option<Cells>,
    /// `block` (default: the CPU waits) or `drop` (the datagram is lost)
    /// when a datagram does not fit in the buffer.
    pub overflow: Option<atmlab_net::sim::Overflow>,
}

/// `[[switches]]`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// Unique node name.
    pub name: String,
    /// Defaults for every output port.
    #[serde(default)]
    pub port: PortSpec,
    /// Overrides for the port toward a given neighbour.
    #[serde(default)]
    pub port_to: BTreeMap<String, PortSpec>,
    /// An ABR virtual source and destination (TM 4.0 s5.10.10): every ABR
    /// VC through the switch has its control loops split here, with a
    /// per-VC queue (default false).
    #[serde(default)]
    pub vs_vd: bool,
}

/// A switch output port; all keys optional (merged over the switch's
/// `port`, then over the built-in defaults).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// Shared buffer for all categories (required somewhere).
    pub buffer: Option<Cells>,
    /// Acceptance policy of every category unless overridden in `classes`.
    pub drop_policy: Option<DropPolicySpec>,
    /// `{ kind = "strict_priority" }` (default) or `{ kind =
    /// "guaranteed_rate", gr = 0.1 }`.
    pub scheduler: Option<SchedulerSpec>,
    /// Per-category settings.
    #[serde(default)]
    #[schemars(extend("propertyNames" = { "$ref": "#/$defs/ServiceCategory" }))]
    pub classes: BTreeMap<ServiceCategory, ClassSpec>,
    /// Shape the port's output to this cell rate (a shaped VP or link).
    pub shape: Option<Rate>,
    /// CLP-selective discard: tagged cells are dropped from this occupancy.
    pub clp_threshold: Option<Cells>,
    /// ABR flow control of the port's ABR VCs: ERICA+, ERICA or an EFCI
    /// switch (a `port_to` table replaces the switch's whole `abr` table).
    pub abr: Option<AbrSwitchSpec>,
}

/// Per-category port settings.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    /// A buffer of the category's own instead of the shared one.
    pub buffer: Option<Cells>,
    /// The category's acceptance policy.
    pub drop_policy: Option<DropPolicySpec>,
}

/// `drop_policy = { kind = ..., ... }`. Which keys a kind takes is checked
/// when the scenario is built (so errors keep their key path).
#[derive(Clone, Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropPolicySpec {
    /// `tail_drop`, `ppd`, `epd`, `selective_drop` or `fba`.
    pub kind: DropPolicyKind,
    /// EPD, Selective Drop, FBA: the occupancy threshold `R`.
    #[serde(default)]
    pub threshold: Option<Cells>,
    /// The threshold as a fraction of the buffer (default 0.9).
    #[serde(default)]
    pub threshold_fraction: Option<f64>,
    /// Selective Drop, FBA: the load-ratio parameter `Z` (default 0.8).
    #[serde(default)]
    pub z: Option<f64>,
    /// PPD, EPD, Selective Drop, FBA: keep the last cell of a cut frame
    /// (default true).
    #[serde(default)]
    pub keep_end_of_frame: Option<bool>,
    /// EPD: the threshold as `buffer - excess_frames x frame_cells` (002's
    /// normalised excess buffer capacity `b` and `MTU*`).
    #[serde(default)]
    pub excess_frames: Option<f64>,
    /// EPD: cells of the largest frame (`MTU*`), with `excess_frames`:
    /// a size in cells, or `"auto"` (the largest AAL5 frame of any VC
    /// through the port, from its path MTU and encapsulation).
    #[serde(default)]
    pub frame_cells: Option<FrameCells>,
    /// EPD: `">="` (default) or `">"` (the ASX-200's "greater than").
    #[serde(default)]
    pub compare: Option<String>,
    /// EPD: queue the last cell of a refused frame (default false; the
    /// ASX-200 does).
    #[serde(default)]
    pub keep_end_of_refused_frame: Option<bool>,
    /// A port's policy: the service categories it applies to (default
    /// UBR alone, as switches apply frame discard; the others tail-drop
    /// unless their `classes` table names a policy). Not in a class's table.
    #[serde(default)]
    pub categories: Option<Vec<ServiceCategory>>,
}

/// `frame_cells`: a size in cells, or `"auto"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameCells {
    /// This many cells.
    Cells(u64),
    /// The largest frame of the VCs through the port.
    Auto,
}

impl<'de> Deserialize<'de> for FrameCells {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(i64),
            Str(String),
        }
        match Repr::deserialize(d)
            .map_err(|_| de::Error::custom("expected a size such as \"91 cells\", or \"auto\""))?
        {
            Repr::Str(s) if s.trim() == "auto" => Ok(FrameCells::Auto),
            Repr::Str(s) => {
                units::cells(&s).map(FrameCells::Cells).map_err(|m| de::Error::custom(format!("'{s}': {m}")))
            }
            Repr::Int(v) => nonneg_bytes(v).map(FrameCells::Cells).map_err(de::Error::custom),
        }
    }
}

/// The acceptance policies a scenario can name.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DropPolicyKind {
    /// Drop cells when the buffer is full.
    TailDrop,
    /// Partial Packet Discard.
    Ppd,
    /// Early Packet Discard.
    Epd,
    /// Selective Drop (per-VC load ratio).
    SelectiveDrop,
    /// Fair Buffer Allocation.
    Fba,
}

/// `scheduler = { kind = ..., ... }`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchedulerSpec {
    /// `strict_priority` or `guaranteed_rate`.
    pub kind: SchedulerKindName,
    /// guaranteed_rate: the fraction of the slots guaranteed, 0..1.
    #[serde(default)]
    pub gr: Option<f64>,
    /// guaranteed_rate: the category it is guaranteed to (default `ubr`).
    #[serde(default)]
    pub class: Option<ServiceCategory>,
}

/// The schedulers a scenario can name.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKindName {
    /// CBR > VBR > ABR > UBR.
    StrictPriority,
    /// A guaranteed fraction of the slots for one category (97-0424's GR).
    GuaranteedRate,
    /// Per-VC queues, served round robin within each category (categories
    /// by strict priority): the FORE ASX-200 (002).
    RoundRobin,
}

/// `[[links]]`: a full-duplex link.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two nodes it joins.
    pub between: [String; 2],
    /// Cell rate (53-byte cells) in each direction.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Time,
    /// Cells lost on the link on purpose.
    #[serde(default)]
    pub loss: Option<LossSpec>,
}

/// `loss = { kind = ..., ... }` on a link.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    /// `bernoulli` (each cell lost with probability `clr`), `periodic`
    /// (one cell in `one_in`) or `frames` (the AAL5 frames listed).
    pub kind: LossKind,
    /// bernoulli: the cell loss ratio, 0..1.
    #[serde(default)]
    pub clr: Option<f64>,
    /// periodic: one cell in this many is lost.
    #[serde(default)]
    pub one_in: Option<u64>,
    /// periodic: `start` (default: the `one_in`-th cell is the first lost)
    /// or `random` (the counter starts anywhere in its cycle).
    #[serde(default)]
    pub phase: Option<LossPhase>,
    /// frames: the numbers (from 1, ascending) of the frames to lose, in
    /// the order frames start on the link direction.
    #[serde(default)]
    pub frames: Option<Vec<u64>>,
    /// `both` (default), `forward` (`between[0]` -> `between[1]`) or `backward`.
    #[serde(default)]
    pub direction: Option<LossDirection>,
}

/// Where a periodic loss counter starts.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossPhase {
    /// At zero: the `one_in`-th cell is the first lost.
    Start,
    /// At a uniform random point of the cycle (the link's loss stream).
    Random,
}

/// Loss models.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// Independent loss with a probability.
    Bernoulli,
    /// Deterministic: one cell in N.
    Periodic,
    /// Deterministic: every cell of the chosen AAL5 frames.
    Frames,
}

/// Which direction of a link loses cells.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossDirection {
    /// Both directions, each with its own stream.
    Both,
    /// `between[0]` to `between[1]`.
    Forward,
    /// `between[1]` to `between[0]`.
    Backward,
}

/// A direction of a VC.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcDirection {
    /// Along its path.
    #[default]
    Forward,
    /// Back from its last host to its first.
    Backward,
}

/// `[[vcs]]`: a bidirectional virtual channel.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcSpec {
    /// Unique VC name.
    pub name: String,
    /// Host, switches..., host.
    pub path: Vec<String>,
    /// Service category (default `ubr`).
    #[serde(default)]
    pub category: Option<ServiceCategory>,
    /// `"vpi/vci"` on every link (default: the lowest free VCI >= 32 on VPI 0).
    #[serde(default)]
    pub label: Option<String>,
    /// One-way (default false): cells flow only along `path`, and the VC is
    /// not registered on the reverse links (an ON/OFF source's VC).
    #[serde(default)]
    pub simplex: bool,
    /// The traffic contract (needed by `upc`).
    #[serde(default)]
    pub contract: Option<ContractSpec>,
    /// Usage parameter control: police the forward direction against the
    /// contract where it enters a switch.
    #[serde(default)]
    pub upc: Option<UpcSpec>,
    /// ABR: each direction gets a TM 4.0 source and destination with these
    /// parameters (every key optional; `abr = {}` for the defaults). The
    /// VC's category is then `abr`.
    #[serde(default)]
    pub abr: Option<AbrSpec>,
}

/// `vcs[i].abr`: the TM 4.0 parameters of both directions of an ABR VC
/// (TM 4.0 s5.10.2; the defaults and the choices for 97-0177R2 in
/// docs/models/abr.md).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AbrSpec {
    /// Peak cell rate (default: the cell rate of the slower of the two
    /// hosts' links).
    pub pcr: Option<Rate>,
    /// Minimum cell rate (default 0).
    pub mcr: Option<RateOrZero>,
    /// Initial cell rate (default: PCR).
    pub icr: Option<Rate>,
    /// Tagged cell rate of out-of-rate RM cells (default 10 cells/s).
    pub tcr: Option<Rate>,
    /// Cells per forward RM cell (default 32).
    pub nrm: Option<u32>,
    /// Fewest cells between forward RM cells under the Trm rule (default 2).
    pub mrm: Option<u32>,
    /// Time after which a forward RM cell is due (default 100 ms).
    pub trm: Option<Time>,
    /// Rate increase factor (default 1/16).
    pub rif: Option<f64>,
    /// Rate decrease factor (default 1/16).
    pub rdf: Option<f64>,
    /// Cutoff decrease factor of rule 6 (default 1/16).
    pub cdf: Option<f64>,
    /// ACR decrease time factor of rule 5 (default 0.5 s).
    pub adtf: Option<Time>,
    /// Transient buffer exposure (default 16,777,215 cells: rule 6 never
    /// fires).
    pub tbe: Option<Cells>,
    /// Fixed round-trip time signalled at setup (default: none).
    pub frtt: Option<Time>,
}

/// `vcs[i].contract`: TM 4.0 conformance definition and parameters.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractSpec {
    /// `cbr.1` (default without `scr`), `vbr.1` (default with it), `vbr.2`, `vbr.3`.
    pub conformance: Option<String>,
    /// Peak cell rate.
    pub pcr: Rate,
    /// Cell delay variation tolerance (default 0).
    pub cdvt: Option<Time>,
    /// Sustainable cell rate (VBR).
    pub scr: Option<Rate>,
    /// Maximum burst size in cells (VBR; or `bt`).
    pub mbs: Option<u64>,
    /// Burst tolerance (VBR; or `mbs`).
    pub bt: Option<Time>,
}

/// `vcs[i].upc`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpcSpec {
    /// The switch whose ingress polices (default: the first on the path).
    pub at: Option<String>,
    /// `discard` (default) or `tag`.
    pub action: Option<UpcAction>,
}

/// `[[apps]]`. Which keys a kind takes is checked when the scenario is
/// built (so errors keep their key path).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    /// `tcp_bulk` or `udp_cbr`.
    pub kind: AppKind,
    /// Unique application name.
    pub name: String,
    /// The VC it uses (data flows from its first host to its last);
    /// required by every kind but `exec`.
    #[serde(default)]
    pub vc: Option<String>,
    /// exec: the external host whose namespace runs the command.
    #[serde(default)]
    pub host: Option<String>,
    /// exec: the command, run by `sh -c` in the host's namespace by
    /// `atmlab emulate`; `{HOST}` is replaced by the address of external
    /// host HOST (`"iperf3 -c {dst0}"`).
    #[serde(default)]
    pub command: Option<String>,
    /// exec: the emulation ends when this command has exited (default
    /// false: it is stopped at the end).
    #[serde(default)]
    pub wait: Option<bool>,
    /// When it starts (default 0 s).
    #[serde(default)]
    pub start: Option<Time>,
    /// A uniform random delay in `[0, start_jitter)` added to `start`.
    #[serde(default)]
    pub start_jitter: Option<Time>,
    /// tcp_bulk: bytes to send (default `"inf"`).
    #[serde(default)]
    pub bytes: Option<Amount>,
    /// tcp_bulk: overrides of the scenario's `[tcp]`.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// udp_cbr, udp: user data per datagram (udp: or a distribution).
    #[serde(default)]
    pub payload: Option<Varying<Bytes>>,
    /// udp_cbr, udp: time between datagrams (udp: or a distribution).
    #[serde(default)]
    pub interval: Option<Varying<Time>>,
    /// udp_cbr: datagrams to send (default: until the end).
    #[serde(default)]
    pub count: Option<u64>,
    /// tcp_bulk: the application writes for this long, then stops (the
    /// transfer ends with the data written).
    #[serde(default)]
    pub duration: Option<Time>,
    /// udp_cbr: record the arrival times of frames at the receiver.
    #[serde(default)]
    pub record_arrivals: Option<RecordSpec>,
    /// udp_cbr: the largest write the sending program accepts; larger
    /// payloads are refused and nothing is sent (udpt: 9000 bytes).
    #[serde(default)]
    pub max_payload: Option<Bytes>,
    /// onoff: the cell rate while ON.
    #[serde(default)]
    pub peak: Option<Rate>,
    /// onoff: ON time of each period.
    #[serde(default)]
    pub on: Option<Time>,
    /// onoff: OFF time of each period.
    #[serde(default)]
    pub off: Option<Time>,
    /// onoff: the period (with `duty`, instead of `on` and `off`).
    #[serde(default)]
    pub period: Option<Time>,
    /// onoff: the ON fraction of the period, (0, 1].
    #[serde(default)]
    pub duty: Option<f64>,
    /// piecewise: how many sources the application multiplexes on its VC
    /// (default 1); each has its own rates and intervals.
    #[serde(default)]
    pub sources: Option<u32>,
    /// piecewise: the rate of each interval, a list (`["10 Mbit/s", ...]`)
    /// or `{ fgn = { mean, std, peak, hurst, ... } }`.
    #[serde(default)]
    pub rates: Option<RatesSpec>,
    /// piecewise: each interval's length, `"50 ms"` or `{ uniform = ["20
    /// ms", "100 ms"] }`.
    #[serde(default)]
    pub intervals: Option<IntervalsSpec>,
    /// piecewise: start a list of rates over when it runs out (default
    /// false: the source falls silent).
    #[serde(default)]
    pub cycle: Option<bool>,
    /// piecewise, onoff: every this many cells one ends an AAL5 frame
    /// (default: no frame marks).
    #[serde(default)]
    pub frame_cells: Option<u32>,
}

/// `apps[i].rates`: a list of rates, or a fractional Gaussian noise rate
/// sequence (97-0177R2's video).
#[derive(Clone, Debug, PartialEq)]
pub enum RatesSpec {
    /// These rates, in order.
    List(Vec<RateOrZero>),
    /// `{ fgn = {...} }`.
    Fgn(FgnSpec),
}

/// `rates = { fgn = {...} }`: per source, rates `mean + std * x_k` with `x`
/// a normalised FGN block of `length` values; values outside `[0, peak]`
/// are skipped (docs/models/sources.md).
#[derive(Clone, Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FgnSpec {
    /// Mean of the untruncated rate.
    pub mean: Rate,
    /// Standard deviation of the untruncated rate.
    pub std: Rate,
    /// The highest rate accepted.
    pub peak: Rate,
    /// Hurst parameter, in (0, 1).
    pub hurst: f64,
    /// `paxson` (default, the study's) or `davies_harte` (exact).
    #[serde(default)]
    pub method: Option<FgnMethodName>,
    /// Length of the FGN block (default: enough for the run, at least 2^15).
    #[serde(default)]
    pub length: Option<u64>,
}

/// The FGN generators.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FgnMethodName {
    /// Paxson's FFT method.
    Paxson,
    /// Davies and Harte's circulant embedding.
    DaviesHarte,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RatesTable {
    fgn: FgnSpec,
}

impl<'de> Deserialize<'de> for RatesSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RatesSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of rates, or { fgn = { mean, std, peak, hurst } }")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<RateOrZero>::deserialize(SeqAccessDeserializer::new(seq)).map(RatesSpec::List)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RatesTable::deserialize(MapAccessDeserializer::new(map)).map(|t| RatesSpec::Fgn(t.fgn))
            }
        }
        d.deserialize_any(V)
    }
}

/// `apps[i].intervals`: constant or uniform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntervalsSpec {
    /// Every interval this long.
    Constant(Time),
    /// Uniform in `[min, max]`.
    Uniform([Time; 2]),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntervalsTable {
    uniform: [Time; 2],
}

impl<'de> Deserialize<'de> for IntervalsSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, StrDeserializer};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IntervalsSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time, e.g. \"50 ms\", or { uniform = [\"20 ms\", \"100 ms\"] }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Time::deserialize(StrDeserializer::<E>::new(s)).map(IntervalsSpec::Constant)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IntervalsTable::deserialize(MapAccessDeserializer::new(map)).map(|t| IntervalsSpec::Uniform(t.uniform))
            }
        }
        d.deserialize_any(V)
    }
}

/// `apps[i].record_arrivals`: which frames' arrival times to keep.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// The first time recorded (default 0 s).
    #[serde(default)]
    pub from: Option<Time>,
    /// How many frames.
    pub count: u32,
}

/// The applications a scenario can name.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    /// A greedy TCP bulk transfer.
    TcpBulk,
    /// Constant-rate UDP: `payload` bytes every `interval`.
    UdpCbr,
    /// UDP with payloads and intervals drawn from distributions, and an
    /// amount of data as TSDUs, bytes or a duration (CM Toolset classes).
    Udp,
    /// An ON/OFF cell source: `peak` rate during `on`, silent during `off`.
    Onoff,
    /// Cell sources with a constant rate per interval (rates from a list
    /// or FGN), several multiplexed on one VC (97-0177R2's video).
    Piecewise,
    /// A command run in an external host's namespace by `atmlab emulate`
    /// (no traffic of the simulation's own).
    Exec,
    /// A persistent source on an ABR VC: from its start it always has
    /// cells, sent at the ABR source's ACR (the ATM Forum's test
    /// configurations); the sink counts them.
    AbrPersistent,
}

impl AppKind {
    /// The name used in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            AppKind::TcpBulk => "tcp_bulk",
            AppKind::UdpCbr => "udp_cbr",
            AppKind::Udp => "udp",
            AppKind::Onoff => "onoff",
            AppKind::Piecewise => "piecewise",
            AppKind::Exec => "exec",
            AppKind::AbrPersistent => "abr_persistent",
        }
    }
}

/// `[[probes]]`: a time series.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpecToml {
    /// Series name (default `kind:target`).
    #[serde(default)]
    pub name: Option<String>,
    /// `cwnd`, `ssthresh`, `goodput` (of an app), `queue`, `drops`,
    /// `utilization` (of a port).
    pub kind: ProbeKind,
    /// The application, for cwnd, ssthresh and goodput (TCP, UDP) and
    /// cell_rate (onoff, piecewise).
    #[serde(default)]
    pub app: Option<String>,
    /// The ABR VC, for acr and er, and its direction: `forward` (default:
    /// the source at the VC's first host) or `backward`.
    #[serde(default)]
    pub vc: Option<String>,
    /// With `vc`: `forward` or `backward`.
    #[serde(default)]
    pub direction: Option<VcDirection>,
    /// The port `[from, to]`, for queue, drops and utilization.
    #[serde(default)]
    pub port: Option<[String; 2]>,
    /// Time between samples.
    pub interval: Time,
}

/// `[metrics]`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsSpec {
    /// The link (`[from, to]`) whose capacity the efficiency refers to
    /// (default: the slowest link any TCP connection crosses, first found).
    pub efficiency_link: Option<[String; 2]>,
    /// `link` (default): its rate; `left_by_onoff`: its rate less the mean
    /// rate of the ON/OFF sources that cross it; `left_by_measured`: its
    /// rate less the measured throughput of the cell sources that cross it.
    #[serde(default)]
    pub efficiency_capacity: Option<EfficiencyCapacity>,
}

// The JSON Schema of the types read by hand above (their `Deserialize`
// takes several forms); the derived structs refer to them.

impl<T: JsonSchema> JsonSchema for Varying<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Varying_{}", T::schema_name()).into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let t = g.subschema_for::<T>();
        json_schema!({
            "description": "a constant, { exponential = mean } or { bivalue = [a, b], p = probability of b }",
            "anyOf": [
                t,
                {
                    "type": "object",
                    "properties": { "exponential": t },
                    "required": ["exponential"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "bivalue": { "type": "array", "items": t, "minItems": 2, "maxItems": 2 },
                        "p": { "type": "number", "minimum": 0, "maximum": 1 }
                    },
                    "required": ["bivalue", "p"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl JsonSchema for Amount {
    fn schema_name() -> Cow<'static, str> {
        "Amount".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        quantity_schema("a size such as \"1 MB\", or \"inf\"", units::BYTE_UNITS, true, &["inf"])
    }
}

impl JsonSchema for FrameCells {
    fn schema_name() -> Cow<'static, str> {
        "FrameCells".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        quantity_schema("a size such as \"91 cells\", or \"auto\"", units::CELL_UNITS, true, &["auto"])
    }
}

impl JsonSchema for RatesSpec {
    fn schema_name() -> Cow<'static, str> {
        "RatesSpec".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let rate = g.subschema_for::<RateOrZero>();
        let fgn = g.subschema_for::<FgnSpec>();
        json_schema!({
            "description": "a list of rates, or { fgn = { mean, std, peak, hurst } }",
            "anyOf": [
                { "type": "array", "items": rate },
                {
                    "type": "object",
                    "properties": { "fgn": fgn },
                    "required": ["fgn"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl JsonSchema for IntervalsSpec {
    fn schema_name() -> Cow<'static, str> {
        "IntervalsSpec".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let time = g.subschema_for::<Time>();
        json_schema!({
            "description": "a time, e.g. \"50 ms\", or { uniform = [\"20 ms\", \"100 ms\"] }",
            "anyOf": [
                time,
                {
                    "type": "object",
                    "properties": { "uniform": { "type": "array", "items": time, "minItems": 2, "maxItems": 2 } },
                    "required": ["uniform"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// The JSON Schema (draft 2020-12) of a fully specified scenario, derived
/// from the structs of this module: every key with its type, its
/// documentation and, for quantities, the units the parser takes. Unknown
/// keys are refused, as they are when a scenario is read.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).expect("a schema is JSON")
}
