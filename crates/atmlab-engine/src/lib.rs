//! # atmlab-engine
//!
//! The domain-free kernel of the atmlab simulator. It knows nothing of cells or
//! TCP; it provides the pieces every model is built from:
//!
//! * [`SimTime`] / [`Duration`]: integer picoseconds, checked arithmetic
//!   ([`time`]);
//! * [`BitRate`] and [`SlotClock`]: typed rates and exact periodic slot
//!   boundaries that never accumulate rounding ([`units`]);
//! * [`EventQueue`]: a 4-ary heap ordered by `(time, class, seq)`, the
//!   documented deterministic order of atmlab ([`queue`]);
//! * [`RngStreams`]: one independent random stream per component, derived from
//!   `(seed, replication, component name)` ([`rng`]);
//! * [`TimeAverage`] and [`jain_fairness`]: the statistics the probes use
//!   ([`stats`]);
//! * [`fgn`]: fractional Gaussian noise (Paxson's FFT method and exact
//!   Davies-Harte), Hurst estimators, and the truncated rate sequence of the
//!   video model of 97-0177R2 ([`RateSequence`]);
//! * [`hint::prefetch`]: asks the processor for a cache line the model
//!   will read soon ([`hint`]);
//! * [`baseline`]: the bare event loop that `atmlab bench` measures next to
//!   the real model, as a yardstick for the machine.
//!
//! ```
//! use atmlab_engine::{BitRate, Duration, SimTime, SlotClock};
//! // A 155.52 Mbit/s link sends a 424-bit cell every 2.726337 us; slot k
//! // starts exactly at ceil(k * 424e12 / 155.52e6) ps, with no drift.
//! let rate = BitRate::from_bps(155_520_000).unwrap();
//! let mut clock = SlotClock::new(rate, 424);
//! clock.seek(SimTime::ZERO + Duration::from_secs(1));
//! assert_eq!(clock.slot(), 366_793); // 366,792.45 cells fit in one second
//! ```

pub mod baseline;
pub mod fgn;
pub mod hint;
pub mod queue;
pub mod rng;
pub mod stats;
pub mod time;
pub mod units;

pub use fgn::{FgnError, FgnMethod, RateParams, RateSequence};
pub use queue::{EventClass, EventQueue};
pub use rng::{RngStreams, SimRng};
pub use stats::{TimeAverage, jain_fairness};
pub use time::{Duration, MAX_SCENARIO_TIME, PS_PER_S, SimTime};
pub use units::{BitRate, CELL_BITS, Follow, SlotClock, SlotGrid, SlotPos};
