//! What an idle CPU does, recorded with every result because it decides how long a
//! sleeper's wake-up takes: a CPU in a deep idle state (or a halted vCPU) must first
//! wake up itself.
//!
//! Read from sysfs, best effort: the cpuidle driver and governor, CPU 0's idle states
//! (exit latency and target residency), guest halt polling (the `haltpoll` cpuidle
//! driver's window), the kvm module's halt polling (`halt_poll_ns`: what this machine
//! does for the guests it runs, if it runs any; the module is loaded in many guests too,
//! so it does not make a machine a host), and the CPU latency QoS target
//! (`/dev/cpu_dma_latency`: below its default, some process holds CPUs out of deep idle
//! states).
//!
//! [`IdleCounters`] reads what the idle states did: every CPU's time and entries per
//! state, from which the time spent *polling* (the `POLL` state, where an idle CPU
//! executes instructions: `/proc/stat` books it as idle, yet it costs a core, on a
//! virtual machine its host's) follows as a difference of two readings.

use std::fs;
use std::path::Path;

/// The CPU latency QoS value when nobody asks for less (2000 s, in µs).
pub const QOS_DEFAULT_US: i64 = 2_000_000_000;

/// One cpuidle state of CPU 0.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdleState {
    /// Its name (`POLL`, `C1`, `C6`, `HLT`…).
    pub name: String,
    /// Time to leave it, µs.
    pub exit_latency_us: u64,
    /// The shortest idle period it is worth entering for, µs.
    pub target_residency_us: u64,
    /// Whether it is disabled.
    pub disabled: bool,
}

/// What idle CPUs do here.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Idle {
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`, `none`: without one the
    /// idle loop executes HLT, which in a VM hands the vCPU back to the hypervisor).
    pub driver: Option<String>,
    /// The cpuidle governor (`menu`, `teo`, `ladder`, `haltpoll`).
    pub governor: Option<String>,
    /// CPU 0's idle states, shallowest first.
    pub states: Vec<IdleState>,
    /// Guest halt polling window, ns (`haltpoll` module; in effect with its driver).
    pub guest_halt_poll_ns: Option<u64>,
    /// The kvm module's halt polling, ns: how long this machine polls a halted vCPU of
    /// the guests it runs, if it runs any, before putting it to sleep. Present wherever
    /// the module is loaded, in a guest too: it says nothing of this machine's own host.
    pub host_halt_poll_ns: Option<u64>,
    /// The CPU latency QoS target in force, µs (`/dev/cpu_dma_latency`; readable by root
    /// only). Below [`QOS_DEFAULT_US`], a process holds CPUs out of deep idle states.
    pub cpu_latency_qos_us: Option<i64>,
}

impl Idle {
    /// Reads it from `/sys` and `/dev`.
    pub fn collect() -> Self {
        Self::from_root(Path::new("/"))
    }

    /// Reads it below `root` (a directory laid out like `/`, for tests).
    pub fn from_root(root: &Path) -> Self {
        let read = |p: &str| {
            fs::read_to_string(root.join(p))
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let num = |p: &str| read(p).and_then(|s| s.parse::<u64>().ok());
        let mut states = Vec::new();
        for i in 0..16 {
            let dir = format!("sys/devices/system/cpu/cpu0/cpuidle/state{i}");
            let Some(name) = read(&format!("{dir}/name")) else {
                break;
            };
            states.push(IdleState {
                name,
                exit_latency_us: num(&format!("{dir}/latency")).unwrap_or(0),
                target_residency_us: num(&format!("{dir}/residency")).unwrap_or(0),
                disabled: num(&format!("{dir}/disable")).is_some_and(|d| d != 0),
            });
        }
        let qos = fs::read(root.join("dev/cpu_dma_latency"))
            .ok()
            .and_then(|b| parse_qos(&b));
        Self {
            driver: read("sys/devices/system/cpu/cpuidle/current_driver"),
            governor: read("sys/devices/system/cpu/cpuidle/current_governor_ro")
                .or_else(|| read("sys/devices/system/cpu/cpuidle/current_governor")),
            states,
            guest_halt_poll_ns: num("sys/module/haltpoll/parameters/guest_halt_poll_ns"),
            host_halt_poll_ns: num("sys/module/kvm/parameters/halt_poll_ns"),
            cpu_latency_qos_us: qos,
        }
    }

    /// Whether a process holds the CPU latency QoS below its default.
    pub fn latency_held(&self) -> bool {
        self.cpu_latency_qos_us.is_some_and(|v| v < QOS_DEFAULT_US)
    }

    /// The enabled states that cost something to leave (not the polling state).
    pub fn usable_states(&self) -> impl Iterator<Item = &IdleState> {
        self.states
            .iter()
            .filter(|s| !s.disabled && s.exit_latency_us > 0 && s.name != "POLL")
    }
}

/// The cpuidle state in which an idle CPU polls (executes a loop) instead of halting:
/// the kernel names it `POLL` (`drivers/cpuidle/poll_state.c`).
pub const POLL_STATE: &str = "POLL";

/// One idle state of one CPU, as its counters stood when read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateCounter {
    /// The CPU.
    pub cpu: usize,
    /// The state's index (`state<N>`).
    pub state: usize,
    /// Its name (`POLL`, `C1`, `haltpoll`…).
    pub name: String,
    /// Time the CPU spent in it since boot, µs (`time`).
    pub time_us: u64,
    /// How many times the CPU entered it (`usage`).
    pub usage: u64,
}

/// What every CPU's idle states did since boot: `/sys/devices/system/cpu/cpu*/cpuidle/
/// state*/{name,time,usage}`. Empty without cpuidle (no driver: the idle loop halts,
/// and no state polls).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdleCounters {
    /// One per CPU and state, by CPU then state.
    pub states: Vec<StateCounter>,
}

impl IdleCounters {
    /// Reads them from `/sys`.
    pub fn read() -> Self {
        Self::from_root(Path::new("/"))
    }

    /// Reads them below `root` (a directory laid out like `/`, for tests).
    pub fn from_root(root: &Path) -> Self {
        let read = |p: &Path| {
            fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let index = |name: &str, prefix: &str| name.strip_prefix(prefix)?.parse::<usize>().ok();
        let mut states = Vec::new();
        let cpus = fs::read_dir(root.join("sys/devices/system/cpu"))
            .into_iter()
            .flatten()
            .flatten();
        for cpu in cpus {
            let Some(c) = index(&cpu.file_name().to_string_lossy(), "cpu") else {
                continue;
            };
            let dirs = fs::read_dir(cpu.path().join("cpuidle"))
                .into_iter()
                .flatten()
                .flatten();
            for dir in dirs {
                let Some(k) = index(&dir.file_name().to_string_lossy(), "state") else {
                    continue;
                };
                let d = dir.path();
                let Some(name) = read(&d.join("name")) else {
                    continue;
                };
                let num = |f: &str| read(&d.join(f)).and_then(|v| v.parse().ok()).unwrap_or(0);
                states.push(StateCounter {
                    cpu: c,
                    state: k,
                    name,
                    time_us: num("time"),
                    usage: num("usage"),
                });
            }
        }
        states.sort_by_key(|s| (s.cpu, s.state));
        Self { states }
    }

    /// The time all CPUs spent polling since `before` (an earlier reading), µs: the
    /// growth of every [`POLL_STATE`]'s `time`, per CPU and state (a CPU missing from
    /// either reading counts nothing; a counter that went back, nothing).
    pub fn polling_us_since(&self, before: &Self) -> u64 {
        self.states
            .iter()
            .filter(|s| s.name == POLL_STATE)
            .filter_map(|s| {
                let b = before
                    .states
                    .iter()
                    .find(|b| b.cpu == s.cpu && b.state == s.state && b.name == s.name)?;
                Some(s.time_us.saturating_sub(b.time_us))
            })
            .sum()
    }

    /// Whether any CPU has a polling state (where none has, no idle time is spent
    /// polling, whatever a setting does).
    pub fn has_polling(&self) -> bool {
        self.states.iter().any(|s| s.name == POLL_STATE)
    }
}

/// The QoS value as `/dev/cpu_dma_latency` reads: a native-endian 32-bit integer.
/// (Reading opens a request at the default value, which constrains nothing.)
pub fn parse_qos(bytes: &[u8]) -> Option<i64> {
    let b: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    Some(i64::from(i32::from_ne_bytes(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_sysfs_tree() {
        let dir = tempfile_dir();
        let root = dir.as_path();
        let w = |p: &str, v: &str| {
            let p = root.join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, v).unwrap();
        };
        w(
            "sys/devices/system/cpu/cpuidle/current_driver",
            "intel_idle\n",
        );
        w(
            "sys/devices/system/cpu/cpuidle/current_governor_ro",
            "menu\n",
        );
        for (i, (n, l, r, d)) in [("POLL", 0, 0, 0), ("C1", 2, 2, 0), ("C6", 170, 600, 1)]
            .into_iter()
            .enumerate()
        {
            let s = format!("sys/devices/system/cpu/cpu0/cpuidle/state{i}");
            w(&format!("{s}/name"), n);
            w(&format!("{s}/latency"), &l.to_string());
            w(&format!("{s}/residency"), &r.to_string());
            w(&format!("{s}/disable"), &d.to_string());
        }
        w("sys/module/kvm/parameters/halt_poll_ns", "200000\n");
        fs::write(root.join("dev/cpu_dma_latency"), 0i32.to_ne_bytes()).unwrap();
        let idle = Idle::from_root(root);
        assert_eq!(idle.driver.as_deref(), Some("intel_idle"));
        assert_eq!(idle.governor.as_deref(), Some("menu"));
        assert_eq!(idle.states.len(), 3);
        assert!(idle.states[2].disabled);
        // POLL costs nothing to leave and C6 is disabled: only C1 is usable.
        let usable: Vec<&str> = idle.usable_states().map(|s| s.name.as_str()).collect();
        assert_eq!(usable, ["C1"]);
        assert_eq!(idle.host_halt_poll_ns, Some(200_000));
        assert_eq!(idle.guest_halt_poll_ns, None);
        assert!(idle.latency_held());
        let _ = fs::remove_dir_all(root);
    }

    #[test]
    fn qos_is_a_binary_i32() {
        assert_eq!(
            parse_qos(&2_000_000_000i32.to_ne_bytes()),
            Some(QOS_DEFAULT_US)
        );
        assert_eq!(parse_qos(&20i32.to_ne_bytes()), Some(20));
        assert_eq!(parse_qos(&[1]), None);
        let missing = Idle::from_root(Path::new("/nonexistent-sleeplab-root"));
        assert_eq!(missing, Idle::default());
        assert!(!missing.latency_held());
    }

    /// A fixture tree of two CPUs with a haltpoll-like driver (POLL, then a halt state)
    /// and counters `(poll µs, halt µs)` per CPU.
    fn counters_tree(root: &Path, per_cpu: [(u64, u64); 2]) {
        for (cpu, (poll, halt)) in per_cpu.into_iter().enumerate() {
            for (k, (name, time, usage)) in [("POLL", poll, 10), ("haltpoll", halt, 20)]
                .into_iter()
                .enumerate()
            {
                let d = root.join(format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}"));
                fs::create_dir_all(&d).unwrap();
                fs::write(d.join("name"), format!("{name}\n")).unwrap();
                fs::write(d.join("time"), format!("{time}\n")).unwrap();
                fs::write(d.join("usage"), format!("{usage}\n")).unwrap();
            }
        }
        // Not a CPU, and a CPU without cpuidle: both skipped.
        fs::create_dir_all(root.join("sys/devices/system/cpu/cpufreq")).unwrap();
        fs::create_dir_all(root.join("sys/devices/system/cpu/cpu9")).unwrap();
    }

    #[test]
    fn polling_time_is_the_growth_of_the_poll_states_alone() {
        let dir = tempfile_dir().join("counters");
        counters_tree(&dir, [(1_000, 50_000), (2_000, 70_000)]);
        let before = IdleCounters::from_root(&dir);
        assert_eq!(before.states.len(), 4);
        assert_eq!(
            before.states[0],
            StateCounter {
                cpu: 0,
                state: 0,
                name: "POLL".into(),
                time_us: 1_000,
                usage: 10
            }
        );
        assert!(before.has_polling());
        // CPU 0 polled 400 ms and halted 100 ms; CPU 1 polled 250 ms and halted 900 ms:
        // 650 ms of polling, the halts not counted.
        counters_tree(&dir, [(401_000, 150_000), (252_000, 970_000)]);
        let after = IdleCounters::from_root(&dir);
        assert_eq!(after.polling_us_since(&before), 650_000);
        assert_eq!(before.polling_us_since(&before), 0);
        // A counter that went back (a CPU replugged) counts nothing; a CPU missing from
        // the earlier reading counts nothing.
        assert_eq!(before.polling_us_since(&after), 0);
        let mut one = before.clone();
        one.states.retain(|s| s.cpu == 1);
        assert_eq!(after.polling_us_since(&one), 250_000);
        // No cpuidle at all: nothing polls.
        let none = IdleCounters::from_root(Path::new("/nonexistent-sleeplab-root"));
        assert!(none.states.is_empty() && !none.has_polling());
        assert_eq!(none.polling_us_since(&none), 0);
        let _ = fs::remove_dir_all(dir.parent().unwrap());
    }

    /// A fresh directory under the system temp dir (the library has no tempfile dep).
    fn tempfile_dir() -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!(
            "sleeplab-idle-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(p.join("dev")).unwrap();
        p
    }
}
