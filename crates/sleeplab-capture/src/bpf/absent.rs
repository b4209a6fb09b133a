//! The BPF recorder of a build without it (the `bpf` feature off, or no clang when the
//! crate was built): every start says so.

use crate::TraceError;
use crate::event::{Detail, Event, InterruptsRecorded};
use crate::session::Drained;

/// Why this build cannot record with BPF.
const ABSENT: &str = "this build of sleeplab has no BPF recorder (built without the `bpf` \
     feature, or without clang)";

/// A BPF recording, which this build cannot make.
#[derive(Debug)]
pub struct BpfSession {
    never: std::convert::Infallible,
}

impl BpfSession {
    /// Never: this build has no BPF recorder (why, as the error).
    pub fn usable() -> Result<(), String> {
        Err(ABSENT.into())
    }

    /// Always an error: this build has no BPF recorder.
    pub fn start_program(_tids: &[i32], _detail: Detail) -> Result<Self, TraceError> {
        Err(TraceError::NoEvent(ABSENT.into()))
    }

    /// Unreachable: no session exists.
    pub fn follow(&mut self, _tids: &[i32]) -> Result<(), TraceError> {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn drain(&mut self, _into: &mut Vec<Event>) -> Drained {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn pause(&self) -> Result<(), TraceError> {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn resume(&self) -> Result<(), TraceError> {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn interrupts(&self) -> InterruptsRecorded {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn lost(&self) -> u64 {
        match self.never {}
    }

    /// Unreachable: no session exists.
    pub fn late_threads(&self) -> u64 {
        match self.never {}
    }
}
