//! `include/sleeplab.h` is what cbindgen generates from this crate today: the test fails
//! when the checked-in header is stale. `SLEEPLAB_BLESS=1` rewrites it instead.

use std::path::Path;

#[test]
fn checked_in_header_is_fresh() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../../include/sleeplab.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not parse the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();

    if std::env::var_os("SLEEPLAB_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        current == generated,
        "include/sleeplab.h is stale: run `SLEEPLAB_BLESS=1 cargo test --release -p sleeplab-ffi --test header` and commit it"
    );
}
