//! The machine fingerprint recorded with every result: what decides the numbers.

use super::{Idle, timer_slack_ns};
use std::fs;

/// What the machine is, as far as waiting is concerned.
///
/// Every field is best effort: a value that cannot be read is `None` (or "unknown"),
/// never an error.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fingerprint {
    /// Host name.
    pub hostname: String,
    /// `uname -s`, e.g. `Linux`.
    pub os: String,
    /// Kernel release, e.g. `6.1.0-18-amd64`.
    pub kernel_release: String,
    /// Kernel version string (`uname -v`), which names the preemption model.
    pub kernel_version: String,
    /// Machine architecture, e.g. `x86_64`.
    pub arch: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpu_count: usize,
    /// Current clocksource, e.g. `tsc`, `kvm-clock`, `hpet`.
    pub clocksource: Option<String>,
    /// The timer slack of the thread that took the fingerprint, ns.
    pub timer_slack_ns: u64,
    /// Hypervisor, when detectable (`kvm`, `vmware`, `xen`, `hyperv`, …, from DMI,
    /// /sys/hypervisor, CPUID's hypervisor leaf or the kernel log; `unknown hypervisor`
    /// when the CPU says it is virtual but none of them says whose).
    pub virtualization: Option<String>,
    /// Preemption model: `full`, `voluntary`, `none`, `dynamic (…)`, `rt`, from
    /// /sys/kernel/debug/sched/preempt or the kernel version string.
    pub preemption: Option<String>,
    /// cpufreq governor of CPU 0, when there is cpufreq.
    pub cpufreq_governor: Option<String>,
    /// Kernel timer frequency (CONFIG_HZ) when the kernel config is readable.
    pub config_hz: Option<u32>,
    /// Whether the kernel is tickless on idle CPUs (CONFIG_NO_HZ_IDLE / FULL).
    pub nohz: Option<String>,
    /// What idle CPUs do (cpuidle driver and states, halt polling, the CPU latency QoS
    /// in force): it decides how long waking a sleeper takes. `None` in results written
    /// before it was recorded.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub idle: Option<Idle>,
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn uname() -> (String, String, String, String, String) {
    // SAFETY: a zeroed utsname is valid for uname to fill.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::uname(&mut u) } != 0 {
        let unknown = || "unknown".to_string();
        return (unknown(), unknown(), unknown(), unknown(), unknown());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (
        field(&u.nodename),
        field(&u.sysname),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    )
}

/// Parses the first `model name` (x86) or `Model`/`CPU part` (ARM) line of /proc/cpuinfo.
pub fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| matches!(k.trim(), "model name" | "Model" | "cpu model"))
        .map(|(_, v)| v.trim().to_string())
}

/// Reads the preemption model from the kernel version string (`uname -v`).
pub fn preemption_from_version(version: &str) -> Option<String> {
    let v = version.to_ascii_uppercase();
    if v.contains("PREEMPT_RT") {
        Some("rt".into())
    } else if v.contains("PREEMPT_DYNAMIC") {
        Some("dynamic".into())
    } else if v.contains("PREEMPT") {
        Some("full".into())
    } else {
        None
    }
}

/// The hypervisor this machine runs under, as [`Fingerprint::virtualization`] names it
/// (`kvm`, `vmware`, …, or `unknown hypervisor` when the CPU says it is virtual but no
/// source says whose); `None` on bare metal (or where nothing tells). What interrupts a
/// spinning thread is then the host, else the hardware (the lab's `NoiseSource`).
pub fn hypervisor() -> Option<String> {
    virtualization(&fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

fn virtualization(cpuinfo: &str) -> Option<String> {
    super::hypervisor::name(&super::hypervisor::Signs::read(cpuinfo))
}

fn kernel_config(release: &str) -> Option<String> {
    fs::read_to_string(format!("/boot/config-{release}")).ok()
}

fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::trim)
    })
}

impl Fingerprint {
    /// Reads the fingerprint of this machine.
    pub fn collect() -> Self {
        let (hostname, os, kernel_release, kernel_version, arch) = uname();
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let config = kernel_config(&kernel_release);
        let preemption = read_trim("/sys/kernel/debug/sched/preempt")
            .map(|s| {
                // Format: "none voluntary (full) lazy" — the chosen one is in parentheses.
                s.split_whitespace()
                    .find(|w| w.starts_with('('))
                    .map(|w| format!("dynamic ({})", w.trim_matches(|c| c == '(' || c == ')')))
                    .unwrap_or(s)
            })
            .or_else(|| preemption_from_version(&kernel_version));
        Fingerprint {
            hostname,
            os,
            cpu_model: cpu_model_from_cpuinfo(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get()),
            clocksource: read_trim(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            timer_slack_ns: timer_slack_ns(),
            virtualization: virtualization(&cpuinfo),
            preemption,
            cpufreq_governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            config_hz: config
                .as_deref()
                .and_then(|c| config_value(c, "CONFIG_HZ"))
                .and_then(|v| v.parse().ok()),
            nohz: config.as_deref().and_then(|c| {
                if config_value(c, "CONFIG_NO_HZ_FULL") == Some("y") {
                    Some("full".into())
                } else if config_value(c, "CONFIG_NO_HZ_IDLE") == Some("y") {
                    Some("idle".into())
                } else if config_value(c, "CONFIG_HZ_PERIODIC") == Some("y") {
                    Some("periodic".into())
                } else {
                    None
                }
            }),
            idle: Some(Idle::collect()),
            kernel_release,
            kernel_version,
            arch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_model() {
        let info = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpu_model_from_cpuinfo(info).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(cpu_model_from_cpuinfo("nothing here"), None);
    }

    #[test]
    fn parses_preemption() {
        assert_eq!(
            preemption_from_version("#1 SMP PREEMPT_DYNAMIC Debian").as_deref(),
            Some("dynamic")
        );
        assert_eq!(
            preemption_from_version("#1 SMP PREEMPT_RT").as_deref(),
            Some("rt")
        );
        assert_eq!(
            preemption_from_version("#1 SMP PREEMPT Tue").as_deref(),
            Some("full")
        );
        assert_eq!(preemption_from_version("#1 SMP"), None);
    }

    #[test]
    fn config_values() {
        let c =
            "CONFIG_HZ_250=y\nCONFIG_HZ=250\n# CONFIG_NO_HZ_FULL is not set\nCONFIG_NO_HZ_IDLE=y\n";
        assert_eq!(config_value(c, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(c, "CONFIG_NO_HZ_IDLE"), Some("y"));
        assert_eq!(config_value(c, "CONFIG_NO_HZ_FULL"), None);
    }

    #[test]
    fn collects_something() {
        let f = Fingerprint::collect();
        assert!(f.cpu_count >= 1);
        assert!(!f.kernel_release.is_empty());
    }
}
