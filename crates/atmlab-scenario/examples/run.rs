//! Runs a scenario file without Python, for profiling:
//! `cargo run --release -p atmlab-scenario --example run -- FILE [SEED]`
//! (TOML, or the JSON of an expanded template). With `ATMLAB_JSON=1` in the
//! environment it prints the whole result as JSON instead of one line; with
//! `ATMLAB_PLAN=1`, first how each port runs (`docs/architecture.md`,
//! "Speed: the events a run does not need").
#![allow(clippy::disallowed_methods)] // times the run with the wall clock

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run FILE [SEED]");
    let seed: Option<u64> = args.next().map(|s| s.parse().expect("SEED is an integer"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // JSON is what the Python front sends after expanding templates (`atmlab.load(...).to_json()`).
    let sc =
        if path.ends_with(".json") { atmlab_scenario::parse_json(&text) } else { atmlab_scenario::parse_toml(&text) }
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    let sim = sc.build(seed.unwrap_or(sc.simulation.seed), 0).unwrap_or_else(|e| panic!("{path}: {e}"));
    if std::env::var_os("ATMLAB_PLAN").is_some() {
        for p in sim.ports() {
            let how = match (p.mode(), p.has_frame_wake(), p.is_lazy()) {
                (atmlab_net::atm::PortMode::Pipelined, _, _) => "pipelined",
                (_, true, _) => "slotted, frame wake",
                (_, _, true) => "slotted, slots run late",
                _ => "slotted, an event per slot",
            };
            println!("{}: {how}", p.name);
        }
    }
    let t = std::time::Instant::now();
    let r = sim.run().expect("run");
    let wall = t.elapsed().as_secs_f64();
    if std::env::var_os("ATMLAB_JSON").is_some() {
        println!("{}", serde_json::to_string_pretty(&r).expect("a result serialises"));
        return;
    }
    println!(
        "{}: efficiency {:?} fairness {:?}; {} cell-hops, {} events in {:.3} s = {:.2} M cell-hops/s",
        r.scenario,
        r.efficiency,
        r.fairness,
        r.cell_hops,
        r.events,
        wall,
        r.cell_hops as f64 / wall / 1e6
    );
}
