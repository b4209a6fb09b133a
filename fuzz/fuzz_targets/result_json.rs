//! The result loader never panics on any input, and whatever it accepts serializes
//! and loads again to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab_cli::model::parse_result;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(result) = parse_result(text, "fuzz") {
        let again = serde_json::to_string(&result).expect("a loaded result serializes");
        let back = parse_result(&again, "fuzz-again").expect("a serialized result loads");
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&result).unwrap());
    }
});
