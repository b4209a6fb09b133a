//! The events a wake's account needs, and their decoding from raw records by the
//! running kernel's layouts.

use crate::TraceError;
use crate::event::{Comm, Event, Kind};
use crate::format::{BytesField, Format, FormatError, IntField};
use crate::tracefs::Tracefs;

/// The tracepoints recorded, in the order they are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracepoint {
    /// `timer:hrtimer_start`.
    TimerStart,
    /// `timer:hrtimer_expire_entry`.
    TimerExpire,
    /// `sched:sched_waking`.
    Waking,
    /// `sched:sched_switch`.
    Switch,
    /// `raw_syscalls:sys_exit`.
    SysExit,
}

impl Tracepoint {
    /// Every tracepoint recorded.
    pub const ALL: [Tracepoint; 5] = [
        Tracepoint::TimerStart,
        Tracepoint::TimerExpire,
        Tracepoint::Waking,
        Tracepoint::Switch,
        Tracepoint::SysExit,
    ];

    /// Whether a session recording `events` records this tracepoint.
    pub fn recorded_by(self, events: crate::event::Events) -> bool {
        events.records_sys_exit() || self != Tracepoint::SysExit
    }

    /// `(system, event)` in tracefs.
    pub fn path(self) -> (&'static str, &'static str) {
        match self {
            Tracepoint::TimerStart => ("timer", "hrtimer_start"),
            Tracepoint::TimerExpire => ("timer", "hrtimer_expire_entry"),
            Tracepoint::Waking => ("sched", "sched_waking"),
            Tracepoint::Switch => ("sched", "sched_switch"),
            Tracepoint::SysExit => ("raw_syscalls", "sys_exit"),
        }
    }

    /// Whether the tracepoint is recorded only in the context of the followed threads
    /// (their pids set for the whole instance) rather than behind an event filter:
    /// `raw_syscalls:sys_exit` fires in the context of the thread whose system call
    /// returns, and a filter would make every system call on the machine build a
    /// record only to drop it (see `session.rs`).
    pub fn per_thread(self) -> bool {
        matches!(self, Tracepoint::SysExit)
    }

    /// Whether every occurrence is kept, whichever thread it concerns: the timer
    /// events, because the timer that wakes a thread may be re-armed in interrupt
    /// context by no thread of ours.
    pub fn of_every_thread(self) -> bool {
        matches!(self, Tracepoint::TimerStart | Tracepoint::TimerExpire)
    }
}

/// Whether `e` concerns one of the threads `tids`: a timer event (any), the wakeup of
/// one, any switch (who held a CPU while a followed thread waited for it is named from
/// the switches between other tasks), a system call's return in one. The scheduler's
/// events are kept by this test rather than by a filter in the kernel: on the kernels
/// here a filtered `sched_switch` loses, at random and for whole runs, the switches
/// of a thread onto a CPU that was idle (of 100 switches in, 0 to 102 recorded behind
/// `prev_pid == T || next_pid == T`; all of them unfiltered).
pub fn concerns(e: &Event, tids: &[i32]) -> bool {
    match e.kind {
        Kind::TimerStart { .. } | Kind::TimerExpire { .. } | Kind::Switch { .. } => true,
        Kind::Waking { pid, .. } => tids.contains(&pid),
        Kind::SysExit { .. } => tids.contains(&e.pid),
    }
}

/// Field readers every event has.
#[derive(Debug, Clone, Copy)]
struct Common {
    flags: IntField,
    pid: IntField,
}

/// How to read the fields of each recorded event.
#[derive(Debug, Clone)]
pub struct Decoders {
    ids: [u64; 5],
    common: [Common; 5],
    start: (IntField, IntField, IntField),
    expire: (IntField, IntField),
    waking: (IntField, IntField),
    switch: (IntField, IntField, BytesField, IntField, BytesField),
    sys_exit: IntField,
}

impl Decoders {
    /// Reads every recorded event's layout from `fs`.
    pub fn load(fs: &Tracefs) -> Result<Self, TraceError> {
        let formats: Vec<Format> = Tracepoint::ALL
            .iter()
            .map(|t| {
                let (sys, ev) = t.path();
                fs.format(sys, ev)
            })
            .collect::<Result<_, _>>()?;
        Self::from_formats(&formats).map_err(|e| TraceError::Format(e.to_string()))
    }

    /// The decoders of `formats`, given in [`Tracepoint::ALL`] order.
    pub fn from_formats(formats: &[Format]) -> Result<Self, FormatError> {
        let common = |f: &Format| -> Result<Common, FormatError> {
            Ok(Common {
                flags: f.int("common_flags")?,
                pid: f.int("common_pid")?,
            })
        };
        let [start, expire, waking, switch, sys_exit] = formats else {
            return Err(FormatError::NoField("the five tracepoints".into()));
        };
        Ok(Self {
            ids: [start.id, expire.id, waking.id, switch.id, sys_exit.id],
            common: [
                common(start)?,
                common(expire)?,
                common(waking)?,
                common(switch)?,
                common(sys_exit)?,
            ],
            start: (
                start.int("hrtimer")?,
                start.int("softexpires")?,
                start.int("expires")?,
            ),
            expire: (expire.int("hrtimer")?, expire.int("now")?),
            waking: (waking.int("pid")?, waking.int("target_cpu")?),
            switch: (
                switch.int("prev_pid")?,
                switch.int("prev_state")?,
                switch.bytes("prev_comm")?,
                switch.int("next_pid")?,
                switch.bytes("next_comm")?,
            ),
            sys_exit: sys_exit.int("id")?,
        })
    }

    /// The kernel's event id of `t` (a record's `common_type`).
    pub fn id(&self, t: Tracepoint) -> u64 {
        self.ids[t as usize]
    }

    /// The tracepoint whose id is `id`, if it is one recorded.
    pub fn tracepoint_of(&self, id: u64) -> Option<Tracepoint> {
        Tracepoint::ALL.into_iter().find(|&t| self.id(t) == id)
    }

    /// Decodes a record of any recorded tracepoint (told apart by its leading
    /// `common_type`, a u16); `None` for another event or a short record.
    pub fn decode_record(&self, raw: &[u8], time_ns: u64, cpu: u32) -> Option<Event> {
        let id = u16::from_le_bytes(raw.get(..2)?.try_into().ok()?);
        self.decode(self.tracepoint_of(u64::from(id))?, raw, time_ns, cpu)
    }

    /// Decodes the raw record of a `t` event recorded at `time_ns` on `cpu`; `None`
    /// when the record is too short for its layout.
    pub fn decode(&self, t: Tracepoint, raw: &[u8], time_ns: u64, cpu: u32) -> Option<Event> {
        let c = self.common[t as usize];
        let kind = match t {
            Tracepoint::TimerStart => Kind::TimerStart {
                timer: self.start.0.read(raw)? as u64,
                soft_ns: self.start.1.read(raw)?,
                hard_ns: self.start.2.read(raw)?,
            },
            Tracepoint::TimerExpire => Kind::TimerExpire {
                timer: self.expire.0.read(raw)? as u64,
                now_ns: self.expire.1.read(raw)?,
            },
            Tracepoint::Waking => Kind::Waking {
                pid: self.waking.0.read(raw)? as i32,
                target_cpu: self.waking.1.read(raw)? as i32,
            },
            Tracepoint::Switch => Kind::Switch {
                prev_pid: self.switch.0.read(raw)? as i32,
                prev_state: self.switch.1.read(raw)?,
                prev_comm: Comm(self.switch.2.read16(raw)?),
                next_pid: self.switch.3.read(raw)? as i32,
                next_comm: Comm(self.switch.4.read16(raw)?),
            },
            Tracepoint::SysExit => Kind::SysExit {
                id: self.sys_exit.read(raw)?,
            },
        };
        Some(Event {
            time_ns,
            cpu,
            pid: c.pid.read(raw)? as i32,
            flags: c.flags.read(raw)? as u8,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(id: u64, fields: &[(&str, usize, usize, bool)]) -> Format {
        let mut text = format!(
            "ID: {id}\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        );
        for (name, off, size, signed) in fields {
            text += &format!(
                "\tfield:x {name};\toffset:{off};\tsize:{size};\tsigned:{};\n",
                u8::from(*signed)
            );
        }
        Format::parse(&text).unwrap()
    }

    fn decoders() -> Decoders {
        Decoders::from_formats(&[
            format(
                1,
                &[
                    ("hrtimer", 8, 8, false),
                    ("expires", 24, 8, true),
                    ("softexpires", 32, 8, true),
                ],
            ),
            format(2, &[("hrtimer", 8, 8, false), ("now", 16, 8, true)]),
            format(3, &[("pid", 24, 4, true), ("target_cpu", 32, 4, true)]),
            format(
                4,
                &[
                    ("prev_comm[16]", 8, 16, false),
                    ("prev_pid", 24, 4, true),
                    ("prev_state", 32, 8, true),
                    ("next_comm[16]", 40, 16, false),
                    ("next_pid", 56, 4, true),
                ],
            ),
            format(5, &[("id", 8, 8, true)]),
        ])
        .unwrap()
    }

    #[test]
    fn decodes_each_event_by_its_layout() {
        let d = decoders();
        assert_eq!(d.id(Tracepoint::Switch), 4);
        let mut raw = vec![0u8; 64];
        raw[2] = 0x08;
        raw[4..8].copy_from_slice(&42i32.to_ne_bytes());
        raw[8..16].copy_from_slice(&0xdeadu64.to_ne_bytes());
        raw[24..32].copy_from_slice(&2_050i64.to_ne_bytes());
        raw[32..40].copy_from_slice(&2_000i64.to_ne_bytes());
        let e = d.decode(Tracepoint::TimerStart, &raw, 7, 1).unwrap();
        assert_eq!((e.time_ns, e.cpu, e.pid, e.in_hardirq()), (7, 1, 42, true));
        assert_eq!(
            e.kind,
            Kind::TimerStart {
                timer: 0xdead,
                soft_ns: 2_000,
                hard_ns: 2_050
            }
        );
        assert!(d.decode(Tracepoint::Switch, &raw[..40], 0, 0).is_none());
        let e = d.decode(Tracepoint::SysExit, &raw, 0, 0).unwrap();
        assert_eq!(e.kind, Kind::SysExit { id: 0xdead });
    }

    #[test]
    fn the_followed_threads_events_and_every_switch_are_kept() {
        let ev = |pid: i32, kind: Kind| Event {
            time_ns: 0,
            cpu: 0,
            pid,
            flags: 0,
            kind,
        };
        let switch = |prev_pid, next_pid| Kind::Switch {
            prev_pid,
            prev_state: 0,
            prev_comm: Comm::new("a"),
            next_pid,
            next_comm: Comm::new("b"),
        };
        let timer = Kind::TimerExpire {
            timer: 1,
            now_ns: 0,
        };
        assert!(concerns(&ev(9, timer), &[1]));
        let waking = |pid| Kind::Waking { pid, target_cpu: 0 };
        assert!(concerns(&ev(9, waking(1)), &[1, 2]));
        assert!(!concerns(&ev(1, waking(3)), &[1, 2]));
        assert!(concerns(&ev(0, switch(0, 3)), &[3]));
        assert!(concerns(&ev(3, switch(3, 0)), &[3]));
        // Every switch: the tasks that held a CPU are named from them.
        assert!(concerns(&ev(3, switch(4, 5)), &[3]));
        assert!(concerns(&ev(4, Kind::SysExit { id: 0 }), &[4]));
        assert!(!concerns(&ev(5, Kind::SysExit { id: 0 }), &[4]));
        let of = |f: fn(Tracepoint) -> bool| -> Vec<_> {
            Tracepoint::ALL.into_iter().filter(|&t| f(t)).collect()
        };
        assert_eq!(of(Tracepoint::per_thread), vec![Tracepoint::SysExit]);
        assert_eq!(
            of(Tracepoint::of_every_thread),
            vec![Tracepoint::TimerStart, Tracepoint::TimerExpire]
        );
    }

    /// The layouts of a real kernel (6.18, x86_64, read from its tracefs) load, and a
    /// record built by them decodes to what was put in.
    #[test]
    fn a_real_kernels_layouts_decode_its_records() {
        let texts = [
            include_str!("../testdata/linux-6.18/hrtimer_start.format"),
            include_str!("../testdata/linux-6.18/hrtimer_expire_entry.format"),
            include_str!("../testdata/linux-6.18/sched_waking.format"),
            include_str!("../testdata/linux-6.18/sched_switch.format"),
            include_str!("../testdata/linux-6.18/sys_exit.format"),
        ];
        let formats: Vec<Format> = texts.iter().map(|t| Format::parse(t).unwrap()).collect();
        let d = Decoders::from_formats(&formats).unwrap();
        assert_eq!(d.id(Tracepoint::Switch), 372);
        let mut raw = vec![0u8; 64];
        raw[..2].copy_from_slice(&372u16.to_le_bytes());
        raw[2] = 0x08;
        raw[4..8].copy_from_slice(&77i32.to_le_bytes());
        raw[8..11].copy_from_slice(b"cc1");
        raw[24..28].copy_from_slice(&77i32.to_le_bytes());
        raw[32..40].copy_from_slice(&1i64.to_le_bytes());
        raw[40..45].copy_from_slice(b"probe");
        raw[56..60].copy_from_slice(&9i32.to_le_bytes());
        let e = d.decode_record(&raw, 5, 1).unwrap();
        assert_eq!((e.time_ns, e.cpu, e.pid, e.flags), (5, 1, 77, 0x08));
        assert_eq!(
            e.kind,
            Kind::Switch {
                prev_pid: 77,
                prev_state: 1,
                prev_comm: Comm::new("cc1"),
                next_pid: 9,
                next_comm: Comm::new("probe"),
            }
        );
        // Too short for its layout: no event.
        assert_eq!(d.decode_record(&raw[..40], 5, 1), None);
    }
}
