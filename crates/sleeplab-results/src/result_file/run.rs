//! The start and end of a run: what is known when it starts, and the envelope it
//! closes with.

use super::host_noise::{HostNoise, Probed, probe_now};
use super::{ExperimentData, ResultFile, SCHEMA_VERSION, ToolInfo};
use crate::settings::RunSettings;
use sleeplab::system::Fingerprint;

/// What is known when a run starts: the clock, the machine, the command line.
#[derive(Debug, Clone)]
pub struct RunStart {
    /// Start time, RFC 3339.
    pub started_at: String,
    /// The machine.
    pub fingerprint: Fingerprint,
    /// The command line.
    pub command_line: Vec<String>,
    /// The CPUs whose host noise the run probes, and the probe before it (`None`: the
    /// run does not probe, as a survey's stages).
    pub noise_before: Option<(Vec<usize>, Probed)>,
    /// The probe after it, once taken ([`RunStart::probe_after`]).
    pub noise_after: Option<Probed>,
}

impl RunStart {
    /// Notes the start of a run now.
    pub fn now() -> Self {
        Self {
            started_at: now_rfc3339(),
            fingerprint: Fingerprint::collect(),
            command_line: std::env::args().collect(),
            noise_before: None,
            noise_after: None,
        }
    }

    /// The same start, the host's noise on `cpus` probed now
    /// (`super::host_noise`); the probe after comes with [`RunStart::probe_after`].
    pub fn probing(mut self, cpus: Vec<usize>) -> Self {
        let before = probe_now(&cpus);
        self.noise_before = Some((cpus, before));
        self
    }

    /// Probes the host's noise again, now that the run is over (nothing where the run
    /// did not probe before it).
    pub fn probe_after(&mut self) {
        if let Some((cpus, _)) = &self.noise_before {
            self.noise_after = Some(probe_now(cpus));
        }
    }

    /// The host noise record of this run, when it probed on both sides.
    pub fn host_noise(&self) -> Option<HostNoise> {
        let (_, before) = self.noise_before.as_ref()?;
        Some(HostNoise::of(before.clone(), self.noise_after.clone()?))
    }

    /// The start of a part of this run (a survey stage) now: the same machine and
    /// command line.
    pub fn part(&self) -> Self {
        Self {
            started_at: now_rfc3339(),
            fingerprint: self.fingerprint.clone(),
            command_line: self.command_line.clone(),
            noise_before: None,
            noise_after: None,
        }
    }

    /// Closes the run: the result envelope around `data`.
    pub fn finish(
        self,
        data: ExperimentData,
        settings: RunSettings,
        complete: bool,
        notes: Vec<String>,
    ) -> ResultFile {
        let host_noise = self.host_noise();
        ResultFile {
            host_noise,
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::default(),
            complete,
            started_at: self.started_at,
            finished_at: now_rfc3339(),
            command_line: self.command_line,
            fingerprint: self.fingerprint,
            settings,
            notes,
            data,
        }
    }
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
