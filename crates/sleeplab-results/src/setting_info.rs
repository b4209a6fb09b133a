//! The settings `tune` tries, as its result keeps them: how far each reaches
//! ([`Scope`]), what it is ([`SettingInfo`]), those that do not apply here
//! ([`Unavailable`]) and the boot-time ones it only reports ([`BootSetting`]). The CLI's
//! `tuning::catalogue` reads them from the machine.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How far a setting reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The waiting thread or process only.
    Process,
    /// The whole machine (root; journaled and restored).
    System,
    /// The kernel command line: reported, never changed.
    Boot,
}

impl Scope {
    /// Its name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Process => "process",
            Scope::System => "system",
            Scope::Boot => "boot",
        }
    }
}

/// What a setting is, for readers: its name, reach, what it does and how to keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingInfo {
    /// Its name (`--settings`), e.g. `timer-slack`, `cpuidle-off-haltpoll`.
    pub name: String,
    /// How far it reaches.
    pub scope: Scope,
    /// What it does, in one line.
    pub what: String,
    /// The command (or code) a user runs to apply it for good.
    pub how: String,
}

/// How a setting is put in force (applied by the `apply` module).
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Timer slack of the waiting thread to 1 ns.
    Slack,
    /// A real-time policy at priority 1 (`Policy::Fifo` or `Policy::Rr`).
    RealTime(sleeplab::system::Policy),
    /// The thread's nice value.
    Nice(i32),
    /// The EEVDF slice (`sched_runtime`), ns.
    Slice(u64),
    /// The waiting thread pinned to the measuring CPU.
    Pin,
    /// A SCHED_IDLE thread spinning on the measuring CPU (the waiting thread pinned there).
    Companion,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
    Mlock,
    /// `/dev/cpu_dma_latency` held open at 0 (the kernel drops it when the file closes).
    DmaLatency(PathBuf),
    /// System files written (journaled): each path and its new value.
    Writes(Vec<(PathBuf, String)>),
}

/// A setting that applies here.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// What it is.
    pub info: SettingInfo,
    /// How it is put in force.
    pub change: Change,
}

/// A setting that does not apply here, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Unavailable {
    /// Its name.
    pub name: String,
    /// How far it would reach.
    pub scope: Scope,
    /// Why it is not tried (`needs root`, `no cpufreq driver`…).
    pub reason: String,
}

/// A boot-time setting: what the machine has now and how to try it. Also a setting of
/// the host that runs this machine, where this machine is a guest ([`BootSetting::of_host`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BootSetting {
    /// Its name (`isolcpus`, `nohz_full`, `idle=poll`, `host halt polling`).
    pub name: String,
    /// Whether it is a setting of a host (a hypervisor's, for its guests), not of this
    /// machine: it matters here only through the host that runs this machine, or for
    /// guests this machine runs. `false` in results written before it was recorded.
    #[serde(default)]
    pub of_host: bool,
    /// What it does.
    pub what: String,
    /// What is in force now, as the machine shows it.
    pub now: String,
    /// How to try it.
    pub how: String,
}
