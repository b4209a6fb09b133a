//! What the tests that trace the kernel share: whether it can be traced here, and how to
//! run a program as `nobody` (who cannot).

/// Whether the kernel can be traced here; fails under CI when not (CI runs as root on a
/// kernel that has the tracepoints).
pub fn traceable() -> bool {
    match sleeplab_account::available() {
        Ok(()) => true,
        Err(e) if std::env::var_os("CI").is_some() => panic!("tracing unavailable under CI: {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// The lock that runs a test binary's traced tests one at a time: the others' load
/// would change what is measured (a busy CPU's other timers expire a sleeper's timer
/// inside its slack).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`traceable`], holding the binary's tracing lock while the guard lives.
pub fn traceable_alone() -> Option<std::sync::MutexGuard<'static, ()>> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    traceable().then_some(guard)
}

/// The command prefix that runs a program as `nobody`.
pub const AS_NOBODY: [&str; 5] = [
    "setpriv",
    "--reuid=nobody",
    "--regid=nogroup",
    "--clear-groups",
    "--",
];

/// A directory `nobody` may write in, when this test can become `nobody` (as root);
/// under CI (root) a run that cannot fails, as any missing dependency does.
pub fn nobodys_dir() -> Option<tempfile::TempDir> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        super::missing_dependency("root (to become nobody)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    Some(dir)
}
