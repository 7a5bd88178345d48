//! ATM service categories (ATM Forum TM 4.0).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The service category of a virtual channel. A switch port keeps one queue
/// per category; the scheduler decides between them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServiceCategory {
    /// Constant bit rate.
    Cbr,
    /// Variable bit rate (real-time and non-real-time alike here).
    Vbr,
    /// Available bit rate (explicit-rate or binary feedback).
    Abr,
    /// Unspecified bit rate (best effort), the category of TCP in most studies.
    Ubr,
}

impl ServiceCategory {
    /// All categories, in strict-priority order (highest first).
    pub const ALL: [ServiceCategory; 4] =
        [ServiceCategory::Cbr, ServiceCategory::Vbr, ServiceCategory::Abr, ServiceCategory::Ubr];

    /// Index `0..4` in [`ALL`](Self::ALL) order.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The lower-case name used in scenarios and results.
    pub const fn name(self) -> &'static str {
        match self {
            ServiceCategory::Cbr => "cbr",
            ServiceCategory::Vbr => "vbr",
            ServiceCategory::Abr => "abr",
            ServiceCategory::Ubr => "ubr",
        }
    }
}

impl fmt::Display for ServiceCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
