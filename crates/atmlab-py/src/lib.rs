//! `atmlab._core`: the thin Python binding of the atmlab core.
//!
//! It only converts: a scenario arrives as JSON text, a result leaves as JSON
//! text, core errors become the two exception types below, and the GIL is
//! released while a simulation runs. Everything else lives in the Rust crates
//! (models) or in the Python package (files, CLI, tables, plots).
#![allow(clippy::disallowed_methods)] // the benchmark entry points read the wall clock

use atmlab_engine::SimTime;
use atmlab_net::sim::Simulation;
use atmlab_scenario::{ScenarioError, parse_json};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::time::Instant;

create_exception!(_core, CoreScenarioError, PyValueError, "A scenario problem: args are (key path, message).");
create_exception!(_core, CoreSimulationError, pyo3::exceptions::PyRuntimeError, "A run that failed its checks.");

fn scenario_err(e: ScenarioError) -> PyErr {
    CoreScenarioError::new_err((e.path, e.message))
}

fn build(scenario_json: &str, seed: Option<u64>, replication: u64) -> PyResult<Simulation> {
    let sc = parse_json(scenario_json).map_err(scenario_err)?;
    let seed = seed.unwrap_or(sc.simulation.seed);
    sc.build(seed, replication).map_err(scenario_err)
}

fn run_sim(py: Python<'_>, mut sim: Simulation, progress: Option<&Bound<'_, PyAny>>) -> PyResult<(String, f64)> {
    let t = Instant::now();
    if let Some(report) = progress {
        // Advance in steps of 1% of simulated time, reporting between steps.
        let end = sim.end().as_ps();
        for i in 1..100u64 {
            let until = SimTime::from_ps((u128::from(end) * u128::from(i) / 100) as u64);
            py.detach(|| sim.advance(until));
            report.call1((i as f64 / 100.0,))?;
        }
    }
    let result = py.detach(move || sim.run());
    let wall = t.elapsed().as_secs_f64();
    let result = result.map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
    let json = serde_json::to_string(&result).map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
    Ok((json, wall))
}

/// Checks a scenario (JSON text) without running it.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, replication=0))]
fn validate(scenario_json: &str, seed: Option<u64>, replication: u64) -> PyResult<()> {
    build(scenario_json, seed, replication).map(|_| ())
}

/// Runs a scenario (JSON text); returns the result as JSON text.
/// `progress`, if given, is called with the fraction of simulated time done.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, replication=0, progress=None))]
fn run(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    replication: u64,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let sim = build(scenario_json, seed, replication)?;
    run_sim(py, sim, progress).map(|(json, _)| json)
}

/// Runs a scenario and times the run alone (not parsing or building):
/// returns `(result_json, wall_seconds)`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn bench_scenario(py: Python<'_>, scenario_json: &str, seed: Option<u64>) -> PyResult<(String, f64)> {
    let sim = build(scenario_json, seed, 0)?;
    run_sim(py, sim, None)
}

/// Runs the bare event loop until `cells` cells are delivered: returns
/// `(cell_hops, events, simulated_seconds, wall_seconds)`.
#[pyfunction]
fn bench_baseline(py: Python<'_>, cells: u64) -> (u64, u64, f64, f64) {
    py.detach(move || {
        let t = Instant::now();
        let r = atmlab_engine::baseline::run(cells);
        (r.cell_hops, r.events, r.sim_ps as f64 / 1e12, t.elapsed().as_secs_f64())
    })
}

/// The datagrams and cells `payload` bytes become (see `atmlab_net::ip`):
/// `proto` "udp" or "tcp", `encap` "llc_snap" or "null", `fragmentation`
/// "rfc791" or "berkeley". Returns JSON text (`datagrams`, `cells`, `sizes`).
#[pyfunction]
fn cells(payload: u64, proto: &str, mtu: u32, encap: &str, fragmentation: &str) -> PyResult<String> {
    use atmlab_net::aal5::Encapsulation;
    use atmlab_net::ip::{Fragmentation, MIN_MTU, Proto, wire};
    let bad = |what: String| PyValueError::new_err(what);
    let proto = match proto {
        "udp" => Proto::Udp,
        "tcp" => Proto::Tcp,
        _ => return Err(bad(format!("proto: '{proto}' is not udp or tcp"))),
    };
    let encap = match encap {
        "llc_snap" => Encapsulation::LlcSnap,
        "null" => Encapsulation::Null,
        _ => return Err(bad(format!("encap: '{encap}' is not llc_snap or null"))),
    };
    let rule = match fragmentation {
        "rfc791" => Fragmentation::Rfc791,
        "berkeley" => Fragmentation::Berkeley,
        _ => return Err(bad(format!("fragmentation: '{fragmentation}' is not rfc791 or berkeley"))),
    };
    let max_mtu = atmlab_net::aal5::MAX_PAYLOAD - encap.header_bytes();
    if !(MIN_MTU..=max_mtu).contains(&mtu) || (proto == Proto::Tcp && mtu <= 40) {
        let lo = if proto == Proto::Tcp { 41 } else { MIN_MTU };
        return Err(bad(format!("mtu: {mtu} bytes is outside {lo}..{max_mtu}")));
    }
    if proto == Proto::Udp && payload > u64::from(atmlab_net::sim::MAX_UDP_PAYLOAD) {
        return Err(bad(format!(
            "payload: {payload} bytes exceed the largest UDP payload, {} bytes",
            atmlab_net::sim::MAX_UDP_PAYLOAD
        )));
    }
    serde_json::to_string(&wire(payload, proto, mtu, encap, rule)).map_err(|e| bad(e.to_string()))
}

/// `"release"` or `"debug"`: how the extension was compiled.
#[pyfunction]
fn core_build() -> &'static str {
    if cfg!(debug_assertions) { "debug" } else { "release" }
}

/// The Rust core's version.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_baseline, m)?)?;
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(cells, m)?)?;
    m.add_function(wrap_pyfunction!(core_build, m)?)?;
    m.add("CoreScenarioError", m.py().get_type::<CoreScenarioError>())?;
    m.add("CoreSimulationError", m.py().get_type::<CoreSimulationError>())?;
    Ok(())
}
