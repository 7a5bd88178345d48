//! The readings more than one algorithm reports: one name, one meaning
//! and one description each, so that a probe or a results column reads the
//! same quantity at any port that has it (the results' schema lists who
//! reports each).

use super::ReadingInfo;

/// Measurement intervals ended (ERICA's averaging intervals).
pub const INTERVALS: ReadingInfo =
    ReadingInfo { name: "intervals", description: "Measurement (averaging) intervals ended.", integer: true };

/// The load factor z of the last interval (the `load_factor` probe).
pub const LOAD_FACTOR: ReadingInfo = ReadingInfo {
    name: "load_factor",
    description: "Load factor z of the last interval: the ABR input rate over the target ABR capacity.",
    integer: false,
};

/// The target ABR capacity (the `abr_capacity` probe).
pub const ABR_CAPACITY: ReadingInfo = ReadingInfo {
    name: "abr_capacity_bps",
    description: "Target ABR capacity of the last interval (Charny: the capacity it shares), bit/s.",
    integer: false,
};

/// The measured CBR and VBR rate (the `hp_rate` probe).
pub const HIGH_PRIORITY: ReadingInfo = ReadingInfo {
    name: "high_priority_bps",
    description: "Measured higher-priority (CBR, VBR) rate of the last interval, bit/s.",
    integer: false,
};

/// The fair share the controller offers (the `fair_share` probe).
pub const FAIR_SHARE: ReadingInfo = ReadingInfo {
    name: "fair_share_bps",
    description: "The fair share the controller offers, bit/s: ERICA's and OSU's FairShare of the last \
                  interval, EPRCA's and APRC's DPF x MACR, CAPC's ERS, Charny's advertised rate.",
    integer: false,
};

/// The VCs the capacity is shared among.
pub const ACTIVE_VCS: ReadingInfo = ReadingInfo {
    name: "active_vcs",
    description: "Active VCs the capacity is shared among (ERICA, OSU: counted in the last interval; Charny: \
                  in its table).",
    integer: false,
};

/// Data cells marked with EFCI.
pub const EFCI_MARKED: ReadingInfo =
    ReadingInfo { name: "efci_marked", description: "Data cells marked with EFCI.", integer: true };

/// Backward RM cells whose ER the controller lowered.
pub const BRMS_LOWERED: ReadingInfo =
    ReadingInfo { name: "brms_lowered", description: "Backward RM cells whose ER it lowered.", integer: true };

/// Backward RM cells the controller set CI in.
pub const BRMS_CI_SET: ReadingInfo =
    ReadingInfo { name: "brms_ci_set", description: "Backward RM cells it set CI in.", integer: true };
