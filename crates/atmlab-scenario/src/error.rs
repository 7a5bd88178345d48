//! Scenario errors: what is wrong and at which key.

use std::fmt;

/// A problem in a scenario, located by its key path
/// (`switches[0].port.buffer`); empty for problems of the whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Where: a dotted key path with `[i]` indices, or empty.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl ScenarioError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

impl std::error::Error for ScenarioError {}
