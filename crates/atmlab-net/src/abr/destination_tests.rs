//! Destination tests: rules 1-3 and 6 of docs/models/abr.md ("Destination"), and the
//! turnaround loop through the reverse direction's source (rule 3b).

use super::*;
use crate::abr::source::{AbrParams, AbrSource, InRate};
use atmlab_engine::{Duration, SimTime};

/// An FRM as a source sends it (rule 10), with CCR `ccr`.
fn frm(ccr: f64) -> RmCell {
    RmCell { dir: Direction::Forward, bn: false, ci: false, ni: false, er: 100_000.0, ccr, mcr: 0.0 }
}

#[test]
fn test_turn_around_sets_backward_and_keeps_the_fields() {
    let mut dst = AbrDestination::new();
    // A switch on the way set NI and lowered ER; both are kept.
    let arrived = RmCell { ni: true, er: 42_000.0, mcr: 1_000.0, ..frm(50_000.0) };
    let brm = dst.turn_around(&arrived);
    assert_eq!(brm, RmCell { dir: Direction::Backward, ..arrived });
}

#[test]
fn test_ci_from_a_switch_is_kept_without_efci() {
    let mut dst = AbrDestination::new();
    dst.on_data_cell(false);
    assert!(dst.turn_around(&RmCell { ci: true, ..frm(1.0) }).ci);
}

#[test]
fn test_efci_sets_ci_once_then_is_cleared() {
    let mut dst = AbrDestination::new();
    dst.on_data_cell(true);
    assert!(dst.efci_state());
    assert!(dst.turn_around(&frm(1.0)).ci, "rule 2: CI from the EFCI state");
    assert!(!dst.efci_state(), "the turnaround clears it");
    assert!(!dst.turn_around(&frm(2.0)).ci);
    assert_eq!(dst.stats.ci_from_efci, 1);
}

#[test]
fn test_efci_state_is_the_last_data_cells_bit() {
    let mut dst = AbrDestination::new();
    dst.on_data_cell(true);
    dst.on_data_cell(false);
    assert!(!dst.turn_around(&frm(1.0)).ci);
    dst.on_data_cell(false);
    dst.on_data_cell(true);
    assert!(dst.turn_around(&frm(1.0)).ci);
    assert_eq!((dst.stats.data_cells, dst.stats.efci_cells), (4, 2));
}

#[test]
fn test_newer_frm_overwrites_the_waiting_brm() {
    let mut dst = AbrDestination::new();
    assert!(!dst.brm_waiting());
    assert_eq!(dst.take_brm(), None);
    assert_eq!(dst.on_forward_rm(&frm(1.0)), Turnaround::Queued);
    assert_eq!(dst.on_forward_rm(&frm(2.0)), Turnaround::Overwrote);
    assert!(dst.brm_waiting());
    let brm = dst.take_brm().expect("one waits");
    assert_eq!((brm.dir, brm.ccr), (Direction::Backward, 2.0), "the newer contents");
    assert_eq!(dst.take_brm(), None, "at most one waits");
    assert_eq!((dst.stats.frms_received, dst.stats.overwritten, dst.stats.brms_sent), (2, 1, 1));
}

#[test]
fn test_efci_mark_survives_an_overwritten_brm() {
    // The EFCI state enters the BRM when it is sent, so a mark seen before
    // the overwritten FRM arrived still reaches the source.
    let mut dst = AbrDestination::new();
    dst.on_data_cell(true);
    dst.on_forward_rm(&frm(1.0));
    dst.on_forward_rm(&frm(2.0));
    assert!(dst.take_brm().unwrap().ci);
}

#[test]
fn test_efci_after_the_frm_arrived_is_carried_by_its_brm() {
    let mut dst = AbrDestination::new();
    dst.on_forward_rm(&frm(1.0));
    dst.on_data_cell(true);
    assert!(dst.take_brm().unwrap().ci);
    assert!(!dst.efci_state());
}

#[test]
fn test_waiting_brm_goes_out_under_the_reverse_sources_rule_3b() {
    // Host A: the source of A->B and the destination of B->A. An FRM of
    // B->A arrives while A->B sends data; its BRM goes right after A's next
    // FRM (rule 3b(i)), then data again.
    let mut src = AbrSource::new(AbrParams::new(353_207.55), SimTime::ZERO).unwrap();
    let mut dst = AbrDestination::new();
    let mut t = SimTime::ZERO;
    let step = Duration::from_us(3);
    let mut next = |src: &mut AbrSource, dst: &AbrDestination| {
        t += step;
        src.next_in_rate(t, true, dst.brm_waiting()).unwrap()
    };
    assert!(matches!(next(&mut src, &dst), InRate::Frm(_)));
    dst.on_data_cell(true);
    dst.on_forward_rm(&frm(7.0));
    assert_eq!(next(&mut src, &dst), InRate::Brm);
    let brm = dst.take_brm().unwrap();
    assert_eq!((brm.dir, brm.bn, brm.ci, brm.ccr), (Direction::Backward, false, true, 7.0));
    dst.on_forward_rm(&frm(8.0));
    // One BRM per FRM while data waits: the second waits for the next FRM.
    for _ in 2..32 {
        assert_eq!(next(&mut src, &dst), InRate::Data);
    }
    assert!(matches!(next(&mut src, &dst), InRate::Frm(_)));
    assert_eq!(next(&mut src, &dst), InRate::Brm);
}
