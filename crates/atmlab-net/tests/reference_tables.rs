//! Cell counts of the published tables, from the AAL5 arithmetic alone.
//! (The Python suite checks the same rows through whole simulated runs.)

use atmlab_net::aal5::{Encapsulation, IPV4_HEADER, UDP_HEADER};
use atmlab_net::ip::{Fragmentation, Proto, wire};
use std::path::PathBuf;

fn reference(name: &str) -> csv::Reader<std::fs::File> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/atmlab/data/reference").join(name);
    csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// van den Bergh 1995, Table 5: UDP bursts at MTU 9188 over AAL5 without
/// LLC/SNAP (36 bytes of overhead). Bursts above 9000 bytes are refused by
/// the udpt tool (0 cells), which the simulation models as an application
/// limit; here they are checked to be exactly those rows.
#[test]
fn test_kpn_table5_udp_datagrams_to_cells() {
    let mut r = reference("kpn/table05_udp_datagram_to_cells.csv");
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (size, cells, datagrams) = (col("data_size_bytes"), col("cells_per_burst"), col("datagrams_per_burst"));
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let s: u32 = rec[size].parse().unwrap();
        let c: u32 = rec[cells].parse().unwrap();
        let d: u32 = rec[datagrams].parse().unwrap();
        if s > 9000 {
            assert_eq!((c, d), (0, 0), "{s} bytes: refused by udpt");
        } else {
            assert_eq!(d, 1);
            assert_eq!(Encapsulation::Null.cells_for_datagram(s + UDP_HEADER + IPV4_HEADER), c, "{s} bytes");
        }
        rows += 1;
    }
    assert_eq!(rows, 11);
}

fn column(r: &mut csv::Reader<std::fs::File>, name: &str) -> usize {
    r.headers().unwrap().iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"))
}

/// van den Bergh 1995, Table 6: UDP bursts at MTU 48 on SunOS (Berkeley
/// fragmentation, no LLC/SNAP). Every datagram count matches; every cell
/// count matches except the 1048- and 1049-byte rows, which the study
/// prints one cell low (45 fragments cannot fit in 88 cells: each needs at
/// least one, and 44 of them carry 24 bytes, 2 cells each). The CSV flags
/// exactly those two rows; the test requires that the flagged rows are the
/// only misses and that they are off by one.
#[test]
fn test_kpn_table6_fragmentation_at_mtu_48() {
    let mut r = reference("kpn/table06_udp_fragmentation_mtu48.csv");
    let (size, cells, dgs, note) = (
        column(&mut r, "data_size_bytes"),
        column(&mut r, "cells_per_burst"),
        column(&mut r, "udp_datagrams_per_burst"),
        column(&mut r, "note"),
    );
    let (mut rows, mut exact) = (0, 0);
    for rec in r.records() {
        let rec = rec.unwrap();
        let s: u64 = rec[size].parse().unwrap();
        let (c, d): (u64, u64) = (rec[cells].parse().unwrap(), rec[dgs].parse().unwrap());
        let w = wire(s, Proto::Udp, 48, Encapsulation::Null, Fragmentation::Berkeley);
        assert_eq!(w.datagrams, d, "{s} bytes: datagrams");
        if w.cells == c {
            exact += 1;
            assert!(rec[note].is_empty(), "{s} bytes: matches but is flagged");
        } else {
            assert_eq!(w.cells, c + 1, "{s} bytes");
            assert!(rec[note].contains("possible source error"), "{s} bytes: an unflagged miss");
        }
        rows += 1;
    }
    assert_eq!((rows, exact), (18, 16));
    // The RFC 791 rule gives one datagram fewer on some rows: the table is
    // Berkeley's.
    let rfc = wire(41, Proto::Udp, 48, Encapsulation::Null, Fragmentation::Rfc791);
    assert_eq!(rfc.datagrams, 2);
}

/// Table 7: 30000 bursts of 8192 bytes at each MTU: the printed cell totals
/// and efficiencies. (The printed datagram count of the MTU 8192 row is
/// 30000 where two datagrams per burst are needed; the study's own Annex A
/// uses 60000. Datagrams are checked on the other rows.)
#[test]
fn test_kpn_table7_cells_per_mtu() {
    let mut r = reference("kpn/table07_udp_throughput_vs_mtu.csv");
    let (mtu, cells, dgs, eff) = (
        column(&mut r, "mtu_bytes"),
        column(&mut r, "cells_total"),
        column(&mut r, "udp_datagrams_total"),
        column(&mut r, "efficiency_pct"),
    );
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let m: u32 = rec[mtu].parse().unwrap();
        let w = wire(8192, Proto::Udp, m, Encapsulation::Null, Fragmentation::Berkeley);
        assert_eq!(w.cells * 30_000, rec[cells].parse::<u64>().unwrap(), "MTU {m}");
        if m != 8192 {
            assert_eq!(w.datagrams * 30_000, rec[dgs].parse::<u64>().unwrap(), "MTU {m}");
        }
        let e = 100.0 * 8192.0 / (w.cells as f64 * 53.0);
        assert!((e - rec[eff].parse::<f64>().unwrap()).abs() < 0.051, "MTU {m}: {e:.2}%");
        rows += 1;
    }
    assert_eq!(rows, 12);
}

/// Table 9: 30e6 bytes of TCP at each MTU. The least possible cell count
/// (full segments of MTU - 40 bytes and one short one) is at or below every
/// measured count; the study's "expected" column miscounts datagrams.
#[test]
fn test_kpn_table9_tcp_cells_are_at_least_the_exact_minimum() {
    let mut r = reference("kpn/table09_tcp_cells_vs_mtu.csv");
    let (mtu, measured) = (column(&mut r, "mtu_bytes"), column(&mut r, "measured_cells_avg"));
    let minimum = [629_647, 629_295, 636_095, 642_431, 670_732, 699_154];
    for (rec, want) in r.records().zip(minimum) {
        let rec = rec.unwrap();
        let m: u32 = rec[mtu].parse().unwrap();
        let w = wire(30_000_000, Proto::Tcp, m, Encapsulation::Null, Fragmentation::Rfc791);
        assert_eq!(w.cells, want, "MTU {m}");
        assert!(w.cells <= rec[measured].parse::<u64>().unwrap(), "MTU {m}");
    }
}
