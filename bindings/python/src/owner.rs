//! The thread rule of `PreciseSleeper` and `Ticker`, as the C ABI has it: an object
//! belongs to the thread that created it (the timer slack and scheduler slice it set are
//! that thread's, and its learned margin describes that thread's wakeups), and a call
//! from any other thread raises `RuntimeError` in the C library's words, whether or not
//! the owner is using it at that moment.

use std::sync::{Mutex, MutexGuard, TryLockError};
use std::thread::{self, ThreadId};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// What a call from another thread raises: the words of the C library's
/// `sleeplab_last_error` for the same call (`SLEEPLAB_EPERM`), with the Python type.
pub(crate) fn wrong_thread(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "the object belongs to another thread: a {what} is used only from the thread \
         that created it"
    ))
}

/// A value only the thread that created it may use. The lock is never contended (only
/// the owner gets past the thread check); it is held through a wait, during which the
/// GIL is released, so a signal handler that calls the object again during its own wait
/// is told so instead of racing with it.
#[derive(Debug)]
pub(crate) struct Owned<T> {
    owner: ThreadId,
    what: &'static str,
    value: Mutex<T>,
}

impl<T> Owned<T> {
    /// `value`, owned by the calling thread; `what` names it in errors.
    pub(crate) fn new(what: &'static str, value: T) -> Self {
        Self {
            owner: thread::current().id(),
            what,
            value: Mutex::new(value),
        }
    }

    /// The value, for its owner thread: `RuntimeError` from any other thread, or while
    /// the owner is inside a call on it (a signal handler during a wait).
    pub(crate) fn lock(&self) -> PyResult<MutexGuard<'_, T>> {
        if thread::current().id() != self.owner {
            return Err(wrong_thread(self.what));
        }
        match self.value.try_lock() {
            Ok(guard) => Ok(guard),
            // A panic inside a call became Python's PanicException; the state is whole
            // (every update is a plain store), so carry on with it.
            Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
                "this {} is already in a call (a signal handler called it during its own wait)",
                self.what
            ))),
        }
    }

    /// The value if no call holds it, from any thread: for `repr()` only.
    pub(crate) fn peek(&self) -> Option<MutexGuard<'_, T>> {
        match self.value.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}
