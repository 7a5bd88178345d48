//! Round-trip time estimation and the retransmission timeout, BSD style.
//!
//! This is the integer algorithm of 4.3/4.4BSD as ns-2 transcribes it
//! (`TcpAgent::rtt_update`, `rtt_timeout`, `rtt_backoff`), which is what the
//! 1990s ATM simulation studies used:
//!
//! * a sample is counted in whole timer ticks the way a BSD clock would:
//!   `m = floor((rtt + phase) / tick)`, `m >= 1`, where `phase` is the send
//!   time's offset into its tick (ticks are aligned to `t = 0`);
//! * `t_srtt` holds 8 x srtt and `t_rttvar` 4 x rttvar, in ticks; the first
//!   sample sets srtt = m and rttvar = m / 2; later ones apply gains 1/8 and
//!   1/4;
//! * RTO = srtt + 4 rttvar ticks (`rttvar_exp = 2`), times the backoff,
//!   clamped to `[min_rto, max_rto]` and never below two ticks;
//! * each timeout doubles the backoff (up to 64); beyond 8 the srtt is folded
//!   into rttvar and the next sample starts afresh;
//! * Karn's rule lives in the sender: retransmitted segments are never
//!   timed, and the backoff is reset only by an ACK of a timed segment.

use atmlab_engine::{Duration, SimTime};

const SRTT_SHIFT: u32 = 3;
const RTTVAR_SHIFT: u32 = 2;
const RTTVAR_EXP: u32 = 2;

/// Timer parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoConfig {
    /// Timer granularity (BSD slow-timer tick).
    pub tick: Duration,
    /// RTO before the first sample.
    pub initial_rto: Duration,
    /// Lower bound of the RTO (two ticks apply in any case).
    pub min_rto: Duration,
    /// Upper bound of the RTO.
    pub max_rto: Duration,
}

/// The estimator state of one connection.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RtoConfig,
    srtt: i64,   // 8 x srtt, ticks
    rttvar: i64, // 4 x rttvar, ticks
    rtxcur: Duration,
    backoff: u64,
    samples: u64,
}

impl RttEstimator {
    /// A fresh estimator.
    pub fn new(cfg: RtoConfig) -> RttEstimator {
        assert!(!cfg.tick.is_zero(), "the timer tick must be positive");
        RttEstimator { cfg, srtt: 0, rttvar: 0, rtxcur: cfg.initial_rto, backoff: 1, samples: 0 }
    }

    /// Takes the sample `rtt` of a segment sent at `sent_at`.
    pub fn sample(&mut self, rtt: Duration, sent_at: SimTime) {
        let tick = self.cfg.tick.as_ps();
        let phase = sent_at.as_ps() % tick;
        let m = ((rtt.as_ps() + phase) / tick).max(1) as i64;
        self.sample_ticks(m);
    }

    /// Takes a sample already counted in ticks.
    pub fn sample_ticks(&mut self, m: i64) {
        self.samples += 1;
        if self.srtt != 0 {
            let mut delta = m - (self.srtt >> SRTT_SHIFT);
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.rttvar >> RTTVAR_SHIFT;
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            self.srtt = m << SRTT_SHIFT;
            self.rttvar = m << (RTTVAR_SHIFT - 1);
        }
        let ticks = ((self.rttvar << (RTTVAR_EXP + SRTT_SHIFT - RTTVAR_SHIFT)) + self.srtt) >> SRTT_SHIFT;
        self.rtxcur = self.cfg.tick.saturating_mul(ticks as u64);
    }

    /// The timeout to arm now: `rtxcur x backoff`, clamped.
    pub fn rto(&self) -> Duration {
        let mut t = self.rtxcur.saturating_mul(self.backoff);
        if t > self.cfg.max_rto {
            t = self.cfg.max_rto;
        }
        if t < self.cfg.min_rto {
            t = self.cfg.min_rto;
        }
        let two_ticks = self.cfg.tick.saturating_mul(2);
        if t < two_ticks { two_ticks } else { t }
    }

    /// A retransmission timeout happened: back off.
    pub fn back_off(&mut self) {
        if self.backoff < 64 {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.rttvar += self.srtt >> SRTT_SHIFT;
            self.srtt = 0;
        }
    }

    /// An ACK of a timed segment arrived: forget the backoff.
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
    }

    /// The current backoff multiplier.
    pub fn backoff(&self) -> u64 {
        self.backoff
    }

    /// `(8 x srtt, 4 x rttvar)` in ticks, as BSD stores them.
    pub fn scaled(&self) -> (i64, i64) {
        (self.srtt, self.rttvar)
    }

    /// The smoothed RTT, if there has been a sample since the last reset.
    pub fn srtt(&self) -> Option<Duration> {
        (self.srtt > 0).then(|| Duration::from_ps(self.cfg.tick.as_ps() * self.srtt as u64 / 8))
    }

    /// Samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(RtoConfig {
            tick: Duration::from_ms(100),
            initial_rto: Duration::from_secs(3),
            min_rto: Duration::ZERO,
            max_rto: Duration::from_secs(64),
        })
    }

    #[test]
    fn test_rto_arithmetic_matches_the_bsd_vector() {
        // algorithms.md s7.8: samples 3,5,2,2,2,2,8 ticks
        let expected = [(24, 6, 9), (26, 7, 10), (25, 7, 10), (24, 7, 10), (23, 7, 9), (23, 6, 8), (29, 11, 14)];
        let mut e = est();
        for (m, (srtt, rttvar, rto)) in [3, 5, 2, 2, 2, 2, 8].into_iter().zip(expected) {
            e.sample_ticks(m);
            assert_eq!(e.scaled(), (srtt, rttvar), "after sample {m}");
            assert_eq!(e.rto(), Duration::from_ms(100 * rto), "after sample {m}");
        }
    }

    #[test]
    fn test_lan_rtt_settles_at_three_ticks() {
        // A 30 us RTT is one tick (m = 1): srtt = 8, rttvar = 2 (scaled), and
        // rttvar never decays because 2 >> 2 == 0, so RTO = 3 ticks for good.
        // Armed on a tick-aligned BSD timer it fires 2 to 3 ticks after being
        // set: the "2 to 3 ticks of 100 ms" of 97-0424 s5.1.
        let mut e = est();
        for _ in 0..20 {
            e.sample(Duration::from_us(30), SimTime::from_ps(1_000));
            assert_eq!(e.rto(), Duration::from_ms(300));
        }
        assert_eq!(e.scaled(), (8, 2));
    }

    #[test]
    fn test_sample_counts_tick_boundaries_crossed() {
        let mut e = est();
        // 30 us sent 10 us before a tick boundary: one boundary crossed -> m = 1
        e.sample(Duration::from_us(30), SimTime::from_ps(Duration::from_ms(100).as_ps() - 10_000_000));
        assert_eq!(e.scaled(), (8, 2));
        let mut e = est();
        // 250 ms sent at a boundary: m = 2
        e.sample(Duration::from_ms(250), SimTime::ZERO);
        assert_eq!(e.scaled(), (16, 4));
    }

    #[test]
    fn test_backoff_doubles_caps_and_folds_srtt() {
        let mut e = est();
        e.sample_ticks(2);
        let base = e.rto();
        e.back_off();
        assert_eq!(e.rto(), base.saturating_mul(2));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.backoff(), 64);
        assert_eq!(e.scaled().0, 0, "srtt folded into rttvar beyond backoff 8");
        assert_eq!(e.rto(), Duration::from_ms(600 * 64), "6 ticks x 64");
        e.sample_ticks(20); // srtt restarts: 20 + 4 * 10 = 60 ticks
        assert_eq!(e.rto(), Duration::from_secs(6 * 64).min(Duration::from_secs(64)), "clamped to max_rto");
    }

    #[test]
    fn test_initial_rto_before_any_sample() {
        assert_eq!(est().rto(), Duration::from_secs(3));
    }
}
