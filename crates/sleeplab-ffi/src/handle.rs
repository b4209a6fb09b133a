//! The thread rule and pointer checks shared by every object handed to C.
//!
//! A sleeper or ticker belongs to the thread that created it: the timer slack it set is
//! that thread's, and its learned margin describes that thread's wakeups. Each object
//! records its creating thread and every call checks it, so a call from another thread
//! returns `SLEEPLAB_EPERM` instead of racing with the owner.

use crate::error::{Error, guard};
use std::ffi::c_int;

/// The thread an object belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadOwner(libc::pthread_t);

impl ThreadOwner {
    /// The calling thread.
    pub(crate) fn current() -> Self {
        // SAFETY: pthread_self has no preconditions.
        Self(unsafe { libc::pthread_self() })
    }

    /// `Ok` on the owner thread; otherwise the thread rule's error, naming `what`.
    fn check(self, what: &'static str) -> Result<(), Error> {
        // SAFETY: pthread_equal and pthread_self have no preconditions.
        if unsafe { libc::pthread_equal(self.0, libc::pthread_self()) } != 0 {
            Ok(())
        } else {
            Err(Error::WrongThread(what))
        }
    }
}

/// An object handed to C, owned by one thread.
pub(crate) trait Owned: Sized {
    /// Its C type, for errors (`sleeplab_sleeper`).
    const NAME: &'static str;
    /// The thread it belongs to.
    fn owner(&self) -> ThreadOwner;
}

/// Boxes `value` and hands the pointer to C through `out`.
///
/// # Safety
/// `out` is NULL or valid for a pointer write.
pub(crate) unsafe fn into_out<T>(value: T, out: *mut *mut T) -> Result<(), Error> {
    if out.is_null() {
        return Err(Error::Null);
    }
    // SAFETY: checked non-null; the caller guarantees it is writable.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    Ok(())
}

/// Runs `f` on the object behind `ptr` after the NULL and thread checks, behind the panic
/// guard.
///
/// # Safety
/// `ptr` is NULL or a live object from this library not used concurrently elsewhere.
pub(crate) unsafe fn with_mut<T: Owned>(
    ptr: *mut T,
    f: impl FnOnce(&mut T) -> Result<(), Error>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller passes NULL or a live object.
        let o = unsafe { ptr.as_mut() }.ok_or(Error::Null)?;
        o.owner().check(T::NAME)?;
        f(o)
    })
}

/// Runs `f` on the object behind `ptr` and writes its result to `*out`, after the NULL
/// and thread checks, behind the panic guard.
///
/// # Safety
/// `ptr` is NULL or a live object from this library; `out` is NULL or valid for a write.
pub(crate) unsafe fn read_into<T: Owned, R>(
    ptr: *const T,
    out: *mut R,
    f: impl FnOnce(&T) -> Result<R, Error>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller passes NULL or a live object.
        let o = unsafe { ptr.as_ref() }.ok_or(Error::Null)?;
        if out.is_null() {
            return Err(Error::Null);
        }
        o.owner().check(T::NAME)?;
        let value = f(o)?;
        // SAFETY: checked non-null; the caller guarantees it is writable.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// Frees an object (NULL is ignored). Any thread may free it, provided no call on it is
/// running.
///
/// # Safety
/// `ptr` is NULL or a pointer from this library not yet freed.
pub(crate) unsafe fn free<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: the caller passes a pointer from `Box::into_raw`, freed once.
        let _ = guard(|| {
            drop(unsafe { Box::from_raw(ptr) });
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{SLEEPLAB_EFAULT, SLEEPLAB_EPERM, SLEEPLAB_OK};

    struct Counter(ThreadOwner, u32);

    impl Owned for Counter {
        const NAME: &'static str = "counter";
        fn owner(&self) -> ThreadOwner {
            self.0
        }
    }

    fn bump(c: &mut Counter) -> Result<(), Error> {
        c.1 += 1;
        Ok(())
    }

    #[test]
    fn another_thread_is_refused() {
        let mut out = std::ptr::null_mut();
        // SAFETY: `out` is writable.
        unsafe { into_out(Counter(ThreadOwner::current(), 5), &mut out) }.unwrap();
        let addr = out as usize;
        let code = std::thread::spawn(move || {
            // SAFETY: the object is live; the owner thread is not using it meanwhile.
            unsafe { with_mut(addr as *mut Counter, bump) }
        })
        .join()
        .unwrap();
        assert_eq!(code, SLEEPLAB_EPERM);
        // SAFETY: the object is live and used from its owner.
        unsafe {
            assert_eq!(with_mut(out, bump), SLEEPLAB_OK);
            let mut read = 0u32;
            assert_eq!(read_into(out, &mut read, |c| Ok(c.1)), SLEEPLAB_OK);
            assert_eq!(read, 6);
            let no_out = std::ptr::null_mut::<u32>();
            assert_eq!(read_into(out, no_out, |c| Ok(c.1)), SLEEPLAB_EFAULT);
            free(out);
        }
    }

    #[test]
    fn null_pointers_are_refused() {
        // SAFETY: NULL is an allowed argument.
        unsafe {
            let null = std::ptr::null_mut::<Counter>();
            assert_eq!(with_mut(null, |_| Ok(())), SLEEPLAB_EFAULT);
            let c = Counter(ThreadOwner::current(), 1);
            assert_eq!(into_out(c, std::ptr::null_mut()), Err(Error::Null));
            free(null);
        }
    }
}
