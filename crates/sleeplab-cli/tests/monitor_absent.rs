//! A build without the `monitor` feature (`cargo test --no-default-features`): `sleeplab
//! monitor`, with or without the monitor's flags, is one line saying how to get it,
//! exit 2. (With the feature, tests/monitor_cli.rs runs the monitor itself.)
#![cfg(not(feature = "monitor"))]

mod common;

use common::exit2::assert_exit_2;

#[test]
fn monitor_says_how_to_get_it_with_exit_2() {
    for args in [
        &["monitor"][..],
        &["monitor", "--listen", "127.0.0.1:0", "--burst", "3"],
        &["-q", "monitor", "--interval=-1s"],
    ] {
        let out = common::sleeplab()
            .args(args)
            .output()
            .expect("sleeplab runs");
        assert_exit_2(&out, "--features monitor", &format!("{args:?}"));
    }
}
