//! The settings `tune` can try on this machine: which apply here, which do not (and
//! why), and the boot-time ones it only reports. Read from `/proc` and `/sys` below a
//! root directory (tests lay one out), with the library's readers for idle states, the
//! scheduler slice and the fingerprint.

use sleeplab::system::{Idle, sched_slice_ns};
use std::fs;
use std::path::{Path, PathBuf};

pub use sleeplab_results::{BootSetting, Change, Scope, Setting, SettingInfo, Unavailable};

/// Everything `tune` knows about this machine's settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalogue {
    /// The settings that apply here, per-process first.
    pub settings: Vec<Setting>,
    /// The ones that do not.
    pub unavailable: Vec<Unavailable>,
    /// The boot-time ones.
    pub boot: Vec<BootSetting>,
}

/// What the catalogue reads besides the files below its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// Running as root.
    pub root: bool,
    /// RLIMIT_RTPRIO's soft limit.
    pub rtprio: u64,
    /// RLIMIT_NICE's soft limit (20 − the lowest nice allowed).
    pub nice_limit: u64,
    /// The kernel has custom EEVDF slices.
    pub slices: bool,
    /// Online CPUs.
    pub cpus: usize,
    /// The CPU the waits are measured on.
    pub cpu: usize,
}

impl Host {
    /// This process on this machine, measuring on `cpu`.
    pub fn here(cpu: usize) -> Self {
        let limit = |r| {
            let mut l = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `l` is a valid rlimit to fill.
            if unsafe { libc::getrlimit(r, &mut l) } == 0 {
                l.rlim_cur
            } else {
                0
            }
        };
        Self {
            root: super::is_root(),
            rtprio: limit(libc::RLIMIT_RTPRIO),
            nice_limit: limit(libc::RLIMIT_NICE),
            slices: std::thread::spawn(sched_slice_ns).join().unwrap_or(0) > 0,
            cpus: online_cpus(Path::new("/")).len(),
            cpu,
        }
    }
}

/// The nice value the `nice` setting tries.
pub const NICE: i32 = -10;
/// The slice the `eevdf-slice` setting asks for, ns (the kernel's minimum).
pub const SLICE_NS: u64 = 100_000;
/// The base slice the `sched-base-slice` setting writes, ns.
pub const BASE_SLICE_NS: u64 = 100_000;
/// The haltpoll window the `guest-halt-poll` setting tries where it is 0, ns (the
/// module's default).
pub const HALT_POLL_NS: u64 = 200_000;

fn info(name: &str, scope: Scope, what: &str, how: impl Into<String>) -> SettingInfo {
    SettingInfo {
        name: name.into(),
        scope,
        what: what.into(),
        how: how.into(),
    }
}

/// The settings of this machine below `root` (`/` for the real one).
pub fn discover(root: &Path, host: Host) -> Catalogue {
    let mut c = Catalogue::default();
    process_settings(&mut c, host);
    if host.root {
        system_settings(&mut c, root, host);
    } else {
        c.unavailable.push(Unavailable {
            name: "system-wide settings".into(),
            scope: Scope::System,
            reason: "need root: run as root to also try /dev/cpu_dma_latency, idle states, \
                     halt polling, timer migration, scheduler sysctls, IRQ affinity and the \
                     CPU frequency governor"
                .into(),
        });
    }
    c.boot = boot_settings(root, sleeplab::system::hypervisor().as_deref());
    c
}

fn process_settings(c: &mut Catalogue, h: Host) {
    use sleeplab::system::Policy;
    let mut push = |i: SettingInfo, change: Change, why_not: Option<&str>| match why_not {
        None => c.settings.push(Setting { info: i, change }),
        Some(r) => c.unavailable.push(Unavailable {
            name: i.name,
            scope: Scope::Process,
            reason: r.into(),
        }),
    };
    push(
        info(
            "timer-slack",
            Scope::Process,
            "the waiting thread's timer slack to 1 ns: its timers fire when due, not up to 50 µs later",
            "prctl(PR_SET_TIMERSLACK, 1) in the waiting thread",
        ),
        Change::Slack,
        None,
    );
    let rt = (h.root || h.rtprio >= 1)
        .then_some(())
        .map_or(Some("needs root or RLIMIT_RTPRIO ≥ 1"), |_| None);
    push(
        info(
            "sched-fifo",
            Scope::Process,
            "SCHED_FIFO priority 1: the woken thread runs ahead of every normal thread",
            "chrt -f 1 <command> (or sched_setscheduler in the waiting thread)",
        ),
        Change::RealTime(Policy::Fifo),
        rt,
    );
    push(
        info(
            "sched-rr",
            Scope::Process,
            "SCHED_RR priority 1: as FIFO, with a time slice among equals",
            "chrt -r 1 <command>",
        ),
        Change::RealTime(Policy::Rr),
        rt,
    );
    let nice_ok = h.root || h.nice_limit >= (20 - NICE) as u64;
    push(
        info(
            "nice",
            Scope::Process,
            "nice -10: a larger share and an earlier deadline under EEVDF",
            "nice -n -10 <command> (or setpriority in the waiting thread)",
        ),
        Change::Nice(NICE),
        (!nice_ok).then_some("needs root or RLIMIT_NICE ≥ 30"),
    );
    push(
        info(
            "eevdf-slice",
            Scope::Process,
            "sched_attr.sched_runtime 100 µs: a shorter slice, so a wakeup preempts sooner",
            "sched_setattr(SCHED_OTHER, sched_runtime = 100000) in the waiting thread",
        ),
        Change::Slice(SLICE_NS),
        (!h.slices).then_some("this kernel has no custom EEVDF slices (6.12+)"),
    );
    let one_cpu = (h.cpus < 2).then_some("one CPU: nothing to pin away from");
    push(
        info(
            "pin",
            Scope::Process,
            "the waiting thread pinned to the measuring CPU: no migration on wakeup",
            format!("taskset -c {} <command>", h.cpu),
        ),
        Change::Pin,
        one_cpu,
    );
    push(
        info(
            "keep-awake",
            Scope::Process,
            "a SCHED_IDLE thread spins on the waiting CPU so it never idles (costs a whole CPU)",
            format!(
                "run a SCHED_IDLE busy loop pinned to CPU {0} (chrt -i 0 taskset -c {0} …) and pin the waiter there",
                h.cpu
            ),
        ),
        Change::Companion,
        None,
    );
    push(
        info(
            "mlockall",
            Scope::Process,
            "mlockall: no page faults in the waiting path",
            "mlockall(MCL_CURRENT | MCL_FUTURE) at start (needs RLIMIT_MEMLOCK or CAP_IPC_LOCK)",
        ),
        Change::Mlock,
        None,
    );
}

fn read(root: &Path, p: &str) -> Option<String> {
    fs::read_to_string(root.join(p))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The machine's online CPUs (`/sys/devices/system/cpu/online` under `root`), whatever
/// this process's affinity or cgroup allows; CPU 0 alone where the file cannot be read.
fn online_cpus(root: &Path) -> Vec<usize> {
    let list = read(root, "sys/devices/system/cpu/online")
        .map(|s| sleeplab_capture::parse_cpu_list(&s))
        .unwrap_or_default();
    if list.is_empty() {
        return vec![0];
    }
    list.into_iter().map(|c| c as usize).collect()
}

/// The machine's online CPUs under `root`, or `0..h.cpus` where `root` does not say
/// (a fake tree without the file).
fn cpus_of(root: &Path, h: &Host) -> Vec<usize> {
    match read(root, "sys/devices/system/cpu/online") {
        Some(_) => online_cpus(root),
        None => (0..h.cpus).collect(),
    }
}

/// `/sys/devices/system/cpu/cpu<i>/<rel>` of every online CPU that has it.
fn per_cpu(root: &Path, h: &Host, rel: &str) -> Vec<PathBuf> {
    cpus_of(root, h)
        .into_iter()
        .map(|i| root.join(format!("sys/devices/system/cpu/cpu{i}/{rel}")))
        .filter(|p| p.exists())
        .collect()
}

fn system_settings(c: &mut Catalogue, root: &Path, h: Host) {
    let mut none = |name: &str, reason: String| {
        c.unavailable.push(Unavailable {
            name: name.into(),
            scope: Scope::System,
            reason,
        })
    };
    let mut tried = Vec::new();
    let dma = root.join("dev/cpu_dma_latency");
    if dma.exists() {
        tried.push(Setting {
            info: info("cpu-dma-latency", Scope::System, "/dev/cpu_dma_latency held at 0: no CPU enters an idle state that takes time to leave",
                "a daemon holding /dev/cpu_dma_latency open with 0 written (e.g. tuned's latency-performance profile)"),
            change: Change::DmaLatency(dma),
        });
    } else {
        none("cpu-dma-latency", "no /dev/cpu_dma_latency".into());
    }
    let idle = Idle::from_root(root);
    let driver = idle.driver.clone().unwrap_or_else(|| "none".into());
    if idle.states.is_empty() {
        none(
            "cpuidle-off",
            format!("no cpuidle states (driver {driver}): the idle loop halts"),
        );
    }
    for (i, s) in idle.states.iter().enumerate() {
        let name = format!(
            "cpuidle-off-{}",
            s.name.to_lowercase().replace(char::is_whitespace, "-")
        );
        if s.disabled {
            none(&name, format!("idle state {} is already disabled", s.name));
            continue;
        }
        let files = per_cpu(root, &h, &format!("cpuidle/state{i}/disable"));
        tried.push(Setting {
            info: info(&name, Scope::System, &format!("idle state {} (exit latency {} µs) disabled on every CPU", s.name, s.exit_latency_us),
                format!("echo 1 | tee /sys/devices/system/cpu/cpu*/cpuidle/state{i}/disable (or cpupower idle-set -d {i})")),
            change: Change::Writes(files.into_iter().map(|p| (p, "1".into())).collect()),
        });
    }
    match (driver.as_str(), idle.guest_halt_poll_ns) {
        ("haltpoll", Some(now)) => {
            let to = if now == 0 { HALT_POLL_NS } else { 0 };
            tried.push(Setting {
                info: info("guest-halt-poll", Scope::System, &format!("haltpoll's guest_halt_poll_ns from {now} to {to} ns: how long an idle vCPU polls before it halts"),
                    format!("haltpoll.guest_halt_poll_ns={to} on the kernel command line, or echo {to} > /sys/module/haltpoll/parameters/guest_halt_poll_ns")),
                change: Change::Writes(vec![(root.join("sys/module/haltpoll/parameters/guest_halt_poll_ns"), to.to_string())]),
            });
        }
        _ => none(
            "guest-halt-poll",
            format!("the cpuidle driver is {driver}, not haltpoll"),
        ),
    }
    let mut sysctl =
        |name: &str, file: &str, what: &str, to: &dyn Fn(&str) -> Option<String>| match read(
            root,
            &format!("proc/sys/kernel/{file}"),
        )
        .and_then(|now| to(&now).map(|t| (now, t)))
        {
            Some((now, t)) => tried.push(Setting {
                info: info(
                    name,
                    Scope::System,
                    &format!("{what} ({file} {now} → {t})"),
                    format!("sysctl -w kernel.{file}={t} (persist in /etc/sysctl.d/)"),
                ),
                change: Change::Writes(vec![(root.join(format!("proc/sys/kernel/{file}")), t)]),
            }),
            None => none(name, format!("no kernel.{file} here")),
        };
    let flip = |now: &str| Some(if now == "0" { "1" } else { "0" }.to_string());
    sysctl(
        "timer-migration",
        "timer_migration",
        "timers stay on the CPU that armed them, or may move to a busy one",
        &flip,
    );
    sysctl(
        "sched-autogroup",
        "sched_autogroup_enabled",
        "scheduler autogroups per session: fairness between groups, not threads",
        &flip,
    );
    let base = root.join("sys/kernel/debug/sched/base_slice_ns");
    if let Some(now) = read(root, "sys/kernel/debug/sched/base_slice_ns") {
        tried.push(Setting {
            info: info(
                "sched-base-slice",
                Scope::System,
                &format!("EEVDF's base slice of every thread from {now} to {BASE_SLICE_NS} ns"),
                format!(
                    "echo {BASE_SLICE_NS} > /sys/kernel/debug/sched/base_slice_ns at boot (debugfs)"
                ),
            ),
            change: Change::Writes(vec![(base, BASE_SLICE_NS.to_string())]),
        });
    } else {
        none(
            "sched-base-slice",
            "no /sys/kernel/debug/sched/base_slice_ns (debugfs not mounted, or an older kernel)"
                .into(),
        );
    }
    let others: Vec<String> = cpus_of(root, &h)
        .into_iter()
        .filter(|&i| i != h.cpu)
        .map(|i| i.to_string())
        .collect();
    let irqs: Vec<(PathBuf, String)> = fs::read_dir(root.join("proc/irq"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .map(|e| e.path().join("smp_affinity_list"))
        .filter(|p| p.exists())
        .map(|p| (p, others.join(",")))
        .collect();
    if others.is_empty() || irqs.is_empty() {
        none(
            "irq-affinity",
            if others.is_empty() {
                "one CPU: nowhere to move interrupts".into()
            } else {
                "no /proc/irq/*/smp_affinity_list".into()
            },
        );
    } else {
        tried.push(Setting {
            info: info("irq-affinity", Scope::System, &format!("{} device interrupts moved off CPU {} (the waiting thread pinned there)", irqs.len(), h.cpu),
                format!("echo {} | tee /proc/irq/*/smp_affinity_list (and stop irqbalance, or set IRQBALANCE_BANNED_CPULIST={})", others.join(","), h.cpu)),
            change: Change::Writes(irqs),
        });
    }
    let governors = per_cpu(root, &h, "cpufreq/scaling_governor");
    let available = read(
        root,
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors",
    )
    .unwrap_or_default();
    let now = read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    match now {
        None => none(
            "cpufreq-performance",
            "no CPU frequency driver (cpufreq) here".into(),
        ),
        Some(g) if g == "performance" => none(
            "cpufreq-performance",
            "the governor is performance already".into(),
        ),
        Some(_) if !available.split_whitespace().any(|g| g == "performance") => none(
            "cpufreq-performance",
            format!("no performance governor (available: {available})"),
        ),
        Some(g) => tried.push(Setting {
            info: info(
                "cpufreq-performance",
                Scope::System,
                &format!(
                    "the CPU frequency governor from {g} to performance: no ramp-up after idle"
                ),
                "cpupower frequency-set -g performance",
            ),
            change: Change::Writes(
                governors
                    .into_iter()
                    .map(|p| (p, "performance".into()))
                    .collect(),
            ),
        }),
    }
    c.settings.extend(tried);
}

/// `word` on the kernel command line: its value, `""` when bare, `None` when absent.
fn cmdline_value<'a>(cmdline: &'a str, word: &str) -> Option<&'a str> {
    cmdline.split_whitespace().find_map(|t| {
        if t == word {
            Some("")
        } else {
            t.strip_prefix(word)?.strip_prefix('=')
        }
    })
}

/// What a host's halt polling is to this machine: `guest_of`, the hypervisor this machine
/// runs under (`None` on bare metal), and `kvm_ns`, the kvm module's `halt_poll_ns` here
/// (present wherever the module is loaded, guests included). A host's setting, never
/// this machine's: it acts on the vCPUs of a host's guests.
pub fn host_halt_polling(guest_of: Option<&str>, kvm_ns: Option<u64>) -> BootSetting {
    let now = match (guest_of, kvm_ns) {
        (Some(h), Some(ns)) => format!(
            "a guest (hypervisor: {h}): its host's halt polling is not visible here (the kvm module loaded here, halt_poll_ns {ns}, acts only on guests this machine runs, if any)"
        ),
        (Some(h), None) => {
            format!("a guest (hypervisor: {h}): its host's halt polling is not visible here")
        }
        (None, Some(ns)) => format!(
            "not a guest: nothing polls for this machine's wakeups; the kvm module is loaded here (halt_poll_ns {ns}), which acts only on guests this machine runs, if any"
        ),
        (None, None) => "not a guest, and no kvm module here: nothing to set".into(),
    };
    BootSetting {
        name: "host halt polling".into(),
        of_host: true,
        what: "the host's, not this machine's: a hypervisor polls a halted vCPU of its guests before descheduling it, so that vCPU's wakeup is quick".into(),
        now,
        how: "on the KVM host that runs this machine: echo 200000 > /sys/module/kvm/parameters/halt_poll_ns there (or kvm.halt_poll_ns= at its boot)".into(),
    }
}

fn boot_settings(root: &Path, guest_of: Option<&str>) -> Vec<BootSetting> {
    let cmdline = read(root, "proc/cmdline").unwrap_or_default();
    let shown = |word: &str, sys: Option<String>| match (
        cmdline_value(&cmdline, word),
        sys.filter(|s| !s.is_empty()),
    ) {
        (Some(v), _) if !v.is_empty() => format!("{word}={v}"),
        (_, Some(s)) => format!("CPUs {s}"),
        _ => "not set".into(),
    };
    let idle = Idle::from_root(root);
    vec![
        BootSetting {
            name: "isolcpus".into(),
            of_host: false,
            what: "keeps the scheduler's other tasks off the listed CPUs".into(),
            now: shown("isolcpus", read(root, "sys/devices/system/cpu/isolated")),
            how: "add isolcpus=<cpu> to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub) and reboot; run the waiter there".into(),
        },
        BootSetting {
            name: "nohz_full".into(),
            of_host: false,
            what: "no scheduler tick on the listed CPUs while one task runs there".into(),
            now: shown("nohz_full", read(root, "sys/devices/system/cpu/nohz_full")),
            how: "add nohz_full=<cpu> rcu_nocbs=<cpu> to the kernel command line and reboot".into(),
        },
        BootSetting {
            name: "idle=poll".into(),
            of_host: false,
            what: "idle CPUs spin instead of halting: the fastest wakeups, every idle CPU at 100 %".into(),
            now: match cmdline_value(&cmdline, "idle") {
                Some(v) => format!("idle={v}"),
                None => format!("not set (cpuidle driver {})", idle.driver.as_deref().unwrap_or("none")),
            },
            how: "add idle=poll to the kernel command line and reboot (keep-awake tries the same on one CPU)".into(),
        },
        host_halt_polling(guest_of, idle.host_halt_poll_ns),
    ]
}

#[cfg(test)]
mod tests;
