//! The ring-buffer page reader and the record decoders never panic on any bytes (they
//! read layouts of kernel memory: a page of `trace_pipe_raw` and the records in it, by
//! the offsets the running kernel's formats give), and what they hand out lies inside
//! the page: every record is a slice of its data area, the summary counts every record
//! handed out, and a decoded event keeps the page's CPU and the record's timestamp.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab_capture::{Decoders, Format, PageLayout, Tracepoint, read_page};
use std::sync::OnceLock;

const HEADER_PAGE: &str = include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/header_page");
const FORMATS: [&str; 5] = [
    include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/hrtimer_start.format"),
    include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/hrtimer_expire_entry.format"),
    include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/sched_waking.format"),
    include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/sched_switch.format"),
    include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/sys_exit.format"),
];

/// The interrupts' layouts, read too: their records decode by the same rules.
const INTERRUPTS: [(Tracepoint, &str); 6] = [
    (Tracepoint::IrqHandlerEntry, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/irq_handler_entry.format")),
    (Tracepoint::IrqHandlerExit, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/irq_handler_exit.format")),
    (Tracepoint::SoftirqEntry, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/softirq_entry.format")),
    (Tracepoint::SoftirqExit, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/softirq_exit.format")),
    (Tracepoint::LocalTimerEntry, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/local_timer_entry.format")),
    (Tracepoint::LocalTimerExit, include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/local_timer_exit.format")),
];

/// The system calls' entries (recorded for a followed program), read too.
const SYS_ENTER: &str = include_str!("../../../crates/sleeplab-capture/testdata/linux-6.18/sys_enter.format");

fn setup() -> &'static (PageLayout, Decoders) {
    static ONCE: OnceLock<(PageLayout, Decoders)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let layout = PageLayout::parse(HEADER_PAGE).expect("the kernel's header_page");
        let formats: Vec<Format> = FORMATS
            .iter()
            .map(|t| Format::parse(t).expect("the kernel's format"))
            .collect();
        let interrupts: Vec<(Tracepoint, Format)> = INTERRUPTS
            .iter()
            .map(|(t, text)| (*t, Format::parse(text).expect("the kernel's format")))
            .collect();
        let enter = Format::parse(SYS_ENTER).expect("the kernel's format");
        let decoders = Decoders::from_formats(&formats)
            .and_then(|d| d.with_interrupts(&interrupts))
            .and_then(|d| d.with_sys_enter(&enter))
            .expect("the layouts");
        (layout, decoders)
    })
}

fuzz_target!(|data: &[u8]| {
    let (layout, decoders) = setup();
    let mut handed = 0usize;
    let range = data.as_ptr_range();
    let read = read_page(layout, data, |time_ns, record| {
        handed += 1;
        let r = record.as_ptr_range();
        assert!(range.start <= r.start && r.end <= range.end, "a record outside the page");
        if let Some(e) = decoders.decode_record(record, time_ns, 3) {
            assert_eq!((e.time_ns, e.cpu), (time_ns, 3));
        }
    });
    if let Ok(summary) = read {
        assert_eq!(summary.events, handed);
    }
    // A layout read from arbitrary text never panics either.
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = PageLayout::parse(text);
        let _ = Format::parse(text);
    }
});
