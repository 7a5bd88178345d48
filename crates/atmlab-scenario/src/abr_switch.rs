//! `switches[i].port.abr` (and `port_to.NAME.abr`): the ABR controller of a
//! switch output port, `{ algorithm = "NAME", ...its keys }`.
//!
//! Each algorithm's keys are its own struct (unknown keys refused, with the
//! key path), read and checked in its own function below; the table is kept
//! as written until the scenario is built, when `algorithm` says which
//! struct reads the rest. Adding an algorithm: its struct, its function and
//! a line in [`controller`] and in [`AbrSwitchSpec`]'s schema, here; its
//! controller in `atmlab_net::abr::control` (docs/models/abr.md).

use std::borrow::Cow;

use atmlab_net::abr::control::capc::{CAPC_DEFAULTS, CapcParams};
use atmlab_net::abr::control::charny::{CHARNY_DEFAULTS, CharnyParams, Iteration};
use atmlab_net::abr::control::efci::EfciParams;
use atmlab_net::abr::control::eprca::{APRC_DEFAULTS, CiMarking, Congestion, EPRCA_DEFAULTS, MacrUpdate, Reduction};
use atmlab_net::abr::control::erica::{AveragingInterval, Counting, EricaParams, LoadAveraging, Variant};
use atmlab_net::abr::control::fixed::FixedRateParams;
use atmlab_net::abr::control::osu::{Fairness, OSU_DEFAULTS, OfferedRate, OsuParams};
use atmlab_net::abr::control::{Algorithm, ControlConfig};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::error::ScenarioError;
use crate::schema::{Cells, Rate, Time};

/// A switch port's `abr` table as written: `algorithm` (default
/// `erica_plus`; `none` switches control off on one port) and that
/// algorithm's keys, read when the scenario is built (`controller`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AbrSwitchSpec(pub Map<String, Value>);

impl<'de> Deserialize<'de> for AbrSwitchSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::deserialize(d).map(AbrSwitchSpec)
    }
}

/// The algorithms a scenario may name, with the keys of each.
const NAMES: [&str; 10] =
    ["erica_plus", "erica", "efci", "fixed_rate", "eprca", "aprc", "capc", "osu", "charny", "none"];

/// The controller a port's `abr` table asks for (`None` for `algorithm =
/// "none"`), every key checked against the algorithm; errors name the key
/// under `path`.
pub fn controller(path: &str, spec: &AbrSwitchSpec) -> Result<Option<ControlConfig>, ScenarioError> {
    let mut keys = spec.0.clone();
    let algorithm = match keys.remove("algorithm") {
        None => "erica_plus".to_string(),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(ScenarioError::new(
                format!("{path}.algorithm"),
                format!("must be one of {}, not {other}", NAMES.join(", ")),
            ));
        }
    };
    match algorithm.as_str() {
        "erica_plus" => erica_family(path, keys, true).map(Some),
        "erica" => erica_family(path, keys, false).map(Some),
        "efci" => efci(path, keys).map(Some),
        "fixed_rate" => fixed_rate(path, keys).map(Some),
        "eprca" => eprca_family(path, keys, false).map(Some),
        "aprc" => eprca_family(path, keys, true).map(Some),
        "capc" => capc(path, keys).map(Some),
        "osu" => osu(path, keys).map(Some),
        "charny" => charny(path, keys).map(Some),
        "none" => match keys.keys().next() {
            Some(k) => Err(ScenarioError::new(format!("{path}.{k}"), "algorithm = \"none\" takes no keys")),
            None => Ok(None),
        },
        other => Err(ScenarioError::new(
            format!("{path}.algorithm"),
            format!("unknown algorithm '{other}' (one of {})", NAMES.join(", ")),
        )),
    }
}

/// `keys` as the struct `T`, errors at their key under `path`.
fn read<T: DeserializeOwned>(path: &str, keys: Map<String, Value>) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(Value::Object(keys)).map_err(|e| {
        let inner = e.path().to_string();
        let at = if inner == "." || inner.is_empty() { path.to_string() } else { format!("{path}.{inner}") };
        ScenarioError::new(at, e.into_inner().to_string())
    })
}

// ------------------------------------------------------------ ERICA, ERICA+

/// The keys of ERICA and ERICA+ (docs/models/abr.md, "ERICA and ERICA+");
/// [`ERICA_PLUS_ONLY`] and [`ERICA_ONLY`] are each one's own.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EricaKeys {
    /// The averaging interval's time bound (default 5 ms).
    interval: Option<Time>,
    /// The interval's bound in ABR input cells (default 500; 0: the time
    /// bound only).
    interval_cells: Option<u32>,
    /// ERICA+: the target queueing delay T0 (default 500 us).
    t0: Option<Time>,
    /// ERICA+: f(0), the under-load constant b (default 1.05).
    underload_gain: Option<f64>,
    /// ERICA+: the over-load constant a (default 1.15).
    overload_gain: Option<f64>,
    /// ERICA+: the queue-drain limit factor (default 0.5).
    qdlf: Option<f64>,
    /// ERICA: the target utilisation U (default 0.9).
    target_utilization: Option<f64>,
    /// The max-min band delta (default 0.1).
    delta: Option<f64>,
    /// The max-min fix (default true).
    max_min_fix: Option<bool>,
    /// Backward RM cells mark their VC active (default true).
    bidirectional_counting: Option<bool>,
    /// A newly active VC counts in the fair share at once (default false).
    immediate_fair_share: Option<bool>,
    /// The sudden-increase limiter (default true).
    limit_sudden_increase: Option<bool>,
    /// One ER per VC per interval (default true).
    one_er_per_interval: Option<bool>,
    /// ER never above the ABR capacity (default true).
    cap_at_abr_capacity: Option<bool>,
    /// Count active VCs with this decay per interval instead of simply (the
    /// "averaging VCs" option; default: simple counting).
    active_vc_decay: Option<f64>,
    /// Exponential averaging of the load, `{ method = "ratio" |
    /// "separate", alpha = 0.x }` (default: none).
    load_averaging: Option<LoadAveragingSpec>,
}

/// ERICA+'s own keys.
const ERICA_PLUS_ONLY: [&str; 4] = ["t0", "underload_gain", "overload_gain", "qdlf"];
/// ERICA's own keys.
const ERICA_ONLY: [&str; 1] = ["target_utilization"];

/// `load_averaging = { method, alpha }`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LoadAveragingSpec {
    /// `ratio` (average z) or `separate` (average input and capacity).
    method: LoadAveragingMethod,
    /// The weight of the newest interval, (0, 1].
    alpha: f64,
}

/// How the load is averaged.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum LoadAveragingMethod {
    /// Average the load factor.
    Ratio,
    /// Average the input rate and the capacity.
    Separate,
}

/// ERICA+ (`plus`) or ERICA, from its keys: the defaults of 97-0177R2's
/// ERICA+ or of ERICA at U = 0.9, each key replacing its default.
fn erica_family(path: &str, keys: Map<String, Value>, plus: bool) -> Result<ControlConfig, ScenarioError> {
    let (name, others) = if plus { ("erica_plus", &ERICA_ONLY[..]) } else { ("erica", &ERICA_PLUS_ONLY[..]) };
    if let Some(k) = keys.keys().find(|k| others.contains(&k.as_str())) {
        let owner = if plus { "erica" } else { "erica_plus" };
        return Err(ScenarioError::new(
            format!("{path}.{k}"),
            format!("is not a key of the {name} algorithm (it is {owner}'s)"),
        ));
    }
    let a: EricaKeys = read(path, keys)?;
    let mut p = if plus {
        let mut p = EricaParams::erica_plus_97_0177r2();
        if let Variant::EricaPlus(q) = &mut p.variant {
            q.t0 = a.t0.map_or(q.t0, |t| t.0);
            q.underload_gain = a.underload_gain.unwrap_or(q.underload_gain);
            q.overload_gain = a.overload_gain.unwrap_or(q.overload_gain);
            q.qdlf = a.qdlf.unwrap_or(q.qdlf);
        }
        p
    } else {
        EricaParams::erica(a.target_utilization.unwrap_or(0.9))
    };
    p.interval.time = a.interval.map_or(p.interval.time, |t| t.0);
    p.interval.cells = match a.interval_cells {
        None => p.interval.cells,
        Some(0) => None,
        Some(n) => Some(n),
    };
    p.delta = a.delta.unwrap_or(p.delta);
    p.max_min_fix = a.max_min_fix.unwrap_or(p.max_min_fix);
    p.bidirectional_counting = a.bidirectional_counting.unwrap_or(p.bidirectional_counting);
    p.immediate_fair_share = a.immediate_fair_share.unwrap_or(p.immediate_fair_share);
    p.limit_sudden_increase = a.limit_sudden_increase.unwrap_or(p.limit_sudden_increase);
    p.one_er_per_interval = a.one_er_per_interval.unwrap_or(p.one_er_per_interval);
    p.cap_at_abr_capacity = a.cap_at_abr_capacity.unwrap_or(p.cap_at_abr_capacity);
    if let Some(decay) = a.active_vc_decay {
        p.counting = Counting::Averaged { decay };
    }
    if let Some(l) = a.load_averaging {
        p.load_averaging = match l.method {
            LoadAveragingMethod::Ratio => LoadAveraging::Ratio { alpha: l.alpha },
            LoadAveragingMethod::Separate => LoadAveraging::Separate { alpha: l.alpha },
        };
    }
    // Checked once, where the port is known (NetworkBuilder::set_abr_control;
    // its error names the key through `param_key`).
    Ok(ControlConfig::Erica(p))
}

/// The scenario key of a controller parameter's name in the core.
pub(crate) fn param_key(param: &str) -> &str {
    match param {
        "interval.time" => "interval",
        "interval.cells" => "interval_cells",
        "counting.decay" => "active_vc_decay",
        other => other,
    }
}

// ------------------------------------------------------------ EFCI

/// The keys of an EFCI switch.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EfciKeys {
    /// The ABR queue from which data cells are marked.
    threshold: Cells,
}

fn efci(path: &str, keys: Map<String, Value>) -> Result<ControlConfig, ScenarioError> {
    if !keys.contains_key("threshold") {
        return Err(ScenarioError::new(format!("{path}.threshold"), "an efci switch needs a threshold"));
    }
    let a: EfciKeys = read(path, keys)?;
    let threshold =
        u32::try_from(a.threshold.0).map_err(|_| ScenarioError::new(format!("{path}.threshold"), "too many cells"))?;
    Ok(ControlConfig::Efci(EfciParams { threshold }))
}

// ------------------------------------------------------------ a fixed rate

/// The keys of a fixed explicit rate.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FixedRateKeys {
    /// The explicit rate every backward RM cell of the port's VCs gets (at
    /// most: ER is never raised).
    er: Rate,
}

fn fixed_rate(path: &str, keys: Map<String, Value>) -> Result<ControlConfig, ScenarioError> {
    if !keys.contains_key("er") {
        return Err(ScenarioError::new(format!("{path}.er"), "a fixed_rate switch needs its er"));
    }
    let a: FixedRateKeys = read(path, keys)?;
    Ok(ControlConfig::FixedRate(FixedRateParams { er: a.er.0.bps() as f64 / atmlab_engine::CELL_BITS as f64 }))
}

// ------------------------------------------------------------ EPRCA, APRC

/// The keys of EPRCA and APRC (docs/models/abr.md, "EPRCA and APRC");
/// [`EPRCA_ONLY`] and [`APRC_ONLY`] are each one's own.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EprcaKeys {
    /// AV: the weight of a new CCR in MACR, (0, 1] (default 1/16).
    averaging_weight: Option<f64>,
    /// DPF: the fair share is DPF x MACR, (0, 1] (default 7/8).
    down_pressure_factor: Option<f64>,
    /// ERF: congested, VCs above the fair share are cut to ERF x MACR
    /// (default 15/16).
    explicit_reduction_factor: Option<f64>,
    /// MRF: very congested, every VC is cut to MRF x MACR (default 1/4).
    major_reduction_factor: Option<f64>,
    /// EPRCA: QT, congested above this ABR queue (default 100 cells).
    queue_threshold: Option<Cells>,
    /// DQT: very congested above this ABR queue (default 500 cells).
    high_queue_threshold: Option<Cells>,
    /// APRC: the queue's growth is sampled every this many ABR cells
    /// (default 32).
    growth_cells: Option<u32>,
    /// `factors` (ERF and MRF, default) or `fair_share` (every VC to DPF x
    /// MACR while congested).
    reduction: Option<ReductionSpec>,
    /// Lower ER at all (default true).
    explicit_rate: Option<bool>,
    /// Set CI in BRMs: `very_congested` (default), `congested` or `off`.
    ci_marking: Option<CiMarkingSpec>,
    /// Set EFCI on data cells while congested (default false).
    efci_marking: Option<bool>,
    /// `down_when_congested` (default: a congested port's MACR only
    /// falls) or `always`.
    macr_update: Option<MacrUpdateSpec>,
}

/// EPRCA's own keys.
const EPRCA_ONLY: [&str; 1] = ["queue_threshold"];
/// APRC's own keys.
const APRC_ONLY: [&str; 1] = ["growth_cells"];

/// Which VCs a congested EPRCA port cuts.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ReductionSpec {
    /// ERF x MACR for VCs above the fair share, MRF x MACR for all when
    /// very congested.
    Factors,
    /// DPF x MACR for every VC while congested.
    FairShare,
}

/// When an EPRCA port sets CI.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CiMarkingSpec {
    /// Never.
    Off,
    /// While congested.
    Congested,
    /// While very congested.
    VeryCongested,
}

/// When MACR follows a CCR.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum MacrUpdateSpec {
    /// Always.
    Always,
    /// While congested, only down.
    DownWhenCongested,
}

/// `threshold` cells as the core's count, errors at `path.key`.
fn cells_u32(path: &str, key: &str, c: Cells) -> Result<u32, ScenarioError> {
    u32::try_from(c.0).map_err(|_| ScenarioError::new(format!("{path}.{key}"), "too many cells"))
}

/// A key of the algorithm's sibling given to it: an error naming the key.
fn not_its_key(
    path: &str,
    keys: &Map<String, Value>,
    name: &str,
    others: &[&str],
    owner: &str,
) -> Result<(), ScenarioError> {
    match keys.keys().find(|k| others.contains(&k.as_str())) {
        Some(k) => Err(ScenarioError::new(
            format!("{path}.{k}"),
            format!("is not a key of the {name} algorithm (it is {owner}'s)"),
        )),
        None => Ok(()),
    }
}

/// EPRCA or APRC (`aprc`) from its keys over its defaults.
fn eprca_family(path: &str, keys: Map<String, Value>, aprc: bool) -> Result<ControlConfig, ScenarioError> {
    let (name, others, owner) = if aprc { ("aprc", &EPRCA_ONLY, "eprca") } else { ("eprca", &APRC_ONLY, "aprc") };
    not_its_key(path, &keys, name, others, owner)?;
    let a: EprcaKeys = read(path, keys)?;
    let mut p = if aprc { APRC_DEFAULTS } else { EPRCA_DEFAULTS };
    p.congestion = match p.congestion {
        Congestion::QueueLength { queue_threshold } => Congestion::QueueLength {
            queue_threshold: a
                .queue_threshold
                .map_or(Ok(queue_threshold), |c| cells_u32(path, "queue_threshold", c))?,
        },
        Congestion::QueueGrowth { every } => Congestion::QueueGrowth { every: a.growth_cells.unwrap_or(every) },
    };
    p.averaging_weight = a.averaging_weight.unwrap_or(p.averaging_weight);
    p.down_pressure_factor = a.down_pressure_factor.unwrap_or(p.down_pressure_factor);
    p.explicit_reduction_factor = a.explicit_reduction_factor.unwrap_or(p.explicit_reduction_factor);
    p.major_reduction_factor = a.major_reduction_factor.unwrap_or(p.major_reduction_factor);
    if let Some(c) = a.high_queue_threshold {
        p.high_queue_threshold = cells_u32(path, "high_queue_threshold", c)?;
    }
    if let Some(r) = a.reduction {
        p.reduction = match r {
            ReductionSpec::Factors => Reduction::Factors,
            ReductionSpec::FairShare => Reduction::FairShare,
        };
    }
    p.explicit_rate = a.explicit_rate.unwrap_or(p.explicit_rate);
    if let Some(c) = a.ci_marking {
        p.ci_marking = match c {
            CiMarkingSpec::Off => CiMarking::Off,
            CiMarkingSpec::Congested => CiMarking::Congested,
            CiMarkingSpec::VeryCongested => CiMarking::VeryCongested,
        };
    }
    p.efci_marking = a.efci_marking.unwrap_or(p.efci_marking);
    if let Some(m) = a.macr_update {
        p.macr_update = match m {
            MacrUpdateSpec::Always => MacrUpdate::Always,
            MacrUpdateSpec::DownWhenCongested => MacrUpdate::DownWhenCongested,
        };
    }
    // Checked where the port is known (NetworkBuilder::set_abr_control).
    Ok(ControlConfig::Eprca(p))
}

// ------------------------------------------------------------ CAPC

/// The keys of CAPC (docs/models/abr.md, "CAPC").
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CapcKeys {
    /// U: the target is U x link - CBR and VBR, (0, 1] (default 0.95).
    target_utilization: Option<f64>,
    /// Rup: the slope of the increase (default 0.05).
    increase_slope: Option<f64>,
    /// Rdn: the slope of the decrease (default 0.5).
    decrease_slope: Option<f64>,
    /// ERU: the largest factor of one increase (default 1.5).
    increase_cap: Option<f64>,
    /// ERF: the smallest factor of one decrease (default 0.5).
    decrease_floor: Option<f64>,
    /// DQT: CI is set above this ABR queue (default 200 cells).
    ci_threshold: Option<Cells>,
    /// The interval's time bound (default 1 ms).
    interval: Option<Time>,
    /// The interval's bound in ABR cells (default 100; 0: the time bound
    /// only).
    interval_cells: Option<u32>,
}

/// The interval `interval`, `interval_cells` over `default`.
fn interval(default: AveragingInterval, time: Option<Time>, cells: Option<u32>) -> AveragingInterval {
    AveragingInterval {
        time: time.map_or(default.time, |t| t.0),
        cells: match cells {
            None => default.cells,
            Some(0) => None,
            Some(n) => Some(n),
        },
    }
}

fn capc(path: &str, keys: Map<String, Value>) -> Result<ControlConfig, ScenarioError> {
    let a: CapcKeys = read(path, keys)?;
    let d = CAPC_DEFAULTS;
    let ci_threshold = a.ci_threshold.map_or(Ok(d.ci_threshold), |c| cells_u32(path, "ci_threshold", c))?;
    Ok(ControlConfig::Capc(CapcParams {
        target_utilization: a.target_utilization.unwrap_or(d.target_utilization),
        increase_slope: a.increase_slope.unwrap_or(d.increase_slope),
        decrease_slope: a.decrease_slope.unwrap_or(d.decrease_slope),
        increase_cap: a.increase_cap.unwrap_or(d.increase_cap),
        decrease_floor: a.decrease_floor.unwrap_or(d.decrease_floor),
        ci_threshold,
        interval: interval(d.interval, a.interval, a.interval_cells),
    }))
}

// ------------------------------------------------------------ the OSU scheme

/// The keys of the OSU scheme (docs/models/abr.md, "The OSU scheme").
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OsuKeys {
    /// U: the target is U x link - CBR and VBR, (0, 1] (default 0.9).
    target_utilization: Option<f64>,
    /// delta: the target band of the load level is 1 - delta .. 1 + delta,
    /// [0, 1) (default 0.1).
    half_width: Option<f64>,
    /// `basic` (default) or `aggressive`.
    fairness: Option<FairnessSpec>,
    /// The interval's time bound (default 5 ms).
    interval: Option<Time>,
    /// The interval's bound in ABR cells (default 500; 0: the time bound
    /// only).
    interval_cells: Option<u32>,
    /// The rate the load adjustment divides: `measured` (default: the VC's
    /// cells at the port over the last interval, one ER per interval) or
    /// `ccr` (each backward RM cell's CCR).
    offered_rate: Option<OfferedRateSpec>,
}

/// The OSU scheme's offered rate.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum OfferedRateSpec {
    /// The VC's rate measured at the port over the last interval.
    Measured,
    /// Each backward RM cell's CCR.
    Ccr,
}

/// The OSU scheme's fairness option.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum FairnessSpec {
    /// Inside the band, VCs above the fair share go down, those below up.
    Basic,
    /// Under load, VCs below the fair share rise faster.
    Aggressive,
}

fn osu(path: &str, keys: Map<String, Value>) -> Result<ControlConfig, ScenarioError> {
    let a: OsuKeys = read(path, keys)?;
    let d = OSU_DEFAULTS;
    Ok(ControlConfig::Osu(OsuParams {
        target_utilization: a.target_utilization.unwrap_or(d.target_utilization),
        half_width: a.half_width.unwrap_or(d.half_width),
        fairness: match a.fairness {
            None => d.fairness,
            Some(FairnessSpec::Basic) => Fairness::Basic,
            Some(FairnessSpec::Aggressive) => Fairness::Aggressive,
        },
        interval: interval(d.interval, a.interval, a.interval_cells),
        offered_rate: match a.offered_rate {
            None => d.offered_rate,
            Some(OfferedRateSpec::Measured) => OfferedRate::Measured,
            Some(OfferedRateSpec::Ccr) => OfferedRate::Ccr,
        },
    }))
}

// ------------------------------------------------------------ Charny

/// The keys of Charny's algorithm (docs/models/abr.md, "Charny's
/// algorithm").
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CharnyKeys {
    /// U: the capacity shared is U x link - CBR and VBR, (0, 1]
    /// (default 1).
    target_utilization: Option<f64>,
    /// `exact` (default) or `two_pass`.
    iteration: Option<IterationSpec>,
    /// A VC with no FRM for this long leaves the table (default 400 ms).
    vc_timeout: Option<Time>,
    /// The interval over which CBR and VBR are measured (default 5 ms).
    interval: Option<Time>,
}

/// How Charny's advertised rate is computed.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum IterationSpec {
    /// The fixed point of the marking at once.
    Exact,
    /// Two passes from the marks the FRMs left.
    TwoPass,
}

fn charny(path: &str, keys: Map<String, Value>) -> Result<ControlConfig, ScenarioError> {
    let a: CharnyKeys = read(path, keys)?;
    let d = CHARNY_DEFAULTS;
    Ok(ControlConfig::Charny(CharnyParams {
        target_utilization: a.target_utilization.unwrap_or(d.target_utilization),
        iteration: match a.iteration {
            None => d.iteration,
            Some(IterationSpec::Exact) => Iteration::Exact,
            Some(IterationSpec::TwoPass) => Iteration::TwoPass,
        },
        vc_timeout: a.vc_timeout.map_or(d.vc_timeout, |t| t.0),
        interval: a.interval.map_or(d.interval, |t| t.0),
    }))
}

// ------------------------------------------------------------ schema

impl JsonSchema for AbrSwitchSpec {
    fn schema_name() -> Cow<'static, str> {
        "AbrSwitchSpec".into()
    }

    /// One schema per algorithm: its keys and `algorithm` naming it
    /// (`erica_plus` may leave `algorithm` out).
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let mut variants = Vec::new();
        for (name, schema, drop) in [
            ("erica_plus", g.root_schema_for::<EricaKeys>(), &ERICA_ONLY[..]),
            ("erica", g.root_schema_for::<EricaKeys>(), &ERICA_PLUS_ONLY[..]),
            ("efci", g.root_schema_for::<EfciKeys>(), &[][..]),
            ("fixed_rate", g.root_schema_for::<FixedRateKeys>(), &[][..]),
            ("eprca", g.root_schema_for::<EprcaKeys>(), &APRC_ONLY[..]),
            ("aprc", g.root_schema_for::<EprcaKeys>(), &EPRCA_ONLY[..]),
            ("capc", g.root_schema_for::<CapcKeys>(), &[][..]),
            ("osu", g.root_schema_for::<OsuKeys>(), &[][..]),
            ("charny", g.root_schema_for::<CharnyKeys>(), &[][..]),
        ] {
            let mut v = schema.to_value();
            let obj = v.as_object_mut().expect("a struct's schema is an object");
            obj.remove("$schema");
            obj.remove("title");
            if let Some(Value::Object(defs)) = obj.remove("$defs") {
                g.definitions_mut().extend(defs);
            }
            if let Some(Value::Object(props)) = obj.get_mut("properties") {
                for k in drop {
                    props.remove(*k);
                }
                props.insert("algorithm".into(), serde_json::json!({ "const": name }));
            }
            if name != "erica_plus" {
                let required = obj.entry("required").or_insert_with(|| Value::Array(vec![]));
                if let Value::Array(r) = required {
                    r.push("algorithm".into());
                }
            }
            obj.insert("description".into(), format!("the {name} algorithm and its keys").into());
            variants.push(v);
        }
        variants.push(serde_json::json!({
            "description": "no ABR control on this port",
            "type": "object",
            "properties": { "algorithm": { "const": "none" } },
            "required": ["algorithm"],
            "additionalProperties": false
        }));
        debug_assert_eq!(variants.len(), NAMES.len());
        debug_assert!(Algorithm::ALL.iter().all(|a| NAMES.contains(&a.name())));
        schemars::json_schema!({
            "description": "the port's ABR controller: `algorithm` (erica_plus by default, erica, efci, fixed_rate, eprca, aprc, capc, osu, charny, none) and that algorithm's keys",
            "oneOf": variants
        })
    }
}

#[cfg(test)]
#[path = "abr_switch_tests.rs"]
mod tests;
