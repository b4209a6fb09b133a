//! Return codes (negative errno values) and the guard that keeps panics on the Rust side.

use std::ffi::{c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The return codes: 0, or a negative errno value. In C they are enumerators, so that
/// `-SLEEPLAB_EINVAL` is `EINVAL`.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnCode {
    /// Success.
    SLEEPLAB_OK = 0,
    /// The calling thread does not own the object (`-EPERM`): a sleeper or ticker
    /// belongs to the thread that created it.
    SLEEPLAB_EPERM = -1,
    /// A required pointer argument was NULL (`-EFAULT`).
    SLEEPLAB_EFAULT = -14,
    /// An argument had a bad value (`-EINVAL`): an unknown constant, a zero period, an
    /// option out of its documented range, NaN.
    SLEEPLAB_EINVAL = -22,
    /// The deadline `now + ns` does not fit in 64 bits of nanoseconds (`-ERANGE`).
    SLEEPLAB_ERANGE = -34,
    /// Nothing to report yet (`-ENODATA`), e.g. the last report of a sleeper that never
    /// slept.
    SLEEPLAB_ENODATA = -61,
    /// An internal error (a Rust panic, caught before it could cross into C;
    /// `-ENOTRECOVERABLE`). Free the object: its state is unspecified.
    SLEEPLAB_EINTERNAL = -131,
}

pub(crate) const SLEEPLAB_OK: c_int = ReturnCode::SLEEPLAB_OK as c_int;
pub(crate) const SLEEPLAB_EPERM: c_int = ReturnCode::SLEEPLAB_EPERM as c_int;
pub(crate) const SLEEPLAB_EFAULT: c_int = ReturnCode::SLEEPLAB_EFAULT as c_int;
pub(crate) const SLEEPLAB_EINVAL: c_int = ReturnCode::SLEEPLAB_EINVAL as c_int;
pub(crate) const SLEEPLAB_ERANGE: c_int = ReturnCode::SLEEPLAB_ERANGE as c_int;
pub(crate) const SLEEPLAB_ENODATA: c_int = ReturnCode::SLEEPLAB_ENODATA as c_int;
pub(crate) const SLEEPLAB_EINTERNAL: c_int = ReturnCode::SLEEPLAB_EINTERNAL as c_int;

/// An error a call can return: one of the negative codes above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Error {
    /// `SLEEPLAB_EPERM`.
    WrongThread,
    /// `SLEEPLAB_EFAULT`.
    Null,
    /// `SLEEPLAB_EINVAL`.
    Invalid,
    /// `SLEEPLAB_ERANGE`.
    Range,
    /// `SLEEPLAB_ENODATA`.
    NoData,
}

impl Error {
    /// The C return code.
    pub(crate) fn code(self) -> c_int {
        match self {
            Error::WrongThread => SLEEPLAB_EPERM,
            Error::Null => SLEEPLAB_EFAULT,
            Error::Invalid => SLEEPLAB_EINVAL,
            Error::Range => SLEEPLAB_ERANGE,
            Error::NoData => SLEEPLAB_ENODATA,
        }
    }
}

/// Runs `f`, mapping `Ok` to `SLEEPLAB_OK`, an error to its code and a panic to
/// `SLEEPLAB_EINTERNAL`: no unwinding ever crosses the C boundary.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SLEEPLAB_OK,
        Ok(Err(e)) => e.code(),
        Err(_) => SLEEPLAB_EINTERNAL,
    }
}

/// Runs `f` for a value, `fallback` if it panics.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// A static, NUL-terminated English description of a return code (never NULL; unknown
/// codes get "unknown error").
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_strerror(code: c_int) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        SLEEPLAB_OK => c"success",
        SLEEPLAB_EPERM => c"the object belongs to another thread",
        SLEEPLAB_EFAULT => c"a required pointer was NULL",
        SLEEPLAB_EINVAL => c"invalid argument",
        SLEEPLAB_ERANGE => c"deadline out of range",
        SLEEPLAB_ENODATA => c"no data yet",
        SLEEPLAB_EINTERNAL => c"internal error (free the object)",
        _ => c"unknown error",
    };
    s.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn codes_are_negative_errno_values() {
        assert_eq!(SLEEPLAB_EPERM, -libc::EPERM);
        assert_eq!(SLEEPLAB_EFAULT, -libc::EFAULT);
        assert_eq!(SLEEPLAB_EINVAL, -libc::EINVAL);
        assert_eq!(SLEEPLAB_ERANGE, -libc::ERANGE);
        assert_eq!(SLEEPLAB_ENODATA, -libc::ENODATA);
        assert_eq!(SLEEPLAB_EINTERNAL, -libc::ENOTRECOVERABLE);
    }

    #[test]
    fn guard_maps_results_and_catches_panics() {
        assert_eq!(guard(|| Ok(())), SLEEPLAB_OK);
        assert_eq!(guard(|| Err(Error::Invalid)), SLEEPLAB_EINVAL);
        assert_eq!(guard(|| panic!("boom")), SLEEPLAB_EINTERNAL);
        assert_eq!(guard_value(7, || panic!("boom")), 7);
        assert_eq!(guard_value(7, || 3), 3);
    }

    #[test]
    fn every_code_has_its_own_message() {
        let codes = [
            SLEEPLAB_OK,
            SLEEPLAB_EPERM,
            SLEEPLAB_EFAULT,
            SLEEPLAB_EINVAL,
            SLEEPLAB_ERANGE,
            SLEEPLAB_ENODATA,
            SLEEPLAB_EINTERNAL,
        ];
        let msgs: Vec<String> = codes
            .iter()
            .map(|&c| {
                // SAFETY: sleeplab_strerror returns a static NUL-terminated string.
                unsafe { CStr::from_ptr(sleeplab_strerror(c)) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        let mut unique = msgs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), codes.len(), "{msgs:?}");
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(sleeplab_strerror(-9999)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown error");
    }
}
