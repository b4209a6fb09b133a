//! The probe-output parser never panics on any bytes, and an accepted measurement is
//! internally consistent (the parser has already checked every count against `done`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab_cli::probe::protocol::{parse_list, parse_measurement, parse_output};

fuzz_target!(|data: &[u8]| {
    let _ = parse_output(data);
    let _ = parse_list(data);
    let _ = parse_measurement(data);
});
