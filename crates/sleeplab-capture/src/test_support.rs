//! What the crate's tests on the live kernel share.

use crate::TraceError;

/// The recording `opened`, or `None` where it is unavailable (not root, no tracefs, no
/// BTF), said on stderr; under CI, which runs as root on kernels that have them, an
/// unavailable recording fails the test.
pub(crate) fn started<T>(opened: Result<T, TraceError>) -> Option<T> {
    match opened {
        Ok(s) => Some(s),
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("tracing unavailable under CI: {e}"),
    }
}
