//! EPRCA and APRC, rule by rule, and the test vectors of docs/models/abr.md
//! ("EPRCA and APRC", worked by hand from the rules there).

use super::*;
use crate::abr::rm::Direction;

const T: SimTime = SimTime::ZERO;

/// A BRM of a source whose CCR was `ccr`, arriving with ER `er`.
fn brm(er: f64, ccr: f64) -> RmCell {
    RmCell { dir: Direction::Backward, bn: false, ci: false, ni: false, er, ccr, mcr: 0.0 }
}

/// An ABR cell offered while the ABR queue holds `queue` cells (an FRM with
/// CCR `frm` if given).
fn cell(e: &mut Eprca, queue: u32, frm: Option<f64>) {
    assert!(!e.abr_cell(T, 0, frm, || queue), "EPRCA keeps no deadline");
}

/// What a BRM (CCR `ccr`, ER unlimited) leaves with: its ER and CI.
fn feedback(e: &mut Eprca, ccr: f64) -> (f64, bool) {
    let mut rm = brm(f64::INFINITY, ccr);
    e.backward_rm(T, 0, &mut rm);
    (rm.er, rm.ci)
}

#[test]
fn test_the_vectors_of_the_model_page() {
    // AV 1/16, DPF 7/8, ERF 15/16, MRF 1/4, QT 100, DQT 500.
    let mut e = Eprca::new(EPRCA_DEFAULTS);
    cell(&mut e, 0, Some(50_000.0));
    assert_eq!(e.macr(), Some(50_000.0), "the first CCR starts MACR");
    cell(&mut e, 0, Some(66_000.0));
    assert_eq!(e.macr(), Some(51_000.0), "not congested: MACR follows up");
    cell(&mut e, 101, Some(70_000.0));
    assert_eq!(e.macr(), Some(51_000.0), "congested: not up");
    cell(&mut e, 101, Some(35_000.0));
    assert_eq!(e.macr(), Some(50_000.0), "congested: down");
    assert!(e.congested() && !e.very_congested());
    assert_eq!(e.fair_share(), Some(43_750.0));
    assert_eq!(feedback(&mut e, 60_000.0), (46_875.0, false), "above the fair share: ERF MACR");
    assert_eq!(feedback(&mut e, 40_000.0), (f64::INFINITY, false), "below it: untouched");
    cell(&mut e, 501, None);
    assert!(e.very_congested());
    assert_eq!(feedback(&mut e, 40_000.0), (12_500.0, true), "very congested: MRF MACR, and CI");
    assert_eq!(feedback(&mut e, 1_000.0), (12_500.0, true));
    // An ER already lower is kept, and counts as not lowered.
    let mut rm = brm(10_000.0, 40_000.0);
    e.backward_rm(T, 0, &mut rm);
    assert_eq!(rm.er, 10_000.0);
    let r = e.readings();
    let get = |name: &str| r.iter().find(|x| x.name == name).unwrap().value;
    assert_eq!(get("macr_bps"), Some(50_000.0 * 424.0));
    assert_eq!(get("fair_share_bps"), Some(43_750.0 * 424.0));
    assert_eq!(get("brms_lowered"), Some(3.0));
    assert_eq!(get("brms_ci_set"), Some(3.0));
    assert_eq!(get("efci_marked"), Some(0.0));
}

#[test]
fn test_an_uncongested_port_changes_nothing_and_macr_follows_always_when_asked() {
    let mut e = Eprca::new(EPRCA_DEFAULTS);
    assert_eq!(feedback(&mut e, 1e9), (f64::INFINITY, false), "no MACR, no congestion: untouched");
    cell(&mut e, 100, Some(10_000.0));
    assert!(!e.congested(), "QT is strict: Q = QT is not congested");
    assert_eq!(feedback(&mut e, 1e9), (f64::INFINITY, false));
    let mut p = EPRCA_DEFAULTS;
    p.macr_update = MacrUpdate::Always;
    let mut e = Eprca::new(p);
    cell(&mut e, 200, Some(16_000.0));
    cell(&mut e, 200, Some(32_000.0));
    assert_eq!(e.macr(), Some(17_000.0), "congested, yet up");
    // A NaN or negative CCR counts as 0.
    cell(&mut e, 0, Some(f64::NAN));
    assert_eq!(e.macr(), Some(17_000.0 - 17_000.0 / 16.0));
}

#[test]
fn test_the_survey_form_cuts_every_vc_to_the_fair_share_while_congested() {
    let mut p = EPRCA_DEFAULTS;
    p.reduction = Reduction::FairShare;
    let mut e = Eprca::new(p);
    cell(&mut e, 0, Some(80_000.0));
    assert_eq!(feedback(&mut e, 100_000.0).0, f64::INFINITY);
    cell(&mut e, 150, None);
    assert_eq!(feedback(&mut e, 100_000.0).0, 70_000.0);
    assert_eq!(feedback(&mut e, 1.0).0, 70_000.0, "every VC, not only those above");
    cell(&mut e, 600, None);
    assert_eq!(feedback(&mut e, 1.0), (70_000.0, true));
}

#[test]
fn test_binary_modes_mark_ci_or_efci_and_leave_er() {
    let mut p = EPRCA_DEFAULTS;
    p.explicit_rate = false;
    p.ci_marking = CiMarking::Congested;
    let mut e = Eprca::new(p);
    assert!(!e.marks() && e.writes_backward_rm());
    cell(&mut e, 0, Some(80_000.0));
    assert_eq!(feedback(&mut e, 1e9), (f64::INFINITY, false));
    cell(&mut e, 101, None);
    assert_eq!(feedback(&mut e, 1e9), (f64::INFINITY, true), "CI from QT on");
    // EFCI only.
    let mut p = EPRCA_DEFAULTS;
    p.explicit_rate = false;
    p.ci_marking = CiMarking::Off;
    p.efci_marking = true;
    let mut e = Eprca::new(p);
    assert!(e.marks() && !e.writes_backward_rm());
    assert_eq!(p.timing(), Timing::Exact, "it changes data cells");
    assert_eq!(EPRCA_DEFAULTS.timing(), Timing::Counted);
    let marks: Vec<bool> = [0, 100, 101, 5].iter().map(|&q| e.mark(T, 0, q)).collect();
    assert_eq!(marks, [false, false, true, false]);
    assert_eq!(e.readings()[2].value, Some(1.0));
    let mut rm = brm(5.0, 1.0);
    e.backward_rm(T, 0, &mut rm);
    assert_eq!((rm.er, rm.ci), (5.0, false));
}

#[test]
fn test_aprc_is_congested_while_the_queue_grows_between_samples() {
    let mut p = APRC_DEFAULTS;
    p.congestion = Congestion::QueueGrowth { every: 4 };
    let mut e = Eprca::new(p);
    cell(&mut e, 0, Some(40_000.0));
    // Samples at the 4th, 8th, ... cell: the queue each found.
    for q in [10, 20, 30] {
        cell(&mut e, q, None);
    }
    assert!(e.congested(), "30 > 0 at the first sample");
    assert_eq!(feedback(&mut e, 50_000.0).0, 37_500.0, "above DPF MACR = 35,000: ERF MACR");
    for q in [400, 450, 480, 30] {
        cell(&mut e, q, None);
    }
    assert!(!e.congested(), "30 is not more than 30: a long queue that does not grow is no congestion");
    assert_eq!(feedback(&mut e, 50_000.0).0, f64::INFINITY);
    for q in [30, 30, 30, 600] {
        cell(&mut e, q, None);
    }
    assert!(e.congested() && e.very_congested());
    assert_eq!(feedback(&mut e, 1.0), (10_000.0, true));
    // EFCI marks follow the growth state, not the queue's length.
    let mut p = APRC_DEFAULTS;
    p.efci_marking = true;
    let mut e = Eprca::new(p);
    assert!(!e.mark(T, 0, 10_000));
}

#[test]
fn test_parameters_that_cannot_work_name_themselves() {
    let bad = |f: fn(&mut EprcaParams)| {
        let mut p = EPRCA_DEFAULTS;
        f(&mut p);
        p.validate().unwrap_err().param
    };
    assert!(EPRCA_DEFAULTS.validate().is_ok() && APRC_DEFAULTS.validate().is_ok());
    assert_eq!(bad(|p| p.averaging_weight = 0.0), "averaging_weight");
    assert_eq!(bad(|p| p.down_pressure_factor = 1.5), "down_pressure_factor");
    assert_eq!(bad(|p| p.explicit_reduction_factor = f64::NAN), "explicit_reduction_factor");
    assert_eq!(bad(|p| p.major_reduction_factor = -1.0), "major_reduction_factor");
    assert_eq!(bad(|p| p.high_queue_threshold = 50), "high_queue_threshold");
    assert_eq!(bad(|p| p.congestion = Congestion::QueueGrowth { every: 0 }), "growth_cells");
    assert_eq!(
        bad(|p| {
            p.explicit_rate = false;
            p.ci_marking = CiMarking::Off;
        }),
        "explicit_rate"
    );
}
