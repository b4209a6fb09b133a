//! The catalogue read from laid-out `/proc` and `/sys` trees.

use super::*;

fn host(root: bool) -> Host {
    Host {
        root,
        rtprio: 0,
        nice_limit: 0,
        slices: false,
        cpus: 2,
        cpu: 0,
    }
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("{text}\n")).unwrap();
}

#[test]
fn without_root_only_process_settings_run_and_a_note_says_what_root_adds() {
    let dir = tempfile::tempdir().unwrap();
    let c = discover(dir.path(), host(false));
    assert!(c.settings.iter().all(|s| s.info.scope == Scope::Process));
    assert!(
        c.unavailable
            .iter()
            .any(|u| u.scope == Scope::System && u.reason.contains("root"))
    );
    assert!(c.unavailable.iter().any(|u| u.name == "sched-fifo"));
    assert_eq!(c.boot.len(), 4);
}

#[test]
fn system_settings_follow_the_files_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    put(
        r,
        "sys/devices/system/cpu/cpuidle/current_driver",
        "haltpoll",
    );
    for cpu in 0..2 {
        put(
            r,
            &format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state0/name"),
            "POLL",
        );
        put(
            r,
            &format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state0/disable"),
            "0",
        );
        put(
            r,
            &format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state1/name"),
            "haltpoll",
        );
        put(
            r,
            &format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state1/disable"),
            "0",
        );
    }
    put(r, "sys/module/haltpoll/parameters/guest_halt_poll_ns", "0");
    put(r, "proc/sys/kernel/timer_migration", "1");
    put(r, "proc/irq/24/smp_affinity_list", "0-1");
    put(r, "proc/cmdline", "quiet isolcpus=1");
    let c = discover(r, host(true));
    let names: Vec<&str> = c.settings.iter().map(|s| s.info.name.as_str()).collect();
    for n in [
        "cpuidle-off-poll",
        "cpuidle-off-haltpoll",
        "guest-halt-poll",
        "timer-migration",
        "irq-affinity",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let find = |n: &str| c.settings.iter().find(|s| s.info.name == n).unwrap();
    assert_eq!(
        find("timer-migration").change,
        Change::Writes(vec![(
            r.join("proc/sys/kernel/timer_migration"),
            "0".into()
        )])
    );
    assert_eq!(
        find("irq-affinity").change,
        Change::Writes(vec![(r.join("proc/irq/24/smp_affinity_list"), "1".into())])
    );
    match &find("cpuidle-off-haltpoll").change {
        Change::Writes(w) => assert_eq!(w.len(), 2),
        other => panic!("{other:?}"),
    }
    for n in ["cpufreq-performance", "sched-autogroup", "cpu-dma-latency"] {
        assert!(c.unavailable.iter().any(|u| u.name == n), "{n}");
    }
    assert_eq!(c.boot[0].now, "isolcpus=1");
    assert!(
        c.settings
            .iter()
            .all(|s| !s.info.how.is_empty() && !s.info.what.is_empty())
    );
}

#[test]
fn command_line_words_are_read() {
    assert_eq!(cmdline_value("a idle=poll b", "idle"), Some("poll"));
    assert_eq!(cmdline_value("a nohz_full b", "nohz_full"), Some(""));
    assert_eq!(cmdline_value("a idlex=1", "idle"), None);
}

/// The kvm module's halt polling is a host's setting: a guest that loads the module is
/// not called a host, and the setting is never offered as this machine's own.
#[test]
fn host_halt_polling_is_worded_as_the_hosts() {
    let guest = host_halt_polling(Some("kvm"), Some(200_000));
    assert!(guest.of_host);
    assert!(
        guest.now.starts_with("a guest (hypervisor: kvm)"),
        "{}",
        guest.now
    );
    assert!(guest.now.contains("acts only on guests this machine runs"));
    for b in [
        guest,
        host_halt_polling(Some("kvm"), None),
        host_halt_polling(None, Some(200_000)),
        host_halt_polling(None, None),
    ] {
        assert!(b.of_host && b.what.starts_with("the host's, not this machine's"));
        assert!(!b.now.contains("hosts KVM"), "{}", b.now);
        assert!(b.how.contains("the KVM host that runs this machine"));
    }
    // Among the boot settings, only it is the host's.
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "sys/module/kvm/parameters/halt_poll_ns",
        "200000",
    );
    let boot = boot_settings(dir.path(), Some("kvm"));
    let hosts: Vec<&str> = boot
        .iter()
        .filter(|b| b.of_host)
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(hosts, ["host halt polling"]);
    assert!(boot.iter().any(|b| b.now.contains("halt_poll_ns 200000")));
}
