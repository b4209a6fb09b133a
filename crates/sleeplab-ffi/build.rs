//! Gives `libsleeplab.so` its SONAME, `libsleeplab.so.<major>`: a program linked against
//! it records that name and loads any later library of the same major version, never one
//! of another. The major version is the ABI version: `include/sleeplab.h` states what
//! may change under one SONAME (functions and constants are only added) and what bumps
//! it (any change to an existing function, constant or struct layout; a test in
//! `src/types.rs` pins the struct layouts of this one). `scripts/install-c.sh` installs
//! the library as `libsleeplab.so.<version>` with the links `.so.<major>` and `.so`.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let soname = format!("libsleeplab.so.{major}");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    // For the tests, which check the built library and the installed one.
    println!("cargo:rustc-env=SLEEPLAB_SONAME={soname}");
    println!("cargo:rerun-if-changed=build.rs");
}
