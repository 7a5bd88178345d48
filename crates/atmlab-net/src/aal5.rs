//! AAL5 (ITU-T I.363.5), RFC 1483/2684 encapsulation and the IP-level sizes.
//!
//! A CPCS-PDU is the encapsulated IP datagram, padded so that with the 8-byte
//! trailer (CPCS-UU, CPI, Length, CRC-32) it fills a whole number of 48-byte
//! cell payloads. The last cell carries the end-of-frame mark in its PTI.
//!
//! The receiver ([`Reassembler`]) collects cells per VC until an end-of-frame
//! cell. The frame is good only if every cell came from one PDU and the count
//! equals the PDU's cell count: that is what AAL5's length field and CRC-32
//! establish on real bytes. A missing middle cell fails the length check; a
//! missing end-of-frame cell merges two frames into one that fails both, so
//! both are lost.

use crate::atm::{CELL_PAYLOAD, Cell};
use crate::pdu::{PduId, PduTable};
use serde::{Deserialize, Serialize};

/// Bytes of the CPCS-PDU trailer.
pub const TRAILER: u32 = 8;
/// Largest CPCS-PDU payload (16-bit length field).
pub const MAX_PAYLOAD: u32 = 65_535;
/// IPv4 header without options.
pub const IPV4_HEADER: u32 = 20;
/// UDP header.
pub const UDP_HEADER: u32 = 8;
/// TCP header without options.
pub const TCP_HEADER: u32 = 20;

/// Cells needed for a CPCS-PDU payload of `bytes` bytes.
pub const fn cells_for(bytes: u32) -> u32 {
    (bytes + TRAILER).div_ceil(CELL_PAYLOAD)
}

/// How IP datagrams are carried in AAL5 (RFC 1483 / RFC 2684).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Encapsulation {
    /// LLC/SNAP header (8 bytes: AA-AA-03, OUI 00-00-00, EtherType), the
    /// default of Classical IP over ATM (RFC 1577).
    #[default]
    LlcSnap,
    /// VC multiplexing ("null" encapsulation): the datagram alone.
    Null,
}

impl Encapsulation {
    /// Header bytes added in front of the IP datagram.
    pub const fn header_bytes(self) -> u32 {
        match self {
            Encapsulation::LlcSnap => 8,
            Encapsulation::Null => 0,
        }
    }

    /// Cells for an IP datagram of `ip_bytes` bytes (header included).
    pub const fn cells_for_datagram(self, ip_bytes: u32) -> u32 {
        cells_for(ip_bytes + self.header_bytes())
    }
}

/// The upper bound of TCP payload throughput as a fraction of the ATM cell
/// rate, for full segments of `mss` bytes: `mss / (cells * 53)`.
pub fn tcp_payload_efficiency(mss: u32, encap: Encapsulation) -> f64 {
    let cells = encap.cells_for_datagram(mss + IPV4_HEADER + TCP_HEADER);
    f64::from(mss) / f64::from(cells * crate::atm::CELL_SIZE)
}

/// Outcome of one cell at a reassembler.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reassembly {
    /// The frame goes on.
    Incomplete,
    /// A good frame ended: the PDU can be delivered.
    Complete(PduId),
    /// A frame ended but is corrupt (missing cells or two frames merged);
    /// `cells` of it reached the receiver ("dead cells").
    Discarded {
        /// Cells of the discarded frame that reached the receiver.
        cells: u32,
    },
}

/// Per-VC AAL5 receiver state.
#[derive(Clone, Debug, Default)]
pub struct Reassembler {
    first: Option<PduId>,
    cells: u32,
    corrupt: bool,
}

impl Reassembler {
    /// A reassembler between frames.
    pub fn new() -> Reassembler {
        Reassembler::default()
    }

    /// Takes one cell; call before the cell is settled in the PDU table.
    pub fn on_cell<P>(&mut self, cell: &Cell, pdus: &PduTable<P>) -> Reassembly {
        self.add(cell, 1);
        if !cell.is_end_of_frame() {
            return Reassembly::Incomplete;
        }
        let first = self.first.take().expect("a frame in progress has a first cell");
        let cells = std::mem::take(&mut self.cells);
        let corrupt = std::mem::take(&mut self.corrupt);
        let whole = !corrupt && pdus.get(first).is_some_and(|p| p.cells == cells);
        if whole { Reassembly::Complete(first) } else { Reassembly::Discarded { cells } }
    }

    /// Takes `n` equal cells that do not end the frame: as `n` calls of
    /// [`on_cell`](Self::on_cell), each `Incomplete`.
    pub fn on_cells_before_end(&mut self, cell: &Cell, n: u32) {
        debug_assert!(!cell.is_end_of_frame());
        self.add(cell, n);
    }

    /// Counts `n` cells like `cell` into the frame in progress: the first
    /// names the frame, one of another PDU corrupts it.
    fn add(&mut self, cell: &Cell, n: u32) {
        match self.first {
            None => self.first = Some(cell.pdu()),
            Some(first) if first != cell.pdu() => self.corrupt = true,
            Some(_) => {}
        }
        self.cells += n;
    }

    /// Cells of the frame in progress.
    pub fn pending_cells(&self) -> u32 {
        self.cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::{Pti, VcLabel};
    use atmlab_engine::SimTime;

    #[test]
    fn test_tcp_segment_of_mss_512_is_12_cells() {
        // 512 + 20 TCP + 20 IP + 8 LLC/SNAP = 560; + 8 trailer = 568 -> 12 cells
        assert_eq!(Encapsulation::LlcSnap.cells_for_datagram(512 + 40), 12);
        let eff = tcp_payload_efficiency(512, Encapsulation::LlcSnap);
        assert!((eff - 512.0 / 636.0).abs() < 1e-12);
        assert!((eff * 155.52 - 125.2).abs() < 0.05, "{}", eff * 155.52); // 97-0424 s4.2
        assert_eq!(format!("{:.1}", eff * 100.0), "80.5");
    }

    #[test]
    fn test_mss_9140_gives_87_percent_over_abr() {
        // 9140 + 56 = 9196 bytes -> 192 cells (97-0177R2 s6): 89.8% of the cell
        // rate; over ABR one cell in Nrm = 32 is an RM cell, and 31/32 of
        // 89.8% is the 87% the study quotes (as 31/32 of 80.5% is its 78%).
        assert_eq!(Encapsulation::LlcSnap.cells_for_datagram(9140 + 40), 192);
        let eff = tcp_payload_efficiency(9140, Encapsulation::LlcSnap);
        assert_eq!(format!("{:.3}", eff), "0.898");
        assert_eq!(format!("{:.2}", eff * 31.0 / 32.0), "0.87");
        let eff512 = tcp_payload_efficiency(512, Encapsulation::LlcSnap);
        assert_eq!(format!("{:.2}", eff512 * 31.0 / 32.0), "0.78");
    }

    #[test]
    fn test_voice_packet_is_three_cells() {
        // 80 bytes + 8 UDP + 20 IP + 8 LLC/SNAP = 116; + 8 trailer = 124 -> 3 cells
        assert_eq!(Encapsulation::LlcSnap.cells_for_datagram(80 + 28), 3);
    }

    fn cells_of(pdu: PduId, n: u32) -> Vec<Cell> {
        (0..n)
            .map(|i| Cell::new(VcLabel::new(0, 32), pdu, if i + 1 == n { Pti::DATA_EOF } else { Pti::DATA }, false, 0))
            .collect()
    }

    fn feed(r: &mut Reassembler, t: &mut PduTable<u64>, cells: &[Cell]) -> Vec<Reassembly> {
        cells
            .iter()
            .map(|c| {
                let out = r.on_cell(c, t);
                t.settle_cell(c.pdu());
                out
            })
            .filter(|o| *o != Reassembly::Incomplete)
            .collect()
    }

    #[test]
    fn test_whole_frame_is_complete() {
        let mut t = PduTable::<u64>::new();
        let a = t.insert(0, 3, SimTime::ZERO).unwrap();
        let mut r = Reassembler::new();
        assert_eq!(feed(&mut r, &mut t, &cells_of(a, 3)), vec![Reassembly::Complete(a)]);
    }

    #[test]
    fn test_missing_middle_cell_discards_frame() {
        let mut t = PduTable::<u64>::new();
        let a = t.insert(0, 3, SimTime::ZERO).unwrap();
        let mut cells = cells_of(a, 3);
        let lost = cells.remove(1);
        t.settle_cell(lost.pdu()); // dropped in the network
        let mut r = Reassembler::new();
        assert_eq!(feed(&mut r, &mut t, &cells), vec![Reassembly::Discarded { cells: 2 }]);
        assert_eq!(t.counts().lost, 1);
    }

    #[test]
    fn test_lost_end_of_frame_merges_and_loses_two_frames() {
        let mut t = PduTable::<u64>::new();
        let a = t.insert(0, 3, SimTime::ZERO).unwrap();
        let b = t.insert(1, 3, SimTime::ZERO).unwrap();
        let mut cells = cells_of(a, 3);
        let eof = cells.pop().unwrap();
        t.settle_cell(eof.pdu());
        cells.extend(cells_of(b, 3));
        let mut r = Reassembler::new();
        assert_eq!(feed(&mut r, &mut t, &cells), vec![Reassembly::Discarded { cells: 5 }]);
        assert_eq!(t.counts().lost, 2);
    }

    #[test]
    fn test_cells_taken_as_one_run_reassemble_as_one_by_one() {
        // Whole, cut short (a cell of b dropped) and merged (c's end lost,
        // d follows): runs of the cells before each end give the same
        // verdicts and leave the table as cells fed one by one.
        let setup = || {
            let mut t = PduTable::<u64>::new();
            let ids: Vec<PduId> = (0..4).map(|i| t.insert(i, 5, SimTime::ZERO).unwrap()).collect();
            t.settle_cell(ids[1]); // b's third cell dropped
            t.settle_cell(ids[2]); // c's end lost
            (t, ids)
        };
        let (t, ids) = setup();
        let (a, b, c, d) = (ids[0], ids[1], ids[2], ids[3]);
        let mut cells = cells_of(a, 5);
        cells.extend(cells_of(b, 5).into_iter().enumerate().filter(|&(i, _)| i != 2).map(|(_, c)| c));
        cells.extend(cells_of(c, 5).into_iter().take(4)); // its end lost
        cells.extend(cells_of(d, 5));
        let (mut one, mut t1) = (Reassembler::new(), setup().0);
        let by_cell = feed(&mut one, &mut t1, &cells);
        let (mut run, mut t2) = (Reassembler::new(), t);
        let mut by_run = Vec::new();
        let mut i = 0;
        while i < cells.len() {
            let n = cells[i..].iter().take_while(|c| **c == cells[i] && !c.is_end_of_frame()).count();
            if n > 0 {
                run.on_cells_before_end(&cells[i], n as u32);
                t2.settle_cells(cells[i].pdu(), n as u32);
                i += n;
            } else {
                by_run.extend(feed(&mut run, &mut t2, &cells[i..=i]));
                i += 1;
            }
        }
        assert_eq!(
            by_cell,
            [Reassembly::Complete(a), Reassembly::Discarded { cells: 4 }, Reassembly::Discarded { cells: 9 }]
        );
        assert_eq!(by_run, by_cell);
        assert_eq!((t2.counts(), t2.in_flight()), (t1.counts(), t1.in_flight()));
        assert_eq!(t2.counts().lost, 4, "all four released, none marked delivered here");
    }

    #[test]
    fn test_reused_pdu_slot_is_not_confused_with_the_old_one() {
        let mut t = PduTable::<u64>::new();
        let a = t.insert(0, 2, SimTime::ZERO).unwrap();
        let mut r = Reassembler::new();
        // a's first cell arrives, its end-of-frame cell is dropped: a is released
        let cells_a = cells_of(a, 2);
        assert_eq!(r.on_cell(&cells_a[0], &t), Reassembly::Incomplete);
        t.settle_cell(a);
        t.settle_cell(a);
        // c reuses a's slot and loses one cell: 1 (a) + 1 (c) cells == c.cells
        let c = t.insert(1, 2, SimTime::ZERO).unwrap();
        let cells_c = cells_of(c, 2);
        t.settle_cell(c);
        assert_eq!(r.on_cell(&cells_c[1], &t), Reassembly::Discarded { cells: 2 });
    }
}
