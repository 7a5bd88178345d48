//! Runs the N-source configuration of 97-0424 from code and prints speed:
//! `cargo run --release -p atmlab-net --example nsource -- [lan|wan]`.
#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock
use atmlab_engine::{BitRate, Duration, RngStreams, SimTime};
use atmlab_net::aal5::Encapsulation;
use atmlab_net::atm::{DropPolicy, PortConfig, Queueing, SchedulerKind, ServiceCategory};
use atmlab_net::sim::{NetworkBuilder, NodeRef, RunMeta};
use atmlab_net::tcp::TcpConfig;

fn main() {
    let wan = std::env::args().nth(1).as_deref() == Some("wan");
    let scale: u64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let (delay, buffer, window, secs) =
        if wan { (Duration::from_ms(5), 12_000, 600_000, 20) } else { (Duration::from_us(5), 1000, 65_535, 10) };
    let oc3 = BitRate::from_bps(155_520_000).unwrap();
    let sw = || PortConfig {
        queueing: Queueing::PerCategory,
        buffer: Some(buffer),
        class_buffers: [None; 4],
        policies: [DropPolicy::default(); 4],
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    };
    let mut b = NetworkBuilder::new(RngStreams::new(1, 0));
    let s1 = NodeRef::Switch(b.add_switch("sw1"));
    let s2 = NodeRef::Switch(b.add_switch("sw2"));
    b.add_link(s1, s2, oc3, delay, sw(), sw()).unwrap();
    let tcp = TcpConfig { window, ..TcpConfig::classic() };
    for i in 0..5 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, s1, oc3, delay, PortConfig::host_adapter(), sw()).unwrap();
        b.add_link(s2, d, oc3, delay, sw(), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, s1, s2, d], ServiceCategory::Ubr, None).unwrap();
        b.add_tcp(&format!("tcp{i}"), &vc, tcp.clone(), SimTime::ZERO, None).unwrap();
    }
    let p = b.port_toward(s1, s2).unwrap();
    b.set_efficiency_port(p);
    let sim = b.build(RunMeta::default(), Duration::from_ms(secs * 1000 / scale));
    let t = std::time::Instant::now();
    let r = sim.run().unwrap();
    let wall = t.elapsed().as_secs_f64();
    println!(
        "eff {:.3} fair {:.3} clr {:.4} hops {} events {} wall {:.3}s -> {:.2} M cell-hops/s",
        r.efficiency.unwrap(),
        r.fairness.unwrap(),
        r.cell_loss_ratio,
        r.cell_hops,
        r.events,
        wall,
        r.cell_hops as f64 / wall / 1e6
    );
    for c in &r.connections {
        println!(
            "  {} {:.2} Mbit/s retx {} timeouts {} fr {}",
            c.name,
            c.goodput_bps / 1e6,
            c.retransmitted_segments,
            c.timeouts,
            c.fast_retransmits
        );
    }
}
