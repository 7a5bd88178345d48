//! Cell counts of the published tables, from the AAL5 arithmetic alone.
//! (The Python suite checks the same rows through whole simulated runs.)

use atmlab_net::aal5::{Encapsulation, IPV4_HEADER, UDP_HEADER};
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
    let mut r = reference("s004_table05_udp_datagram_to_cells.csv");
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
