//! A timerfd as a tokio future, the way the `tokio-timerfd` crate does it: an absolute
//! CLOCK_MONOTONIC timerfd registered in tokio's reactor (`AsyncFd`), awaited until it
//! is readable, then read. The reactor's `epoll_wait` needs no timeout for it, so the
//! wake is the timerfd's hrtimer, not tokio's millisecond wheel.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Waits until `deadline_ns` (CLOCK_MONOTONIC); returns at once if it failed to make
/// the timer (the caller re-checks the clock, so it is never early).
pub async fn sleep_until(deadline_ns: u64) {
    let _ = wait(deadline_ns).await;
}

async fn wait(deadline_ns: u64) -> io::Result<()> {
    // SAFETY: timerfd_create has no memory preconditions; the fd is owned below.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (deadline_ns % 1_000_000_000).max(1) as libc::c_long,
        },
    };
    // SAFETY: valid fd and itimerspec; the old value is not wanted.
    let r = unsafe {
        libc::timerfd_settime(
            fd.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the OwnedFd moves into the AsyncFd and stays open, the same descriptor,
    // until the AsyncFd is dropped.
    let afd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    loop {
        let mut guard = afd.readable().await?;
        let mut expirations = 0u64;
        // SAFETY: reading 8 bytes into a u64 from a timerfd.
        let n = unsafe {
            libc::read(
                afd.as_raw_fd(),
                (&mut expirations as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        if n == 8 {
            return Ok(());
        }
        guard.clear_ready();
    }
}
