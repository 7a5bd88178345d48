//! Source tests: the hand-worked vectors of docs/models/abr.md ("Test
//! vectors": "Source", "Source order", "Rule 5", "Rule 6"), rule by rule,
//! and a property test of rule 1.

use super::*;
use proptest::prelude::*;

/// The OC-3c (STS-3c payload) cell rate, 149.76e6 / 424 cells/s, the PCR of
/// the study (its 149.76 Mbit/s links; the YATS default link rate).
const OC3: f64 = 353_207.55;

fn ms(ms: u64) -> SimTime {
    SimTime::ZERO + Duration::from_ms(ms)
}

fn us(us: u64) -> SimTime {
    SimTime::ZERO + Duration::from_us(us)
}

/// A BRM turned around by the destination (BN = 0).
fn brm(ci: bool, ni: bool, er: f64) -> RmCell {
    RmCell { dir: Direction::Backward, bn: false, ci, ni, er, ccr: 0.0, mcr: 0.0 }
}

fn source(params: AbrParams) -> AbrSource {
    AbrSource::new(params, SimTime::ZERO).expect("valid parameters")
}

#[track_caller]
fn assert_near(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want} +- {tol}");
}

/// Sends `n` in-rate cells paced at the ACR from `*t` ps (carrying the
/// fraction), data always waiting and a BRM waiting if `brm_waiting`.
fn drive(src: &mut AbrSource, t: &mut f64, n: usize, brm_waiting: bool) -> Vec<InRate> {
    (0..n)
        .map(|_| {
            let now = SimTime::from_ps(t.round() as u64);
            let cell = src.next_in_rate(now, true, brm_waiting).expect("data waits");
            *t += src.cell_interval_ps().expect("sending in rate");
            cell
        })
        .collect()
}

/// The CCRs of the FRMs among `cells`.
fn ccrs(cells: &[InRate]) -> Vec<f64> {
    cells
        .iter()
        .filter_map(|c| match c {
            InRate::Frm(rm) => Some(rm.ccr),
            InRate::Brm | InRate::Data => None,
        })
        .collect()
}

/// Where the FRMs are among `cells`.
fn frm_positions(cells: &[InRate]) -> Vec<usize> {
    cells.iter().enumerate().filter(|(_, c)| matches!(c, InRate::Frm(_))).map(|(i, _)| i).collect()
}

// --- parameters -------------------------------------------------------

#[test]
fn test_default_params_are_tm4_defaults_and_valid() {
    let p = AbrParams::new(OC3);
    assert_eq!((p.mcr, p.icr, p.tcr), (0.0, OC3, 10.0));
    assert_eq!((p.nrm, p.mrm, p.trm, p.adtf), (32, 2, Duration::from_ms(100), Duration::from_ms(500)));
    assert_eq!((p.rif, p.rdf, p.cdf), (1.0 / 16.0, 1.0 / 16.0, 1.0 / 16.0));
    assert_eq!(p.tbe, 16_777_215);
    // TBE = 2^24 - 1 gives CRM = ceil(TBE / 32) = 524,288 (docs/models/abr.md, "CRM rounding").
    assert_eq!(p.crm(), 524_288);
    assert_eq!(p.validate(), Ok(()));
    assert_eq!(p.initial_rate(), OC3);
}

#[test]
fn test_crm_of_small_tbe_is_128() {
    let p = AbrParams { tbe: 4096, ..AbrParams::new(OC3) };
    assert_eq!(p.crm(), 128);
    assert_eq!(AbrParams { tbe: 4097, ..p }.crm(), 129, "rounded up");
}

#[test]
fn test_icr_is_clamped_to_tbe_over_frtt_at_setup() {
    // TBE 4096 cells over FRTT 100 ms: at most 40,960 cells/s at first.
    let p = AbrParams { tbe: 4096, frtt: Duration::from_ms(100), ..AbrParams::new(OC3) };
    let src = source(p);
    assert_near(src.icr(), 40_960.0, 1e-6);
    assert_near(src.acr(), 40_960.0, 1e-6);
    // A long FRTT with the default TBE leaves ICR = PCR.
    let p = AbrParams { frtt: Duration::from_ms(550), ..AbrParams::new(OC3) };
    assert_eq!(source(p).acr(), OC3);
}

#[test]
fn test_validate_names_each_parameter_out_of_range() {
    let ok = AbrParams::new(OC3);
    let cases: [(AbrParams, &str); 16] = [
        (AbrParams { pcr: f64::NAN, ..ok }, "PCR"),
        (AbrParams { pcr: 0.0, ..ok }, "PCR"),
        (AbrParams { mcr: OC3 + 1.0, ..ok }, "MCR"),
        (AbrParams { mcr: 1000.0, icr: 500.0, ..ok }, "ICR"),
        (AbrParams { tcr: 0.0, ..ok }, "TCR"),
        (AbrParams { nrm: 1, ..ok }, "Nrm"),
        (AbrParams { nrm: 512, ..ok }, "Nrm"),
        (AbrParams { mrm: 0, ..ok }, "Mrm"),
        (AbrParams { trm: Duration::from_ms(200), ..ok }, "Trm"),
        (AbrParams { rif: 0.0, ..ok }, "RIF"),
        (AbrParams { rdf: 1.5, ..ok }, "RDF"),
        (AbrParams { cdf: -0.1, ..ok }, "CDF"),
        (AbrParams { adtf: Duration::from_ms(5), ..ok }, "ADTF"),
        (AbrParams { tbe: 0, ..ok }, "TBE"),
        (AbrParams { tbe: 1 << 24, ..ok }, "TBE"),
        (AbrParams { frtt: Duration::from_secs(20), ..ok }, "FRTT"),
    ];
    for (p, name) in cases {
        let err = p.validate().expect_err(name);
        assert_eq!(err.name, name);
        let text = err.to_string();
        assert!(text.contains(name) && text.contains(err.range), "{text}");
    }
    let err = AbrParams { trm: Duration::from_ms(200), ..ok }.validate().unwrap_err();
    assert_eq!(err.to_string(), "ABR parameter Trm = 200 ms is outside its range 781.25 us <= Trm <= 100 ms");
    // The edges of the ranges are valid.
    let edges = AbrParams { trm: Duration::from_ps(781_250_000), adtf: Duration::from_ms(10_230), cdf: 0.0, ..ok };
    assert_eq!(edges.validate(), Ok(()));
}

#[test]
fn test_new_with_invalid_params_is_an_error_not_a_panic() {
    let p = AbrParams { nrm: 0, ..AbrParams::new(OC3) };
    assert_eq!(AbrSource::new(p, SimTime::ZERO).unwrap_err().name, "Nrm");
}

// --- rules 8 and 9: the ACR vectors -----------------------------------

#[test]
fn test_study_brm_sequence_gives_spec_acr_sequence() {
    // docs/models/abr.md, "Test vectors", Source: ICR = PCR/10 = 35,320.75.
    let mut src = source(AbrParams { icr: OC3 / 10.0, ..AbrParams::new(OC3) });
    assert_near(src.acr(), 35_320.755, 1e-9);
    let steps = [
        (brm(false, false, 100_000.0), 57_396.23),
        (brm(false, false, 60_000.0), 60_000.0),
        (brm(true, false, 100_000.0), 56_250.0),
        (brm(false, true, 40_000.0), 40_000.0),
        (brm(false, false, 0.0), 0.0),
        // The rise is limited by RIF * PCR.
        (brm(false, false, OC3), 22_075.47),
    ];
    for (i, (cell, want)) in steps.iter().enumerate() {
        src.on_backward_rm(ms(i as u64), cell);
        assert_near(src.acr(), *want, 0.005);
        assert_eq!(src.last_er(), Some(cell.er));
    }
}

#[test]
fn test_feedback_arithmetic_matches_spec() {
    // docs/models/abr.md, "Test vectors", Source: PCR 100k, RIF 1/16, ACR 50k.
    let p = AbrParams { icr: 50_000.0, ..AbrParams::new(100_000.0) };
    let mut src = source(p);
    src.on_backward_rm(ms(1), &brm(false, false, 60_000.0));
    assert_near(src.acr(), 56_250.0, 1e-9);

    let mut src = source(p);
    src.on_backward_rm(ms(1), &brm(true, false, 100_000.0));
    assert_near(src.acr(), 46_875.0, 1e-9);
}

#[test]
fn test_er_below_mcr_sets_acr_to_mcr() {
    // The same vector; YATS would leave 56,250 (DISAGREEMENT, "Rule 9 below MCR").
    let p = AbrParams { icr: 50_000.0, mcr: 20_000.0, ..AbrParams::new(100_000.0) };
    let mut src = source(p);
    src.on_backward_rm(ms(1), &brm(false, false, 10_000.0));
    assert_eq!(src.acr(), 20_000.0);
}

#[test]
fn test_ci_decrease_stops_at_mcr_and_increase_at_pcr() {
    let p = AbrParams { icr: 20_500.0, mcr: 20_000.0, ..AbrParams::new(100_000.0) };
    let mut src = source(p);
    src.on_backward_rm(ms(1), &brm(true, false, 100_000.0));
    assert_eq!(src.acr(), 20_000.0);
    for i in 0..20 {
        src.on_backward_rm(ms(2 + i), &brm(false, false, 1e9));
    }
    assert_eq!(src.acr(), 100_000.0);
}

// --- rule 3: the order of in-rate cells --------------------------------

#[test]
fn test_start_with_nothing_to_send_sends_nothing() {
    let mut src = source(AbrParams::new(OC3));
    assert_eq!(src.next_in_rate(SimTime::ZERO, false, false), None);
    assert_eq!(src.state(), SourceState::Start);
}

#[test]
fn test_first_in_rate_cell_is_an_frm_even_before_a_waiting_brm() {
    let mut src = source(AbrParams::new(OC3));
    assert!(matches!(src.next_in_rate(SimTime::ZERO, false, true), Some(InRate::Frm(_))));
    assert_eq!(src.state(), SourceState::Sending { last_frm: SimTime::ZERO });
    assert_eq!(src.next_in_rate(us(3), false, true), Some(InRate::Brm));
}

#[test]
fn test_frm_fields_follow_rule10() {
    let p = AbrParams { icr: 40_000.0, mcr: 1_000.0, ..AbrParams::new(OC3) };
    let mut src = source(p);
    let Some(InRate::Frm(frm)) = src.next_in_rate(SimTime::ZERO, true, false) else { panic!("no FRM first") };
    let want =
        RmCell { dir: Direction::Forward, bn: false, ci: false, ni: false, er: OC3, ccr: 40_000.0, mcr: 1_000.0 };
    assert_eq!(frm, want);
}

#[test]
fn test_data_always_waiting_gives_one_frm_every_nrm_cells() {
    // docs/models/abr.md, "Source order": 1 FRM + 31 other cells.
    let mut src = source(AbrParams { icr: OC3 / 10.0, ..AbrParams::new(OC3) });
    let cells = drive(&mut src, &mut 0.0, 32 * 10, false);
    assert_eq!(frm_positions(&cells), (0..10).map(|k| 32 * k).collect::<Vec<_>>());
    assert_eq!(src.stats.frms_in_rate, 10);
    assert_eq!(src.stats.data_cells, 310);
}

#[test]
fn test_try_data_cell_is_rule_3c_and_leaves_the_rest_to_next_in_rate() {
    // At full rate (every 32nd cell an FRM) and at 20 cells/s (every third,
    // by Trm and Mrm): a source asked `try_data_cell` first sends what
    // `next_in_rate` alone sends, and counts the same.
    for icr in [OC3 / 10.0, 20.0] {
        let params = AbrParams { icr, ..AbrParams::new(OC3) };
        let (mut plain, mut fast) = (source(params), source(params));
        let want = drive(&mut plain, &mut 0.0, 100, false);
        let mut t = 0.0;
        let got: Vec<InRate> = (0..100)
            .map(|_| {
                let now = SimTime::from_ps(t as u64);
                let cell = if fast.try_data_cell(now) {
                    InRate::Data
                } else {
                    fast.next_in_rate(now, true, false).expect("data waits")
                };
                t += fast.cell_interval_ps().expect("sending in rate");
                cell
            })
            .collect();
        assert_eq!(frm_positions(&got), frm_positions(&want), "ICR {icr}");
        assert_eq!(got.len(), want.len());
        assert_eq!(
            (fast.stats.data_cells, fast.stats.frms_in_rate),
            (plain.stats.data_cells, plain.stats.frms_in_rate)
        );
        assert_eq!(fast.acr(), plain.acr());
    }
    // Before the first FRM (rule 2) and while stopped (rule 11) it sends nothing.
    let mut src = source(AbrParams::new(OC3));
    assert!(!src.try_data_cell(SimTime::ZERO));
    assert_eq!(src.stats.data_cells, 0);
}

#[test]
fn test_low_rate_source_sends_an_frm_every_third_cell() {
    // docs/models/abr.md, "Source order": ACR 20 cells/s, Trm 100 ms, Mrm 2: two
    // cells take 100 ms, so the Trm + Mrm condition makes every 3rd cell an
    // FRM.
    let mut src = source(AbrParams { icr: 20.0, ..AbrParams::new(OC3) });
    assert_eq!(src.cell_interval_ps(), Some(5e10));
    let cells = drive(&mut src, &mut 0.0, 30, false);
    assert_eq!(frm_positions(&cells), (0..10).map(|k| 3 * k).collect::<Vec<_>>());
}

#[test]
fn test_waiting_brm_goes_right_after_each_frm_then_data() {
    // Rule 3b(i): one BRM per FRM while data waits; rule 3a still wins.
    let mut src = source(AbrParams::new(OC3));
    let cells = drive(&mut src, &mut 0.0, 96, true);
    for (i, cell) in cells.iter().enumerate() {
        match i % 32 {
            0 => assert!(matches!(cell, InRate::Frm(_)), "cell {i}: {cell:?}"),
            1 => assert_eq!(*cell, InRate::Brm, "cell {i}"),
            _ => assert_eq!(*cell, InRate::Data, "cell {i}"),
        }
    }
}

#[test]
fn test_brms_go_back_to_back_when_no_data_waits() {
    // Rule 3b(ii); BRMs count towards Nrm like data cells.
    let mut src = source(AbrParams::new(OC3));
    let mut got = Vec::new();
    for k in 0..40 {
        got.push(src.next_in_rate(us(3 * k), false, true).expect("a BRM waits"));
    }
    assert_eq!(frm_positions(&got), [0, 32]);
    assert!(got[1..32].iter().all(|c| *c == InRate::Brm));
    assert_eq!(src.stats.brms_sent, 38);
}

#[test]
fn test_idle_source_sends_one_trailing_frm_then_nothing() {
    let mut src = source(AbrParams::new(OC3));
    src.next_in_rate(SimTime::ZERO, true, false);
    src.next_in_rate(us(3), true, false);
    assert_eq!(src.frm_due_at(), None, "one cell is fewer than Mrm");
    src.next_in_rate(us(6), true, false);
    // Mrm = 2 cells went: rule 3a(i) makes an FRM due Trm after the last.
    assert_eq!(src.frm_due_at(), Some(ms(100)));
    assert_eq!(src.next_in_rate(ms(50), false, false), None);
    assert!(matches!(src.next_in_rate(ms(100), false, false), Some(InRate::Frm(_))));
    assert_eq!(src.frm_due_at(), None);
    assert_eq!(src.next_in_rate(ms(300), false, false), None);
}

// --- rule 5: use it or lose it -----------------------------------------

/// A source with ICR `icr` whose first FRM went at 0 and whose ACR BRMs then
/// raised to 100,000, with Mrm data cells sent just after the FRM.
fn source_at_100k(icr: f64) -> AbrSource {
    let mut src = source(AbrParams { icr, ..AbrParams::new(OC3) });
    assert!(matches!(src.next_in_rate(SimTime::ZERO, true, false), Some(InRate::Frm(_))));
    for i in 0..4 {
        src.on_backward_rm(us(10 + i), &brm(false, false, 100_000.0));
    }
    assert_eq!(src.acr(), 100_000.0);
    assert_eq!(src.next_in_rate(us(20), true, false), Some(InRate::Data));
    assert_eq!(src.next_in_rate(us(30), true, false), Some(InRate::Data));
    src
}

#[test]
fn test_frm_after_idle_over_adtf_carries_icr() {
    // docs/models/abr.md, "Test vectors", Rule 5: ICR = PCR/10, ACR 100,000, the next FRM
    // 0.6 s after the previous (> ADTF = 0.5 s).
    let mut src = source_at_100k(OC3 / 10.0);
    let Some(InRate::Frm(frm)) = src.next_in_rate(ms(600), true, false) else { panic!("FRM due") };
    assert_near(frm.ccr, 35_320.755, 1e-9);
    assert_eq!(src.acr(), frm.ccr);
    assert_eq!(src.stats.adtf_cuts, 1);
}

#[test]
fn test_frm_after_idle_under_adtf_keeps_acr() {
    let mut src = source_at_100k(OC3 / 10.0);
    let Some(InRate::Frm(frm)) = src.next_in_rate(ms(400), true, false) else { panic!("FRM due") };
    assert_eq!(frm.ccr, 100_000.0);
}

#[test]
fn test_rule5_never_fires_with_icr_equal_to_pcr() {
    let mut src = source_at_100k(OC3);
    let Some(InRate::Frm(frm)) = src.next_in_rate(ms(600), true, false) else { panic!("FRM due") };
    assert_eq!(frm.ccr, 100_000.0);
    assert_eq!(src.stats.adtf_cuts, 0);
}

// --- rule 6: missing feedback --------------------------------------------

#[test]
fn test_frms_129_to_131_without_brm_carry_decayed_ccr() {
    // docs/models/abr.md, "Test vectors", Rule 6: TBE 4096 -> CRM 128, ACR 100,000 (ICR;
    // FRTT 20 ms keeps TBE/FRTT = 204,800 above it), no BRM.
    let p = AbrParams { icr: 100_000.0, tbe: 4096, frtt: Duration::from_ms(20), ..AbrParams::new(OC3) };
    let mut src = source(p);
    let ccr = ccrs(&drive(&mut src, &mut 0.0, 32 * 131, false));
    assert_eq!(ccr.len(), 131);
    assert!(ccr[..128].iter().all(|&c| c == 100_000.0));
    assert_near(ccr[128], 93_750.0, 1e-9);
    assert_near(ccr[129], 87_890.6, 0.05);
    assert_near(ccr[130], 82_397.5, 0.05);
    assert_eq!(src.stats.crm_cuts, 3);
    assert_eq!(src.frms_since_brm(), 131);
}

#[test]
fn test_without_brm_acr_decays_geometrically_down_to_mcr() {
    // docs/models/abr.md, "Test vectors", Rule 6: after CRM FRMs, ACR falls by (1 - CDF) per
    // FRM and stops at MCR. TBE 64 / Nrm 32 gives CRM = 2.
    let p = AbrParams { icr: 10_000.0, mcr: 1_000.0, tbe: 64, ..AbrParams::new(100_000.0) };
    let mut src = source(p);
    let ccr = ccrs(&drive(&mut src, &mut 0.0, 32 * 60, false));
    assert_eq!(ccr.len(), 60);
    for (i, &c) in ccr.iter().enumerate() {
        let cuts = i.saturating_sub(1) as i32;
        let want = (10_000.0 * (15.0f64 / 16.0).powi(cuts)).max(1_000.0);
        assert_near(c, want, 1e-6 * want);
    }
    assert_eq!(*ccr.last().unwrap(), 1_000.0);
}

#[test]
fn test_brm_with_bn0_resets_rule6_count_and_bn1_does_not() {
    let p = AbrParams { icr: 10_000.0, tbe: 64, ..AbrParams::new(100_000.0) };
    let mut src = source(p);
    drive(&mut src, &mut 0.0, 64, false);
    assert_eq!(src.frms_since_brm(), 2);
    let becn = RmCell { bn: true, ..brm(false, true, 1e9) };
    src.on_backward_rm(ms(10), &becn);
    assert_eq!(src.frms_since_brm(), 2, "a switch-made BECN cell does not count");
    src.on_backward_rm(ms(11), &brm(false, true, 1e9));
    assert_eq!(src.frms_since_brm(), 0);
}

// --- rule 11: stopped below TCR, out-of-rate FRMs ------------------------

#[test]
fn test_er_zero_stops_in_rate_cells_and_probes_at_most_tcr() {
    let mut src = source(AbrParams::new(OC3));
    assert!(matches!(src.next_in_rate(SimTime::ZERO, true, false), Some(InRate::Frm(_))));
    assert_eq!(src.on_backward_rm(ms(1), &brm(false, false, 0.0)), Transition::Stopped);
    assert_eq!(src.acr(), 0.0);
    assert_eq!(src.cell_interval_ps(), None);
    assert_eq!(src.next_in_rate(ms(2), true, true), None);
    // The first probe is 1/TCR after the last FRM.
    assert_eq!(src.out_of_rate_due(), Some(ms(100)));

    let mut sent = Vec::new();
    for t in 1..=2_000 {
        assert_eq!(src.next_in_rate(ms(t), true, true), None);
        if let Some(frm) = src.next_out_of_rate(ms(t)) {
            assert_eq!((frm.dir, frm.ccr, frm.er), (Direction::Forward, 0.0, OC3));
            sent.push(t);
        }
    }
    assert_eq!(sent, (1..=20).map(|k| 100 * k).collect::<Vec<_>>());
    assert_eq!(src.stats.frms_out_of_rate, 20);
    assert_eq!(src.stats.frms_in_rate, 1, "out-of-rate FRMs are not in-rate FRMs");
    assert_eq!(src.frms_since_brm(), 0, "nor do they count for rule 6");
}

#[test]
fn test_positive_er_after_stop_restarts_in_rate_sending() {
    let mut src = source(AbrParams::new(OC3));
    src.next_in_rate(SimTime::ZERO, true, false);
    src.on_backward_rm(ms(1), &brm(false, false, 0.0));
    assert!(src.next_out_of_rate(ms(100)).is_some());
    assert_eq!(src.on_backward_rm(ms(150), &brm(false, false, 50_000.0)), Transition::Resumed);
    assert_near(src.acr(), OC3 / 16.0, 1e-9);
    assert_eq!(src.state(), SourceState::Sending { last_frm: SimTime::ZERO });
    assert_eq!(src.out_of_rate_due(), None);
    assert_eq!(src.next_out_of_rate(ms(300)), None);
    assert!(src.cell_interval_ps().is_some());
    assert_eq!(src.next_in_rate(ms(150), true, false), Some(InRate::Data));
    // Two cells went since the FRM at 0 and Trm passed: an FRM is next.
    assert_eq!(src.next_in_rate(ms(151), true, false), Some(InRate::Data));
    assert!(matches!(src.next_in_rate(ms(152), true, false), Some(InRate::Frm(_))));
}

#[test]
fn test_stopping_again_soon_keeps_probes_tcr_apart() {
    let mut src = source(AbrParams::new(OC3));
    src.next_in_rate(SimTime::ZERO, true, false);
    src.on_backward_rm(ms(1), &brm(false, false, 0.0));
    assert!(src.next_out_of_rate(ms(100)).is_some());
    src.on_backward_rm(ms(110), &brm(false, false, OC3));
    assert_eq!(src.on_backward_rm(ms(120), &brm(false, false, 0.0)), Transition::Stopped);
    assert_eq!(src.out_of_rate_due(), Some(ms(200)));
}

#[test]
fn test_icr_below_tcr_starts_stopped_and_resumes_with_an_frm() {
    let p = AbrParams { icr: 5.0, ..AbrParams::new(1_000.0) };
    let mut src = source(p);
    assert_eq!(src.state(), SourceState::Stopped { next_out_of_rate: SimTime::ZERO, last_frm: None });
    assert_eq!(src.next_in_rate(SimTime::ZERO, true, false), None);
    let probe = src.next_out_of_rate(SimTime::ZERO).expect("a probe at setup");
    assert_eq!(probe.ccr, 5.0);
    assert_eq!(src.on_backward_rm(ms(30), &brm(false, false, 1_000.0)), Transition::Resumed);
    assert_eq!(src.acr(), 67.5);
    assert_eq!(src.state(), SourceState::Start);
    assert!(matches!(src.next_in_rate(ms(30), true, false), Some(InRate::Frm(_))), "rule 2 still holds");
}

#[test]
fn test_rule6_cut_below_tcr_sends_the_frm_then_stops() {
    // CDF = 1 cuts ACR to MCR = 0 at the first unanswered FRM past CRM.
    let p = AbrParams { icr: 1_000.0, tbe: 32, cdf: 1.0, ..AbrParams::new(1_000.0) };
    let mut src = source(p);
    let cells = drive(&mut src, &mut 0.0, 32, false);
    assert_eq!(ccrs(&cells), [1_000.0]);
    let Some(InRate::Frm(frm)) = src.next_in_rate(ms(40), true, false) else { panic!("FRM due") };
    assert_eq!(frm.ccr, 0.0);
    assert_eq!(src.state(), SourceState::Stopped { next_out_of_rate: ms(140), last_frm: Some(ms(40)) });
}

// --- rule 1 --------------------------------------------------------------

/// One step of the property test: a BRM `(ci, ni, bn, er as a fraction of
/// 2 PCR)`, an in-rate poll or an out-of-rate poll, `dt` us later.
type Step = (u8, bool, bool, bool, f64, u64);

fn run_steps(p: AbrParams, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut src = AbrSource::new(p, SimTime::ZERO).expect("valid");
    let mut now = SimTime::ZERO;
    let bounded = |x: f64| (p.mcr..=p.pcr).contains(&x);
    for &(kind, a, b, c, er, dt) in steps {
        now += Duration::from_us(dt);
        match kind {
            0 => {
                let er = if er < 0.1 { 0.0 } else { er * 2.0 * p.pcr };
                src.on_backward_rm(now, &RmCell { bn: c, ..brm(a, b, er) });
            }
            1 => {
                if let Some(InRate::Frm(frm)) = src.next_in_rate(now, a, b) {
                    prop_assert!(bounded(frm.ccr), "CCR {}", frm.ccr);
                }
            }
            _ => {
                if let Some(frm) = src.next_out_of_rate(now) {
                    prop_assert!(bounded(frm.ccr), "CCR {}", frm.ccr);
                }
            }
        }
        prop_assert!(bounded(src.acr()), "ACR {} outside [{}, {}]", src.acr(), p.mcr, p.pcr);
        prop_assert_eq!(src.cell_interval_ps().is_none(), src.acr() < p.tcr);
    }
    Ok(())
}

proptest! {
    #[test]
    fn test_acr_stays_within_mcr_and_pcr(
        pcr in 10.0f64..400_000.0,
        mcr_share in 0.0f64..1.0,
        icr_share in 0.0f64..1.0,
        tbe in 1u32..5_000,
        cdf in 0.0f64..=1.0,
        steps in proptest::collection::vec(
            (0u8..3, any::<bool>(), any::<bool>(), any::<bool>(), 0.0f64..1.0, 0u64..200_000),
            1..400,
        ),
    ) {
        let mcr = if mcr_share < 0.5 { 0.0 } else { pcr * (mcr_share - 0.5) };
        let icr = (mcr + (pcr - mcr) * icr_share).min(pcr);
        let p = AbrParams { mcr, icr, tbe, cdf, adtf: Duration::from_ms(10), ..AbrParams::new(pcr) };
        run_steps(p, &steps)?;
    }
}
