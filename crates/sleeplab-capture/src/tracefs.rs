//! Where tracefs is, and what it says of an event: its id and the layout of its
//! records. Mounted at `/sys/kernel/tracing` when no tracefs is mounted anywhere (as
//! trace-cmd does); nothing outside our own instances (`instance.rs`) is ever
//! written.

use crate::TraceError;
use crate::format::Format;
use crate::ring::PageLayout;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The canonical mount point.
pub const MOUNT_POINT: &str = "/sys/kernel/tracing";

/// A mounted tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracefs {
    root: PathBuf,
}

impl Tracefs {
    /// The tracefs at `root` (tests; a directory laid out as tracefs is).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The mounted tracefs: the first tracefs in `/proc/self/mounts`, else the one
    /// under a mounted debugfs, else a new mount at [`MOUNT_POINT`].
    pub fn find_or_mount() -> Result<Self, TraceError> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        if let Some(root) = mount_point(&mounts, "tracefs") {
            return Ok(Self::at(root));
        }
        if let Some(debugfs) = mount_point(&mounts, "debugfs") {
            let under = Path::new(&debugfs).join("tracing");
            if under.join("events").is_dir() {
                return Ok(Self::at(under));
            }
        }
        mount_tracefs(MOUNT_POINT)?;
        Ok(Self::at(MOUNT_POINT))
    }

    /// Where it is.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The format of `system:event` (e.g. `sched`, `sched_switch`).
    pub fn format(&self, system: &str, event: &str) -> Result<Format, TraceError> {
        let path = self
            .root
            .join("events")
            .join(system)
            .join(event)
            .join("format");
        let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => TraceError::NoEvent(format!("{system}:{event}")),
            std::io::ErrorKind::PermissionDenied => TraceError::NotPermitted(format!(
                "cannot read {} (tracing needs root)",
                path.display()
            )),
            _ => TraceError::Io(format!("{}: {e}", path.display())),
        })?;
        Format::parse(&text).map_err(|e| TraceError::Format(format!("{system}:{event}: {e}")))
    }

    /// The layout of a ring buffer page's header (`events/header_page`).
    pub fn page_layout(&self) -> Result<PageLayout, TraceError> {
        let path = self.root.join("events/header_page");
        let text =
            read_in_one(&path).map_err(|e| TraceError::Io(format!("{}: {e}", path.display())))?;
        PageLayout::parse(&text).map_err(|e| TraceError::Format(e.to_string()))
    }

    /// How many bytes one read of a `trace_pipe_raw` hands out at most: a ring buffer
    /// page (`buffer_subbuf_size_kb` where the kernel lets it differ from the system's
    /// page size).
    pub fn page_size(&self) -> usize {
        let sub_kb = std::fs::read_to_string(self.root.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        sub_kb.map_or(page, |kb| (kb * 1024).max(page))
    }

    /// The top-level buffer's settings a tracer must never change, as text
    /// (`tracing_on`, `current_tracer`, `trace_clock`, `set_event`, and
    /// `options/record-cmd`, which an instance's creation turns off for a moment):
    /// tests compare them before and after a traced run.
    pub fn top_level_settings(&self) -> Vec<(String, String)> {
        [
            "tracing_on",
            "current_tracer",
            "trace_clock",
            "set_event",
            "options/record-cmd",
        ]
        .iter()
        .map(|f| {
            let v = std::fs::read_to_string(self.root.join(f)).unwrap_or_default();
            (f.to_string(), v)
        })
        .collect()
    }
}

/// A tracefs file read with one large read: `events/header_page` hands out only its
/// first read (`read_to_string` probes with 32 bytes first and then gets nothing
/// more, seen on 6.18).
fn read_in_one(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; 1 << 16];
    let n = std::fs::File::open(path)?.read(&mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The mount point of the first filesystem of type `fstype` in a mounts table.
fn mount_point(mounts: &str, fstype: &str) -> Option<String> {
    mounts.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        let (_dev, dir, ty) = (f.next()?, f.next()?, f.next()?);
        (ty == fstype).then(|| dir.replace("\\040", " "))
    })
}

fn mount_tracefs(at: &str) -> Result<(), TraceError> {
    let c = |s: &str| CString::new(s).expect("no NUL");
    let (src, dir, ty) = (c("nodev"), c(at), c("tracefs"));
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe { libc::mount(src.as_ptr(), dir.as_ptr(), ty.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    Err(match err.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => TraceError::NotPermitted(format!(
            "tracefs is not mounted and mounting it at {at} was refused (tracing needs root)"
        )),
        _ => TraceError::NoTracefs(format!(
            "tracefs is not mounted and mounting it at {at} failed: {err}"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mount_points_by_type() {
        let mounts = "sysfs /sys sysfs rw 0 0\n\
                      tracefs /sys/kernel/tracing tracefs rw 0 0\n\
                      debugfs /sys/kernel/debug debugfs rw 0 0\n";
        assert_eq!(
            mount_point(mounts, "tracefs").as_deref(),
            Some("/sys/kernel/tracing")
        );
        assert_eq!(
            mount_point(mounts, "debugfs").as_deref(),
            Some("/sys/kernel/debug")
        );
        assert_eq!(mount_point(mounts, "nfs"), None);
        assert_eq!(
            mount_point("x /a\\040b tracefs rw 0 0", "tracefs").as_deref(),
            Some("/a b")
        );
    }

    #[test]
    fn a_missing_event_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let fs = Tracefs::at(dir.path());
        assert_eq!(
            fs.format("sched", "nope").unwrap_err(),
            TraceError::NoEvent("sched:nope".into())
        );
        let ev = dir.path().join("events/sched/sched_waking");
        std::fs::create_dir_all(&ev).unwrap();
        std::fs::write(
            ev.join("format"),
            "ID: 9\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n",
        )
        .unwrap();
        assert_eq!(fs.format("sched", "sched_waking").unwrap().id, 9);
    }
}
