//! The saved trace's reader never panics on any bytes (a file a user hands
//! `sleeplab explain --from`), and a file it accepts is exactly what the writer would
//! write for what it read: no byte is ignored or read two ways.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab_capture::SavedTrace;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = SavedTrace::decode(data) {
        assert_eq!(trace.encode(), data, "an accepted file encodes back to its bytes");
    }
});
