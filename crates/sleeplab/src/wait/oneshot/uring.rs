//! io_uring timeouts (the cargo feature `io-uring`, on the `io-uring` crate): an
//! `IORING_OP_TIMEOUT` request, relative or absolute (`IORING_TIMEOUT_ABS`), submitted
//! and waited for with `io_uring_enter(GETEVENTS)`; and `io_uring_enter`'s own timeout
//! (`IORING_ENTER_EXT_ARG`, Linux 5.11+) on a ring nobody completes anything on.
//!
//! Each waiter owns a ring of 4 entries made once. A signal that interrupts
//! `io_uring_enter` does not end the wait: the timeout request stays queued and the
//! enter is made again; the `EXT_ARG` wait is made again with the time left.
//! Without the feature the rows are listed as unavailable, with the reason.

use super::{Family, Mechanism, OneShot};
#[cfg(not(feature = "io-uring"))]
use crate::wait::WaitError;

pub(super) const TIMEOUT: Mechanism = Mechanism::ns(
    "io-uring-timeout",
    Family::Uring,
    "io_uring IORING_OP_TIMEOUT, relative timespec, submitted and waited for with io_uring_enter",
    || imp::new(imp::Kind::Relative),
)
.without_slack();

pub(super) const TIMEOUT_ABS: Mechanism = Mechanism::ns(
    "io-uring-timeout-abs",
    Family::Uring,
    "io_uring IORING_OP_TIMEOUT with IORING_TIMEOUT_ABS to now + d (CLOCK_MONOTONIC)",
    || imp::new(imp::Kind::Absolute),
)
.without_slack()
.variant_of("io-uring-timeout");

pub(super) const WAIT: Mechanism = Mechanism::ns(
    "io-uring-wait",
    Family::Uring,
    "io_uring_enter(GETEVENTS | EXT_ARG) for one completion nobody posts, timespec timeout (Linux 5.11+)",
    || imp::new(imp::Kind::EnterTimeout),
).without_slack();

#[cfg(not(feature = "io-uring"))]
mod imp {
    use super::*;

    pub(super) enum Kind {
        Relative,
        Absolute,
        EnterTimeout,
    }

    pub(super) fn new(_: Kind) -> Result<Box<dyn OneShot>, WaitError> {
        Err(crate::wait::not_built("io-uring"))
    }
}

#[cfg(feature = "io-uring")]
mod imp {
    use super::*;
    use crate::clock::monotonic_ns;
    use crate::wait::WaitError;
    use crate::wait::oneshot::remaining;
    use io_uring::{IoUring, opcode, types};
    use std::io;

    /// Which wait the ring makes.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(super) enum Kind {
        Relative,
        Absolute,
        EnterTimeout,
    }

    struct Uring {
        ring: IoUring,
        kind: Kind,
    }

    fn timespec(ns: u64) -> types::Timespec {
        types::Timespec::new()
            .sec(ns / 1_000_000_000)
            .nsec((ns % 1_000_000_000) as u32)
    }

    pub(super) fn new(kind: Kind) -> Result<Box<dyn OneShot>, WaitError> {
        let ring = IoUring::new(4).map_err(|source| WaitError::Unsupported {
            call: "io_uring_setup",
            source,
        })?;
        if kind == Kind::EnterTimeout && !ring.params().is_feature_ext_arg() {
            return Err(WaitError::Unavailable(
                "io_uring_enter: no IORING_FEAT_EXT_ARG (Linux < 5.11)".into(),
            ));
        }
        let mut u = Uring { ring, kind };
        // One wait of 1 ns proves the request works here (a kernel may refuse the opcode).
        u.try_wait(1).map_err(|source| WaitError::Unsupported {
            call: "io_uring_enter",
            source,
        })?;
        Ok(Box::new(u))
    }

    impl Uring {
        /// Submits a timeout request and waits for its completion (again after EINTR).
        fn timeout(&mut self, ts: &types::Timespec, flags: types::TimeoutFlags) -> io::Result<()> {
            let entry = opcode::Timeout::new(ts).flags(flags).build().user_data(1);
            // SAFETY: the timespec outlives the request: it completes before we return.
            unsafe { self.ring.submission().push(&entry) }
                .map_err(|_| io::Error::other("submission queue full"))?;
            loop {
                match self.ring.submit_and_wait(1) {
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
                if let Some(cqe) = self.ring.completion().next() {
                    return match -cqe.result() {
                        0 | libc::ETIME => Ok(()),
                        code => Err(io::Error::from_raw_os_error(code)),
                    };
                }
            }
        }

        /// `io_uring_enter` waiting for one completion with a timeout, again with the
        /// time left after EINTR.
        fn enter_timeout(&mut self, ns: u64) -> io::Result<()> {
            let deadline = monotonic_ns().saturating_add(ns);
            let mut left = ns;
            loop {
                let ts = timespec(left);
                let args = types::SubmitArgs::new().timespec(&ts);
                match self.ring.submitter().submit_with_args(1, &args) {
                    Err(e) if e.raw_os_error() == Some(libc::ETIME) => return Ok(()),
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => return Err(e),
                    // Nothing completes on this ring; a return without ETIME is spurious.
                    Ok(_) => {}
                }
                match remaining(deadline) {
                    Some(l) => left = l,
                    None => return Ok(()),
                }
            }
        }

        fn try_wait(&mut self, ns: u64) -> io::Result<()> {
            match self.kind {
                Kind::Relative => self.timeout(&timespec(ns), types::TimeoutFlags::empty()),
                Kind::Absolute => {
                    let deadline = monotonic_ns().saturating_add(ns);
                    self.timeout(&timespec(deadline), types::TimeoutFlags::ABS)
                }
                Kind::EnterTimeout => self.enter_timeout(ns),
            }
        }
    }

    impl OneShot for Uring {
        fn wait(&mut self, ns: u64) {
            // Checked when built; a later failure (out of memory) ends this wait.
            let _ = self.try_wait(ns);
        }
    }
}
