//! sleeplab's own C library and Python package, as built in the workspace, handed to the
//! C and Python probes: their `sleeplab_*` and `sleeplab.*` methods then run by default,
//! without `SLEEPLAB_LIB` or `PYTHONPATH` set by hand.
//!
//! * C: `$SLEEPLAB_LIB` when set (the probe reads it itself); else the first
//!   `libsleeplab.so` next to the running `sleeplab` (the same build), in the workspace's
//!   `target/release/`, in its `target/debug/` (`cargo build [--release] -p sleeplab-ffi`).
//! * Python: the `site-packages` of the workspace's venv (`$SLEEPLAB_VENV`, else
//!   `.venv`, as `scripts/python-env.sh` makes it) that holds the `sleeplab` package,
//!   appended to any `PYTHONPATH` already set (which so keeps precedence).
//!
//! Nothing found: nothing is set, and the probe says the methods are unavailable.

use sleeplab_results::RuntimeId;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable the C probe loads sleeplab's library from.
pub const LIB_ENV: &str = "SLEEPLAB_LIB";
/// The variable naming the Python package's venv (`scripts/python-env.sh` reads it too).
pub const VENV_ENV: &str = "SLEEPLAB_VENV";
/// The C library's file name.
const LIB_NAME: &str = "libsleeplab.so";

/// The environment variables that let `id`'s probe use sleeplab's workspace build:
/// `root` is the workspace (the parent of the probes directory), `exe_dir` the running
/// executable's directory, `var` reads the current environment.
pub fn probe_env(
    id: RuntimeId,
    root: &Path,
    exe_dir: Option<&Path>,
    var: impl Fn(&str) -> Option<OsString>,
) -> Vec<(OsString, OsString)> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    match id {
        RuntimeId::C if set(LIB_ENV).is_none() => c_library(root, exe_dir)
            .map(|lib| (LIB_ENV.into(), lib.into_os_string()))
            .into_iter()
            .collect(),
        RuntimeId::Python => {
            let venv = set(VENV_ENV).map_or_else(|| root.join(".venv"), PathBuf::from);
            let Some(site) = python_site(&venv) else {
                return vec![];
            };
            let mut paths: Vec<PathBuf> = set("PYTHONPATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default();
            paths.push(site);
            std::env::join_paths(paths)
                .map(|p| vec![("PYTHONPATH".into(), p)])
                .unwrap_or_default()
        }
        _ => vec![],
    }
}

/// The first `libsleeplab.so` next to the executable or in the workspace's build.
fn c_library(root: &Path, exe_dir: Option<&Path>) -> Option<PathBuf> {
    let target = root.join("target");
    exe_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain([target.join("release"), target.join("debug")])
        .map(|d| d.join(LIB_NAME))
        .find(|p| p.is_file())
}

/// The `lib/python3*/site-packages` of `venv` that holds the `sleeplab` package (the
/// newest Python's when there are several).
fn python_site(venv: &Path) -> Option<PathBuf> {
    let mut sites: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .filter(|s| s.join("sleeplab").join("__init__.py").is_file())
        .collect();
    // python3.9 < python3.10: order by the minor version, not the text.
    sites.sort_by_key(|s| {
        let name = s.parent().and_then(Path::file_name);
        let minor = name.and_then(|n| n.to_str()?.strip_prefix("python3.")?.parse::<u32>().ok());
        minor.unwrap_or(0)
    });
    sites.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    fn no_env(_: &str) -> Option<OsString> {
        None
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.into())
    }

    fn lib_of(env: &[(OsString, OsString)]) -> Option<&OsString> {
        env.iter().find(|(k, _)| k == LIB_ENV).map(|(_, v)| v)
    }

    #[test]
    fn the_c_library_is_found_next_to_the_executable_then_in_target() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let exe = root.join("bin");
        assert!(probe_env(RuntimeId::C, root, Some(&exe), no_env).is_empty());
        touch(&root.join("target/debug/libsleeplab.so"));
        let env = probe_env(RuntimeId::C, root, Some(&exe), no_env);
        assert_eq!(env.len(), 1);
        assert_eq!(
            lib_of(&env).unwrap(),
            &root.join("target/debug/libsleeplab.so")
        );
        touch(&root.join("target/release/libsleeplab.so"));
        let env = probe_env(RuntimeId::C, root, Some(&exe), no_env);
        assert_eq!(
            lib_of(&env).unwrap(),
            &root.join("target/release/libsleeplab.so")
        );
        touch(&exe.join("libsleeplab.so"));
        let env = probe_env(RuntimeId::C, root, Some(&exe), no_env);
        assert_eq!(lib_of(&env).unwrap(), &exe.join("libsleeplab.so"));
        // The user's SLEEPLAB_LIB wins: nothing is set over it (an empty one is unset).
        let user = env_of(&[(LIB_ENV, "/opt/libsleeplab.so")]);
        assert!(probe_env(RuntimeId::C, root, Some(&exe), user).is_empty());
        let empty = env_of(&[(LIB_ENV, "")]);
        assert_eq!(probe_env(RuntimeId::C, root, None, empty).len(), 1);
        // Other runtimes get nothing.
        assert!(probe_env(RuntimeId::Cpp, root, Some(&exe), no_env).is_empty());
    }

    #[test]
    fn the_python_package_is_found_in_the_workspace_venv() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        assert!(probe_env(RuntimeId::Python, root, None, no_env).is_empty());
        // A venv without the package is not used.
        std::fs::create_dir_all(root.join(".venv/lib/python3.11/site-packages")).unwrap();
        assert!(probe_env(RuntimeId::Python, root, None, no_env).is_empty());
        for minor in ["9", "11", "10"] {
            touch(&root.join(format!(
                ".venv/lib/python3.{minor}/site-packages/sleeplab/__init__.py"
            )));
        }
        let newest = root.join(".venv/lib/python3.11/site-packages");
        let env = probe_env(RuntimeId::Python, root, None, no_env);
        assert_eq!(env, vec![("PYTHONPATH".into(), newest.clone().into())]);
        // A PYTHONPATH already set keeps precedence; ours follows it.
        let user = env_of(&[("PYTHONPATH", "/a:/b")]);
        let env = probe_env(RuntimeId::Python, root, None, user);
        let want = format!("/a:/b:{}", newest.display());
        assert_eq!(env, vec![("PYTHONPATH".into(), want.into())]);
        // SLEEPLAB_VENV names another venv.
        let other = root.join("other");
        touch(&other.join("lib/python3.12/site-packages/sleeplab/__init__.py"));
        let user = env_of(&[(VENV_ENV, other.to_str().unwrap())]);
        let env = probe_env(RuntimeId::Python, root, None, user);
        let want = other.join("lib/python3.12/site-packages");
        assert_eq!(env, vec![("PYTHONPATH".into(), want.into())]);
    }
}
