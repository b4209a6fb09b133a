//! Builds the BPF recorder (`bpf/recorder.bpf.c`, which needs no header) with clang
//! when the `bpf` feature is on. Without clang the crate builds without the recorder
//! (`cfg(sleeplab_bpf)` unset) and says so: `explain --bpf` then says it has none. A
//! source clang rejects fails the build.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(sleeplab_bpf)");
    println!("cargo::rerun-if-changed=bpf/recorder.bpf.c");
    println!("cargo::rerun-if-env-changed=CLANG");
    if env::var_os("CARGO_FEATURE_BPF").is_none() {
        return;
    }
    let out =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("recorder.bpf.o");
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
        .arg("bpf/recorder.bpf.c")
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => println!("cargo::rustc-cfg=sleeplab_bpf"),
        Ok(s) => panic!("{clang} could not build bpf/recorder.bpf.c ({s})"),
        Err(e) => println!(
            "cargo::warning=no BPF recorder in this build: {clang} did not run ({e}); \
             `explain --bpf` will say so (install clang to have it)"
        ),
    }
}
