//! The saved trace's round trip and its reader's refusals: every event kind and every
//! header value comes back as written, every byte the writer wrote is needed (each
//! shorter prefix is refused), and a refused file names what is wrong with it.

use super::*;
use proptest::prelude::*;

fn comm() -> impl Strategy<Value = Comm> {
    any::<[u8; 16]>().prop_map(Comm)
}

fn interrupt() -> impl Strategy<Value = Interrupt> {
    prop_oneof![
        Just(Interrupt::Device),
        Just(Interrupt::LocalTimer),
        Just(Interrupt::Vector),
        Just(Interrupt::Softirq),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        (any::<u64>(), any::<i64>(), any::<i64>()).prop_map(|(timer, soft_ns, hard_ns)| {
            Kind::TimerStart {
                timer,
                soft_ns,
                hard_ns,
            }
        }),
        (any::<u64>(), any::<i64>())
            .prop_map(|(timer, now_ns)| Kind::TimerExpire { timer, now_ns }),
        (any::<i32>(), any::<i32>()).prop_map(|(pid, target_cpu)| Kind::Waking { pid, target_cpu }),
        (any::<i32>(), any::<i64>(), comm(), any::<i32>(), comm()).prop_map(
            |(prev_pid, prev_state, prev_comm, next_pid, next_comm)| Kind::Switch {
                prev_pid,
                prev_state,
                prev_comm,
                next_pid,
                next_comm,
            }
        ),
        (any::<i64>(), any::<[u64; 6]>()).prop_map(|(id, args)| Kind::SysEnter { id, args }),
        (any::<i64>(), any::<i64>()).prop_map(|(id, ret)| Kind::SysExit { id, ret }),
        (interrupt(), any::<i32>()).prop_map(|(what, number)| Kind::IrqEntry { what, number }),
        (interrupt(), any::<i32>()).prop_map(|(what, number)| Kind::IrqExit { what, number }),
        any::<u32>().prop_map(|state| Kind::IdleEnter { state }),
        Just(Kind::IdleExit),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    (
        any::<u64>(),
        any::<u32>(),
        any::<i32>(),
        any::<u8>(),
        kind(),
    )
        .prop_map(|(time_ns, cpu, pid, flags, kind)| Event {
            time_ns,
            cpu,
            pid,
            flags,
            kind,
        })
}

fn trace() -> impl Strategy<Value = SavedTrace> {
    (
        ".{0,40}",
        prop::collection::vec(
            (any::<i32>(), any::<u64>(), any::<u64>()).prop_map(|(tid, from_ns, to_ns)| {
                SavedWindow {
                    tid,
                    from_ns,
                    to_ns,
                }
            }),
            0..4,
        ),
        prop::collection::vec(event(), 0..24),
        prop_oneof![
            Just(Events::All),
            Just(Events::NoSyscallExit),
            Just(Events::Program)
        ],
        any::<u64>(),
        prop_oneof![
            Just(InterruptsRecorded::None),
            Just(InterruptsRecorded::All),
            Just(InterruptsRecorded::ButLocalTimer)
        ],
    )
        .prop_map(
            |(meta, windows, events, recorded, lost, interrupts)| SavedTrace {
                meta,
                windows,
                captured: Captured {
                    events,
                    recorded,
                    lost,
                    interrupts,
                    stacks: Vec::new(),
                    unpaired_stacks: 0,
                    late_threads: 0,
                },
            },
        )
}

proptest! {
    #[test]
    fn what_is_written_reads_back_the_same(t in trace()) {
        let bytes = t.encode();
        // Every byte is the header's, the description's, the windows' or an event's.
        let events: usize = t.captured.events.iter().map(SavedTrace::event_len).sum();
        let fixed = 8 + 2 + 1 + 1 + 8 + 4 + 4 + 8;
        prop_assert_eq!(bytes.len(), fixed + t.meta.len() + 20 * t.windows.len() + events);
        prop_assert_eq!(SavedTrace::decode(&bytes), Ok(t));
    }

    #[test]
    fn every_shorter_prefix_is_refused(t in trace(), cut in any::<prop::sample::Index>()) {
        let bytes = t.encode();
        let n = cut.index(bytes.len());
        let err = SavedTrace::decode(&bytes[..n]).unwrap_err();
        if n < SAVED_MAGIC.len() {
            prop_assert_eq!(err, SavedTraceError::NotATrace);
        } else {
            prop_assert!(matches!(err, SavedTraceError::Truncated { .. }), "{:?}", err);
        }
    }

    #[test]
    fn any_bytes_read_as_a_trace_write_back_the_same(
        t in trace(), at in any::<prop::sample::Index>(), byte in any::<u8>()
    ) {
        // One byte changed: refused, or read as a trace whose encoding is those bytes.
        let mut bytes = t.encode();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Ok(read) = SavedTrace::decode(&bytes) {
            prop_assert_eq!(read.encode(), bytes);
        }
    }
}

fn one_event() -> Vec<u8> {
    SavedTrace {
        meta: "{}".into(),
        windows: vec![],
        captured: Captured {
            events: vec![Event {
                time_ns: 1,
                cpu: 0,
                pid: 7,
                flags: 0,
                kind: Kind::IdleExit,
            }],
            ..Captured::default()
        },
    }
    .encode()
}

#[test]
fn a_file_of_something_else_is_not_a_trace() {
    assert_eq!(
        SavedTrace::decode(b"{\"format\": \"sleeplab\"}"),
        Err(SavedTraceError::NotATrace)
    );
    assert_eq!(SavedTrace::decode(b""), Err(SavedTraceError::NotATrace));
}

#[test]
fn another_version_is_named() {
    let mut b = one_event();
    b[8..10].copy_from_slice(&2u16.to_le_bytes());
    let err = SavedTrace::decode(&b).unwrap_err();
    assert_eq!(err, SavedTraceError::UnknownVersion(2));
    assert_eq!(
        err.to_string(),
        "saved trace version 2; this build reads version 1"
    );
}

#[test]
fn an_unknown_event_kind_and_bad_flags_are_corrupt() {
    let mut b = one_event();
    let last = b.len() - 1;
    b[last] = 10;
    assert_eq!(
        SavedTrace::decode(&b),
        Err(SavedTraceError::Invalid {
            what: "an event's kind",
            value: 10
        })
    );
    let mut b = one_event();
    b[11] = 3;
    assert_eq!(
        SavedTrace::decode(&b),
        Err(SavedTraceError::Invalid {
            what: "the interrupts flag",
            value: 3
        })
    );
}

#[test]
fn the_interrupts_flag_says_whether_the_local_timer_was_recorded() {
    let flags: Vec<InterruptsRecorded> = (0u8..3)
        .map(|flag| {
            let mut b = one_event();
            b[11] = flag;
            SavedTrace::decode(&b).unwrap().captured.interrupts
        })
        .collect();
    use InterruptsRecorded as R;
    assert_eq!(flags, [R::None, R::All, R::ButLocalTimer]);
}

#[test]
fn bytes_after_the_last_event_are_corrupt() {
    let mut b = one_event();
    b.extend_from_slice(&[0, 0, 0]);
    assert_eq!(
        SavedTrace::decode(&b),
        Err(SavedTraceError::TrailingBytes(3))
    );
}

#[test]
fn a_huge_count_in_a_small_file_is_truncated_not_allocated() {
    let mut b = SavedTrace::default().encode();
    let n = b.len();
    b[n - 8..].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        SavedTrace::decode(&b),
        Err(SavedTraceError::Truncated { what: "an event" })
    );
}
