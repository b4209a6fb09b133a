//! Return codes (negative errno values), the words of the last error, and the guard that
//! keeps panics on the Rust side.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use sleeplab_core::precise::OptionError;

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

/// What `sleeplab_strerror(SLEEPLAB_EPERM)` says, and how `sleeplab_last_error` begins
/// after a call from a thread that does not own the object (the Python binding raises
/// the same words, with its own type's name).
pub(crate) const WRONG_THREAD: &CStr = c"the object belongs to another thread";

/// An error a call can return: one of the negative codes above, with the words
/// `sleeplab_last_error` gives it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Error {
    /// `SLEEPLAB_EPERM`, with the C type of the object.
    #[error(
        "{rule}: a {0} is used only from the thread that created it",
        rule = WRONG_THREAD.to_string_lossy()
    )]
    WrongThread(&'static str),
    /// `SLEEPLAB_EFAULT`.
    #[error("a required pointer was NULL")]
    Null,
    /// `SLEEPLAB_EINVAL` for an option the library's option table refused: its words are
    /// the table's, the ones Python's `ValueError` says for the same value.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// `SLEEPLAB_EINVAL` for another bad argument: the message names it and its value.
    #[error("{0}")]
    Invalid(String),
    /// `SLEEPLAB_ERANGE`: the message names the value.
    #[error("{0}")]
    Range(String),
    /// `SLEEPLAB_ENODATA`: the message says what is missing.
    #[error("{0}")]
    NoData(&'static str),
}

impl Error {
    /// The C return code.
    pub(crate) fn code(&self) -> c_int {
        match self {
            Error::WrongThread(_) => SLEEPLAB_EPERM,
            Error::Null => SLEEPLAB_EFAULT,
            Error::Option(_) | Error::Invalid(_) => SLEEPLAB_EINVAL,
            Error::Range(_) => SLEEPLAB_ERANGE,
            Error::NoData(_) => SLEEPLAB_ENODATA,
        }
    }
}

thread_local! {
    /// The words of this thread's last error (`sleeplab_last_error`).
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error. Never fails: during the thread's exit
/// (its thread-locals gone) the message is dropped.
fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let _ = LAST_ERROR.try_with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut() {
            *slot = text;
        }
    });
}

/// What a caught panic said, for the last error.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    format!("internal error: {what} (free the object: its state is unspecified)")
}

/// Runs `f`, mapping `Ok` to `SLEEPLAB_OK`, an error to its code and a panic to
/// `SLEEPLAB_EINTERNAL`: no unwinding ever crosses the C boundary. A failure's words
/// become this thread's last error.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SLEEPLAB_OK,
        Ok(Err(e)) => {
            set_last_error(&e.to_string());
            e.code()
        }
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            SLEEPLAB_EINTERNAL
        }
    }
}

/// Runs `f` for a value, `fallback` if it panics (the panic becomes the last error).
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        set_last_error(&panic_message(payload.as_ref()));
        fallback
    })
}

/// The words of the last error on the calling thread: the option, the bad value and
/// the accepted range for an option the library refused (the same words as the Python
/// binding's `ValueError` for the same value), or what else was wrong (the argument and
/// its value, the thread rule, what is missing). Set by every call that returns an
/// error code or NULL; calls that succeed leave it as it was; "" before the first error.
/// A NUL-terminated string owned by the library (never NULL), valid on this thread
/// until its next failing call.
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_last_error() -> *const c_char {
    let empty = c"".as_ptr();
    guard_value(empty, || {
        LAST_ERROR
            .try_with(|cell| cell.try_borrow().map_or(empty, |s| s.as_ptr()))
            .unwrap_or(empty)
    })
}

/// A static, NUL-terminated English description of a return code (never NULL; unknown
/// codes get "unknown error").
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_strerror(code: c_int) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        SLEEPLAB_OK => c"success",
        SLEEPLAB_EPERM => WRONG_THREAD,
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
pub(crate) mod tests {
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

    /// This thread's last error, as C reads it.
    pub(crate) fn last_error() -> String {
        // SAFETY: a NUL-terminated string valid until this thread's next failing call.
        unsafe { CStr::from_ptr(sleeplab_last_error()) }
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn guard_maps_results_and_catches_panics() {
        assert_eq!(guard(|| Ok(())), SLEEPLAB_OK);
        let bad = || Err(Error::Invalid("period_ns must be positive, got 0".into()));
        assert_eq!(guard(bad), SLEEPLAB_EINVAL);
        assert_eq!(last_error(), "period_ns must be positive, got 0");
        // A call that succeeds leaves the last error as it was.
        assert_eq!(guard(|| Ok(())), SLEEPLAB_OK);
        assert_eq!(last_error(), "period_ns must be positive, got 0");
        assert_eq!(guard(|| panic!("boom")), SLEEPLAB_EINTERNAL);
        assert_eq!(
            last_error(),
            "internal error: boom (free the object: its state is unspecified)"
        );
        assert_eq!(guard_value(7, || panic!("boom {}", 2)), 7);
        assert!(last_error().starts_with("internal error: boom 2 "));
        assert_eq!(guard_value(7, || 3), 3);
    }

    #[test]
    fn the_last_error_is_per_thread() {
        assert_eq!(guard(|| Err(Error::Null)), SLEEPLAB_EFAULT);
        assert_eq!(last_error(), "a required pointer was NULL");
        // A new thread has had no error yet: "".
        let other = std::thread::spawn(|| {
            let before = last_error();
            assert_eq!(guard(|| Err(Error::WrongThread("thing"))), SLEEPLAB_EPERM);
            (before, last_error())
        })
        .join()
        .unwrap();
        let words = "the object belongs to another thread: a thing is used only from the \
                     thread that created it";
        assert_eq!(other, (String::new(), words.into()));
        assert_eq!(last_error(), "a required pointer was NULL");
    }

    #[test]
    fn every_error_says_its_code_and_a_nul_is_not_the_end() {
        for (e, code) in [
            (Error::WrongThread("thing"), SLEEPLAB_EPERM),
            (Error::Null, SLEEPLAB_EFAULT),
            (Error::Invalid("x".into()), SLEEPLAB_EINVAL),
            (Error::Range("x".into()), SLEEPLAB_ERANGE),
            (Error::NoData("x"), SLEEPLAB_ENODATA),
        ] {
            assert_eq!(e.code(), code, "{e:?}");
            assert!(!e.to_string().is_empty(), "{e:?}");
        }
        // The thread rule's words begin with strerror's for SLEEPLAB_EPERM.
        // SAFETY: a static NUL-terminated string.
        let perm = unsafe { CStr::from_ptr(sleeplab_strerror(SLEEPLAB_EPERM)) };
        let perm = perm.to_str().unwrap();
        assert!(Error::WrongThread("thing").to_string().starts_with(perm));
        assert_eq!(
            guard(|| Err(Error::Invalid("a\0b".into()))),
            SLEEPLAB_EINVAL
        );
        assert_eq!(last_error(), "a b");
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
