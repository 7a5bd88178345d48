//! `atmlab._core`: the thin Python binding of the atmlab core.
//!
//! It only converts: a scenario arrives as JSON text, a result leaves as JSON
//! text, core errors become the two exception types below, and the GIL is
//! released while a simulation runs. Everything else lives in the Rust crates
//! (models) or in the Python package (files, CLI, tables, plots).
#![allow(clippy::disallowed_methods)] // the benchmark entry points read the wall clock

use atmlab_engine::SimTime;
use atmlab_net::sim::{Simulation, SimulationError};
use atmlab_scenario::{ScenarioError, parse_json};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::time::{Duration, Instant};

create_exception!(_core, CoreScenarioError, PyValueError, "A scenario problem: args are (key path, message).");
create_exception!(_core, CoreSimulationError, pyo3::exceptions::PyRuntimeError, "A run that failed its checks.");
create_exception!(_core, CoreLimitError, pyo3::exceptions::PyRuntimeError, "A run stopped by a resource limit.");

fn scenario_err(e: ScenarioError) -> PyErr {
    CoreScenarioError::new_err((e.path, e.message))
}

fn simulation_err(e: SimulationError) -> PyErr {
    match e {
        SimulationError::Limit(_) => CoreLimitError::new_err(e.to_string()),
        SimulationError::Conservation(_) => CoreSimulationError::new_err(e.to_string()),
        SimulationError::Capture(_) | SimulationError::Trace(_) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
    }
}

thread_local! {
    /// The message and place of the last panic on this thread, kept by the
    /// panic hook for the error that reports it.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, turning a panic (a broken invariant inside the core: a bug in
/// atmlab) into an ordinary `CoreSimulationError` that names the panic and
/// where it happened. Python would otherwise see a `PanicException`, which
/// is not an `Exception`: it escapes `except Exception`, cannot be pickled
/// back from a worker process, and takes a whole sweep down.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{place}")));
            if std::env::var_os("ATMLAB_PANIC_BACKTRACE").is_some() {
                default(info);
            }
        }));
    });
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        let what = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "a panic".to_owned());
        Err(CoreSimulationError::new_err(format!(
            "internal error (a bug in atmlab; please report it with the scenario and seed): {what}"
        )))
    })
}

fn build(scenario_json: &str, seed: Option<u64>, replication: u64) -> PyResult<Simulation> {
    build_captured(scenario_json, seed, replication, None, None)
}

/// [`build`], with a packet capture written to `pcap_dir` and a trace to
/// `trace_file` if given.
fn build_captured(
    scenario_json: &str,
    seed: Option<u64>,
    replication: u64,
    pcap_dir: Option<&std::path::Path>,
    trace_file: Option<&std::path::Path>,
) -> PyResult<Simulation> {
    let sc = parse_json(scenario_json).map_err(scenario_err)?;
    let seed = seed.unwrap_or(sc.simulation.seed);
    sc.build_with_outputs(seed, replication, pcap_dir, trace_file).map_err(scenario_err)
}

/// The test hook of docs/architecture.md ("Errors"): a run whose scenario
/// JSON contains the text of the environment variable `ATMLAB_TEST_PANIC`
/// panics inside the core, so the tests can check that a panicking run is
/// recorded as failed and never stops a sweep (no scenario panics any more).
fn test_panic_hook(scenario_json: &str) {
    if let Some(marker) = std::env::var_os("ATMLAB_TEST_PANIC")
        && let Some(marker) = marker.to_str()
        && !marker.is_empty()
        && scenario_json.contains(marker)
    {
        panic!("test panic requested by ATMLAB_TEST_PANIC");
    }
}

/// About how much wall time a run simulates between two returns to the
/// interpreter, where Python's signal handlers run (Ctrl-C).
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// Advances `sim` to `until` in steps of about [`CHECK_EVERY`] of wall time
/// with the GIL released, and between steps runs Python's signal handlers
/// (the default one for SIGINT raises KeyboardInterrupt, which ends the run
/// with it) and then asks `interrupt`, if given, whether to stop (a true
/// value raises KeyboardInterrupt). A step is a count of events
/// ([`Simulation::advance_events`]), so where the steps end changes nothing
/// in the run; `events` is the count of the next step, adapted to the time
/// the last one took.
fn advance_interruptibly(
    py: Python<'_>,
    sim: &mut Simulation,
    until: SimTime,
    interrupt: Option<&Bound<'_, PyAny>>,
    events: &mut u64,
) -> PyResult<()> {
    loop {
        let t = Instant::now();
        let n = *events;
        let done = py.detach(|| guarded(|| Ok(sim.advance_events(until, n))))?;
        *events = next_step(n, t.elapsed());
        py.check_signals()?;
        if let Some(stop) = interrupt
            && stop.call0()?.is_truthy()?
        {
            return Err(PyKeyboardInterrupt::new_err("the run was interrupted"));
        }
        if done {
            return Ok(());
        }
    }
}

/// The events of the next step: scaled toward [`CHECK_EVERY`] by the time
/// the last step of `events` took, by at most 4 either way, from 256 to 2^26.
fn next_step(events: u64, took: Duration) -> u64 {
    let took = took.as_nanos().max(1);
    let aim = u128::from(events) * CHECK_EVERY.as_nanos() / took;
    let scaled = aim.clamp(u128::from(events / 4), u128::from(events) * 4);
    scaled.clamp(256, 1 << 26) as u64
}

fn run_sim(
    py: Python<'_>,
    mut sim: Simulation,
    progress: Option<&Bound<'_, PyAny>>,
    interrupt: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, f64)> {
    let t = Instant::now();
    let mut events = 4096;
    if let Some(report) = progress {
        // Advance in steps of 1% of simulated time, reporting between steps.
        let end = sim.end().as_ps();
        for i in 1..100u64 {
            let until = SimTime::from_ps((u128::from(end) * u128::from(i) / 100) as u64);
            advance_interruptibly(py, &mut sim, until, interrupt, &mut events)?;
            report.call1((i as f64 / 100.0,))?;
        }
    }
    let end = sim.end();
    advance_interruptibly(py, &mut sim, end, interrupt, &mut events)?;
    let result = py.detach(move || guarded(|| sim.run().map_err(simulation_err)))?;
    let wall = t.elapsed().as_secs_f64();
    let json = serde_json::to_string(&result).map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
    Ok((json, wall))
}

/// Checks a scenario (JSON text) without running it.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, replication=0))]
fn validate(scenario_json: &str, seed: Option<u64>, replication: u64) -> PyResult<()> {
    guarded(|| build(scenario_json, seed, replication).map(|_| ()))
}

/// Runs a scenario (JSON text); returns the result as JSON text.
/// `progress`, if given, is called with the fraction of simulated time done.
/// `pcap_dir`, if given, receives a pcap file per captured link direction;
/// `trace_file`, if given, the run's trace (CSV, the records `[trace]` asks
/// for). Every few tens of milliseconds of wall time the run lets Python's signal
/// handlers run (Ctrl-C raises KeyboardInterrupt and ends it) and then
/// calls `interrupt`, if given, with no arguments: a true value ends the
/// run with KeyboardInterrupt too. Neither changes the result.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, replication=0, progress=None, pcap_dir=None, interrupt=None,
                    trace_file=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    replication: u64,
    progress: Option<&Bound<'_, PyAny>>,
    pcap_dir: Option<std::path::PathBuf>,
    interrupt: Option<&Bound<'_, PyAny>>,
    trace_file: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let sim = guarded(|| {
        let sim = build_captured(scenario_json, seed, replication, pcap_dir.as_deref(), trace_file.as_deref())?;
        test_panic_hook(scenario_json);
        Ok(sim)
    })?;
    run_sim(py, sim, progress, interrupt).map(|(json, _)| json)
}

/// Runs a scenario and times the run alone (not parsing or building):
/// returns `(result_json, wall_seconds)`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn bench_scenario(py: Python<'_>, scenario_json: &str, seed: Option<u64>) -> PyResult<(String, f64)> {
    let sim = guarded(|| build(scenario_json, seed, 0))?;
    run_sim(py, sim, None, None)
}

/// Runs a scenario and reports what it holds in memory at each of the
/// simulated `times` (seconds, increasing): a list of JSON texts of
/// `atmlab_net::sim::Footprint`. The memory tests use it to check, on the
/// simulation's own state rather than on the process's RSS, that memory
/// does not grow with simulated time.
#[pyfunction]
#[pyo3(signature = (scenario_json, times, seed=None))]
fn footprints(py: Python<'_>, scenario_json: &str, times: Vec<f64>, seed: Option<u64>) -> PyResult<Vec<String>> {
    let mut sim = guarded(|| build(scenario_json, seed, 0))?;
    let mut out = Vec::with_capacity(times.len());
    for t in times {
        if !(t.is_finite() && t >= 0.0) {
            return Err(PyValueError::new_err(format!("times: {t} is not a time in seconds")));
        }
        let until = SimTime::from_ps((t * 1e12).round().min(u64::MAX as f64) as u64);
        let fp = py.detach(|| guarded(|| Ok(sim.advance_to(until))))?;
        out.push(serde_json::to_string(&fp).map_err(|e| CoreSimulationError::new_err(e.to_string()))?);
    }
    Ok(out)
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
    guarded(|| wire_json(payload, proto, mtu, encap, fragmentation))
}

fn wire_json(payload: u64, proto: &str, mtu: u32, encap: &str, fragmentation: &str) -> PyResult<String> {
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

/// The JSON Schema of a run's result (`atmlab_net::sim::RunResult`), as
/// JSON text: the one definition of every metric's name, type and meaning,
/// from which the Python side takes the metrics it stores and shows.
#[pyfunction]
fn result_schema() -> PyResult<String> {
    let schema = schemars::schema_for!(atmlab_net::sim::RunResult);
    serde_json::to_string(&schema).map_err(|e| CoreSimulationError::new_err(e.to_string()))
}

/// A quantity written as the scenario format writes one (`"300 ms"`,
/// `"155.52 Mbit/s"`, `"64 KiB"`, `"1000 cells"`), in its base unit:
/// `("s", 0.3)`, `("bit/s", 155520000.0)`, `("bytes", 65536.0)`,
/// `("cells", 1000.0)`. The exact parser of the format, so that swept
/// values are labelled as the core reads them. A text that is no quantity
/// raises ValueError.
#[pyfunction]
fn quantity(text: &str) -> PyResult<(&'static str, f64)> {
    use atmlab_scenario::units;
    if let Ok(d) = units::duration(text) {
        return Ok(("s", d.as_secs_f64()));
    }
    if let Ok(r) = units::rate(text) {
        return Ok(("bit/s", r.bps() as f64));
    }
    if let Ok(b) = units::bytes(text) {
        return Ok(("bytes", b as f64));
    }
    if let Ok(c) = units::cells(text) {
        return Ok(("cells", c as f64));
    }
    Err(PyValueError::new_err(format!("'{text}' is not a quantity")))
}

/// The JSON Schema of a fully specified scenario (`atmlab_scenario::schema::json_schema`),
/// as JSON text.
#[pyfunction]
fn scenario_schema() -> PyResult<String> {
    serde_json::to_string(&atmlab_scenario::schema::json_schema())
        .map_err(|e| CoreSimulationError::new_err(e.to_string()))
}

/// The git commit the extension was built from (captured by build.rs), or
/// None when it was built outside a git checkout without `ATMLAB_GIT_COMMIT`.
#[pyfunction]
fn git_commit() -> Option<&'static str> {
    option_env!("ATMLAB_GIT_COMMIT")
}

/// `"release"` or `"debug"`: how the extension was compiled.
#[pyfunction]
fn core_build() -> &'static str {
    if cfg!(debug_assertions) { "debug" } else { "release" }
}

/// The profile the core was optimised by (its file name in `pgo/`, which
/// the build backend `pgo/atmlab_backend.py` passes as `ATMLAB_PGO_PROFILE`
/// with the compiler flag), or None for a build without one.
#[pyfunction]
fn core_profile() -> Option<&'static str> {
    option_env!("ATMLAB_PGO_PROFILE")
}

/// The Rust core's version.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Replays the IPv4 packets of the pcap `trace` into the scenario's
/// external hosts at their timestamps, with no wall clock (deterministic);
/// returns `(result_json, counts_json)`.
#[pyfunction]
#[pyo3(signature = (scenario_json, trace, seed=None, pcap_dir=None))]
fn replay(
    py: Python<'_>,
    scenario_json: &str,
    trace: std::path::PathBuf,
    seed: Option<u64>,
    pcap_dir: Option<std::path::PathBuf>,
) -> PyResult<(String, String)> {
    let mut sim = guarded(|| build_captured(scenario_json, seed, 0, pcap_dir.as_deref(), None))?;
    if sim.external_hosts().is_empty() {
        return Err(PyValueError::new_err("the scenario has no external host (hosts[i].external) to replay into"));
    }
    let file = std::fs::File::open(&trace)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", trace.display())))?;
    let (delivered, counts) = py.detach(|| {
        guarded(|| {
            atmlab_emu::replay::replay(&mut sim, std::io::BufReader::new(file))
                .map_err(|e| PyValueError::new_err(format!("{}: {e}", trace.display())))
        })
    })?;
    let result = py.detach(move || guarded(|| sim.run().map_err(simulation_err)))?;
    let json = serde_json::to_string(&result).map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
    let counts = serde_json::json!({
        "records": counts.records, "injected": counts.injected, "skipped": counts.skipped,
        "refused": counts.refused, "delivered": delivered.len(),
    });
    Ok((json, counts.to_string()))
}

/// A live emulation (Linux): the scenario's external hosts as TUN devices
/// named `devices` (in the order of the hosts), made when this is made, and
/// the real-time driver (`atmlab-emu`). Python moves the devices into their
/// namespaces, then calls `step` until it returns true, then `finish`.
#[cfg(target_os = "linux")]
#[pyclass(unsendable)]
struct Emulation {
    driver: Option<atmlab_emu::Driver<atmlab_emu::tun::WallClock, atmlab_emu::tun::TunIo>>,
    started: bool,
}

#[cfg(target_os = "linux")]
#[pymethods]
impl Emulation {
    #[new]
    #[pyo3(signature = (scenario_json, devices, seed=None, pcap_dir=None, max_lag_s=None, backlog_cells=None))]
    fn new(
        scenario_json: &str,
        devices: Vec<String>,
        seed: Option<u64>,
        pcap_dir: Option<std::path::PathBuf>,
        max_lag_s: Option<f64>,
        backlog_cells: Option<u64>,
    ) -> PyResult<Emulation> {
        let sim = guarded(|| build_captured(scenario_json, seed, 0, pcap_dir.as_deref(), None))?;
        if devices.len() != sim.external_hosts().len() {
            return Err(PyValueError::new_err("one device name per external host"));
        }
        let clock = atmlab_emu::tun::WallClock::start();
        let io = atmlab_emu::tun::TunIo::create(&devices, &clock)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        let mut cfg =
            atmlab_emu::Config { max_lag: max_lag_s.map(Duration::from_secs_f64), ..atmlab_emu::Config::default() };
        if let Some(b) = backlog_cells {
            cfg.backlog_cells = b;
        }
        Ok(Emulation { driver: Some(atmlab_emu::Driver::new(sim, clock, io, cfg)), started: false })
    }

    /// The external hosts: `(name, address, mtu)`.
    fn hosts(&self) -> PyResult<Vec<(String, String, u32)>> {
        let d = self.driver.as_ref().ok_or_else(|| PyValueError::new_err("finished"))?;
        let sim = d.simulation();
        Ok(sim.external_hosts().into_iter().map(|(h, n, a)| (n, a.to_string(), sim.hosts()[h.idx()].mtu)).collect())
    }

    /// Runs the loop for about `budget_s` of wall time (the GIL released;
    /// the clock starts at the first call); true at the end of the run.
    fn step(&mut self, py: Python<'_>, budget_s: f64) -> PyResult<bool> {
        let d = self.driver.as_mut().ok_or_else(|| PyValueError::new_err("finished"))?;
        if !self.started {
            self.started = true;
            d.restart_clock();
        }
        let budget = Duration::from_secs_f64(budget_s.max(0.0));
        let status =
            py.detach(|| guarded(|| d.run_for(budget).map_err(|e| CoreSimulationError::new_err(e.to_string()))))?;
        Ok(status == atmlab_emu::Status::Finished)
    }

    /// Ends the run at the present moment (the commands are done).
    fn end_now(&mut self) -> PyResult<()> {
        let d = self.driver.as_mut().ok_or_else(|| PyValueError::new_err("finished"))?;
        d.end_now();
        Ok(())
    }

    /// The lag report so far (JSON).
    fn report(&self) -> PyResult<String> {
        let d = self.driver.as_ref().ok_or_else(|| PyValueError::new_err("finished"))?;
        serde_json::to_string(&d.report()).map_err(|e| CoreSimulationError::new_err(e.to_string()))
    }

    /// Ends the run (closing the devices): `(result_json, report_json)`.
    fn finish(&mut self, py: Python<'_>) -> PyResult<(String, String)> {
        let d = self.driver.take().ok_or_else(|| PyValueError::new_err("finished"))?;
        let (result, report) = py.detach(move || d.finish());
        let result = result.map_err(simulation_err)?;
        let json = serde_json::to_string(&result).map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
        let report = serde_json::to_string(&report).map_err(|e| CoreSimulationError::new_err(e.to_string()))?;
        Ok((json, report))
    }

    /// Closes the devices without a result.
    fn close(&mut self) {
        self.driver = None;
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_class::<Emulation>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_baseline, m)?)?;
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(cells, m)?)?;
    m.add_function(wrap_pyfunction!(core_build, m)?)?;
    m.add_function(wrap_pyfunction!(core_profile, m)?)?;
    m.add_function(wrap_pyfunction!(footprints, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(git_commit, m)?)?;
    m.add("CoreScenarioError", m.py().get_type::<CoreScenarioError>())?;
    m.add("CoreSimulationError", m.py().get_type::<CoreSimulationError>())?;
    m.add("CoreLimitError", m.py().get_type::<CoreLimitError>())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_the_steps_between_signal_checks_aim_at_the_interval_within_bounds() {
        assert_eq!(next_step(4096, CHECK_EVERY), 4096);
        assert_eq!(next_step(4096, CHECK_EVERY / 2), 8192);
        assert_eq!(next_step(4096, CHECK_EVERY * 2), 2048);
        assert_eq!(next_step(4096, Duration::ZERO), 4 * 4096, "at most four times more");
        assert_eq!(next_step(4096, CHECK_EVERY * 100), 1024, "at least a quarter");
        assert_eq!(next_step(300, CHECK_EVERY * 100), 256, "never below 256 events");
        assert_eq!(next_step(1 << 26, Duration::ZERO), 1 << 26, "nor above 2^26");
    }
}
