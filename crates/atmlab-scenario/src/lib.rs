//! # atmlab-scenario
//!
//! The scenario format of atmlab: a TOML file (or the same structure as JSON)
//! describing nodes, links, VCs, applications and metrics, with every quantity
//! written with its unit. This crate parses it ([`parse_toml`],
//! [`parse_json`]), reports every mistake with the key path where it is
//! ([`ScenarioError`]), and builds the simulation ([`Scenario::build`]).
//!
//! ```
//! let text = r#"
//!     [simulation]
//!     duration = "10 ms"
//!     [[hosts]]
//!     name = "a"
//!     [[hosts]]
//!     name = "b"
//!     [[links]]
//!     between = ["a", "b"]
//!     rate = "155.52 Mbit/s"
//!     delay = "5 us"
//!     [[vcs]]
//!     name = "v"
//!     path = ["a", "b"]
//!     [[apps]]
//!     kind = "udp_cbr"
//!     name = "voice"
//!     vc = "v"
//!     payload = "80 bytes"
//!     interval = "1 ms"
//! "#;
//! let result = atmlab_scenario::parse_toml(text).unwrap().build(1, 0).unwrap().run().unwrap();
//! assert_eq!(result.udp_flows[0].received, 10);
//! // 80 bytes + UDP/IP + LLC/SNAP + AAL5 = 3 cells, 10 datagrams:
//! assert_eq!(result.ports[0].cells_out, 30);
//! ```

mod abr_switch;
mod build;
mod error;
pub mod schema;
pub mod units;

pub use build::{DEFAULT_MTU, DEFAULT_THRESHOLD_FRACTION, DEFAULT_Z};
pub use error::ScenarioError;
pub use schema::Scenario;

/// Parses a scenario from TOML text.
pub fn parse_toml(text: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError::new("", format!("malformed TOML: {e}")))?;
    serde_path_to_error::deserialize(de)
        .map_err(|e| ScenarioError::new(key_path(e.path()), e.into_inner().message().to_owned()))
}

/// A key path as the errors write it: `switches[0].port.buffer`. A key that
/// is empty or would read as more than one (a `.`, `[`, a space or a quote
/// in it) is quoted, so that even `"" = 1` at the top level has a path
/// that names it.
fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                let plain = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || "_-".contains(c));
                if plain { out.push_str(key) } else { out.push_str(&format!("{key:?}")) }
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Parses a scenario from JSON text (the form the Python front sends).
pub fn parse_json(text: &str) -> Result<Scenario, ScenarioError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = key_path(e.path());
        let msg = e.into_inner().to_string();
        // serde_json appends the position in the JSON text, which means
        // nothing to someone who wrote TOML.
        let msg = match msg.rsplit_once(" at line ") {
            Some((m, _)) => m.to_owned(),
            None => msg,
        };
        ScenarioError::new(path, msg)
    })
}

#[cfg(test)]
mod tests;
