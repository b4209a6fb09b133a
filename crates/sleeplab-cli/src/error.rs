//! Errors that are the user's to fix: they exit with code 2 and one line naming the bad
//! value (the binary maps each kind to its exit code). Everything else exits 1.

use std::fmt;

/// A bad command line or bad input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<crate::parse::ParseError> for UsageError {
    fn from(e: crate::parse::ParseError) -> Self {
        Self(e.to_string())
    }
}

impl From<crate::parse::UnknownName> for UsageError {
    fn from(e: crate::parse::UnknownName) -> Self {
        Self(e.to_string())
    }
}

impl From<sleeplab_results::model::LoadError> for UsageError {
    fn from(e: sleeplab_results::model::LoadError) -> Self {
        Self(e.to_string())
    }
}
