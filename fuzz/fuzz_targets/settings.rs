//! The strategy settings (`precise:q=0.999,tol=50us`, read through the sleeper's option
//! table) never panic, and an accepted setting's canonical name reads back to the same
//! setting and prints the same; a `precise` setting's options pass the table's checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sleeplab::lab::StrategySetting;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(setting) = StrategySetting::parse(text) {
        let canonical = setting.to_string();
        let again = StrategySetting::parse(&canonical).expect("a canonical name parses");
        assert_eq!(again.to_string(), canonical);
        if let StrategySetting::Precise(builder) = setting {
            builder.validate().expect("an accepted precise setting is valid");
        }
    }
});
