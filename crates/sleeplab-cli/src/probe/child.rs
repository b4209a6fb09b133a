//! What is set in the forked child before `exec`, so the probe process inherits it.

/// Settings the probe process inherits (applied between fork and exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChildSettings {
    /// `prctl(PR_SET_TIMERSLACK)` value, ns (0 resets to the default).
    pub timer_slack_ns: Option<u64>,
    /// CPU to pin the process to (`sched_setaffinity`).
    pub pin_cpu: Option<usize>,
}

/// Applies `settings` to the calling process (the forked child, before exec).
pub(super) fn apply_child_settings(settings: ChildSettings) -> std::io::Result<()> {
    if let Some(ns) = settings.timer_slack_ns {
        // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer argument only.
        let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    if let Some(cpu) = settings.pin_cpu {
        // SAFETY: cpu_set_t is plain data, zeroed then filled with CPU_SET within bounds
        // (the caller validated cpu against the machine's CPU count).
        let r = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
