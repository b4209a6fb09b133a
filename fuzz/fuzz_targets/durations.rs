//! The duration, list and count parsers never panic, and what they accept is consistent:
//! a parsed duration is at most a day and reads back the same when written in ns, the
//! positive and timer-slack variants accept exactly the non-zero durations, and a list
//! parses element by element.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab_cli::parse::{
    MAX_DURATION_NS, count, duration_ns, list, positive_duration_ns, slack_ns,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = duration_ns(text);
    if let Ok(ns) = parsed {
        assert!(ns <= MAX_DURATION_NS);
        assert_eq!(duration_ns(&format!("{ns}ns")), Ok(ns));
    }
    let nonzero = matches!(parsed, Ok(ns) if ns > 0);
    assert_eq!(positive_duration_ns("duration", text).is_ok(), nonzero);
    assert_eq!(slack_ns(text).is_ok(), nonzero);
    if let Ok(v) = list("durations", text, duration_ns) {
        assert_eq!(v.len(), text.split(',').count());
    }
    if let Ok(n) = count("count", text, 1, 1_000_000_000) {
        assert!((1..=1_000_000_000).contains(&n));
    }
});
