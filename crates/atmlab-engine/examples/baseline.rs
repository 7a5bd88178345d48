//! Times the bare event loop: `cargo run --release --example baseline`.
#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock
fn main() {
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let r = atmlab_engine::baseline::run(10_000_000);
        let s = t.elapsed().as_secs_f64();
        println!(
            "{} hops in {:.3} s: {:.2} M cell-hops/s ({} events)",
            r.cell_hops,
            s,
            r.cell_hops as f64 / s / 1e6,
            r.events
        );
    }
}
