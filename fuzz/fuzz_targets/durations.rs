//! The duration grammar (the library's, which every surface reads) never panics and
//! agrees with itself: an accepted duration reads back the same from its own canonical
//! text and from `<ns>ns`; the CLI accepts exactly the library's durations of at most a
//! day, and its positive and timer-slack variants exactly the non-zero ones; a list
//! parses element by element; a count lies in its range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab::duration::{format_ns, parse_ns};
use sleeplab_cli::parse::{
    MAX_DURATION_NS, count, duration_ns, list, positive_duration_ns, slack_ns,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let library = parse_ns(text);
    if let Ok(ns) = library {
        assert_eq!(parse_ns(&format_ns(ns)), Ok(ns));
        assert_eq!(parse_ns(&format!("{ns}ns")), Ok(ns));
    }
    let parsed = duration_ns(text);
    assert_eq!(
        parsed.as_ref().ok(),
        library.as_ref().ok().filter(|&&ns| ns <= MAX_DURATION_NS)
    );
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
