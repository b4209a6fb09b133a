//! The runtimes sleeplab has probes for: how to detect each, how to build its probe into
//! a cache, and how to launch it.
//!
//! Compiled probes are built into `$XDG_CACHE_HOME/sleeplab/probes` (or
//! `~/.cache/sleeplab/probes`; see `super::build`); the others run from source.
//!
//! The probes themselves are found in the repository's `probes/` directory: `$SLEEPLAB_PROBES`,
//! else next to the executable's ancestors (`target/release/sleeplab` → `probes/`), else
//! the source tree this binary was built from, else `./probes`.

use super::build::{self, BUILD_TIMEOUT, QUERY_TIMEOUT, TOOL_OUTPUT_CAP, cache_dir};
use super::child::ChildSettings;
use super::command::ProbeCommand;
use super::own_builds;
use super::runner::{self, Limits, Verdict};
pub use sleeplab_results::RuntimeId;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable naming the probes directory.
pub const PROBES_ENV: &str = "SLEEPLAB_PROBES";

/// JVM flags for the Java probe, as `probes/java/README.md` recommends: C1 only starts
/// fastest on JDK 17 (the serial collector would disable the CDS heap archive there).
const JAVA_FLAGS: [&str; 1] = ["-XX:TieredStopAtLevel=1"];

/// `JRUBY_OPTS` for JRuby, as `probes/ruby/README.md` recommends: no RubyGems, C1 only
/// (start-up drops from ~5 s to ~2 s of CPU; `--dev` does nothing on Debian's package).
const JRUBY_OPTS: &str = "--disable-gems -J-XX:TieredStopAtLevel=1";

/// Why the catalog cannot work at all.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// `$SLEEPLAB_PROBES` names something that is not a probes directory.
    #[error("{PROBES_ENV}={0} is not a directory of probes (expected e.g. {0}/c/probe.c)")]
    BadEnv(String),
    /// No probes directory anywhere.
    #[error(
        "cannot find the probes/ directory of the sleeplab repository (looked in: {0}); run sleeplab from the repository or set {PROBES_ENV}=/path/to/sleeplab/probes"
    )]
    NotFound(String),
}

/// A runtime ready to measure, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preparation {
    /// The probe can be launched with this command.
    Ready {
        /// How to launch the probe (the per-run arguments follow).
        command: ProbeCommand,
        /// How it was prepared (e.g. "built in 1.2 s", "cached build").
        note: String,
    },
    /// The runtime is not installed.
    Skipped {
        /// What is missing.
        reason: String,
        /// The command that installs it.
        install: String,
    },
    /// Installed, but the probe could not be prepared (missing source, build error).
    Failed {
        /// Why.
        reason: String,
    },
}

/// Where probes come from and where their builds go.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The repository's `probes/` directory.
    pub probes_dir: PathBuf,
    /// The build cache (`…/sleeplab/probes`).
    pub cache_dir: PathBuf,
}

impl Catalog {
    /// Finds the probes directory and the cache directory.
    pub fn locate() -> Result<Self, CatalogError> {
        Ok(Self {
            probes_dir: probes_dir()?,
            cache_dir: cache_dir(),
        })
    }

    /// The directory of one runtime's probe.
    pub fn probe_dir(&self, id: RuntimeId) -> PathBuf {
        self.probes_dir.join(id.probe_subdir())
    }

    /// Detects `id`, builds its probe if needed (or reuses the cached build), and says
    /// how to launch it.
    pub fn prepare(&self, id: RuntimeId) -> Preparation {
        let missing: Vec<&str> = id
            .tools()
            .iter()
            .copied()
            .filter(|t| which(t).is_none())
            .collect();
        if !missing.is_empty() {
            return Preparation::Skipped {
                reason: format!("{} not found on PATH", missing.join(" and ")),
                install: id.install_command().to_string(),
            };
        }
        let dir = self.probe_dir(id);
        let main = dir.join(id.main_source());
        if !main.is_file() {
            return Preparation::Failed {
                reason: format!("probe source {} not found", main.display()),
            };
        }
        match self.prepare_found(id, &dir, &main) {
            Ok((command, note)) => Preparation::Ready {
                command: self.with_own_builds(id, command),
                note,
            },
            Err(reason) => Preparation::Failed { reason },
        }
    }

    fn prepare_found(
        &self,
        id: RuntimeId,
        dir: &Path,
        main: &Path,
    ) -> Result<(ProbeCommand, String), String> {
        let script = |program: &str| {
            (
                ProbeCommand::new(program).with_args([main.as_os_str()]),
                "runs from source".to_string(),
            )
        };
        match id {
            RuntimeId::Python => {
                let (python, note) = real_python();
                Ok((
                    ProbeCommand::new(python).with_args([main.as_os_str()]),
                    note,
                ))
            }
            RuntimeId::Node => Ok(script("node")),
            RuntimeId::Ruby => Ok((
                ProbeCommand::new("ruby")
                    .with_args([OsString::from("--disable-gems"), main.into()]),
                "runs from source".into(),
            )),
            RuntimeId::Jruby => {
                let (c, note) = script("jruby");
                Ok((c.with_env("JRUBY_OPTS", JRUBY_OPTS), note))
            }
            RuntimeId::C
            | RuntimeId::Cpp
            | RuntimeId::Go
            | RuntimeId::Java
            | RuntimeId::Windows => {
                let (out, note) = build::build(&self.cache_dir, id, dir)?;
                let command = match id {
                    RuntimeId::Java => ProbeCommand::new("java")
                        .with_args(JAVA_FLAGS)
                        .with_args([OsString::from("-cp"), out.join("classes").into_os_string()])
                        .with_args(["Probe"]),
                    RuntimeId::Windows => ProbeCommand::new("wine")
                        .with_args([out.join("probe.exe")])
                        .with_env("WINEDEBUG", "-all")
                        .with_env("WINEPREFIX", self.wine_prefix()?),
                    _ => ProbeCommand::new(out.join("probe")),
                };
                Ok((command, note))
            }
        }
    }

    /// `command` with the environment that points `id`'s probe at sleeplab's own
    /// workspace build (see [`own_builds`]; the workspace is the probes directory's parent).
    fn with_own_builds(&self, id: RuntimeId, command: ProbeCommand) -> ProbeCommand {
        let root = self.probes_dir.parent().unwrap_or(&self.probes_dir);
        let exe = std::env::current_exe().ok();
        let exe_dir = exe.as_deref().and_then(Path::parent);
        own_builds::probe_env(id, root, exe_dir, |k| std::env::var_os(k))
            .into_iter()
            .fold(command, |c, (k, v)| c.with_env(k, v))
    }

    /// The Wine prefix the probe runs in, set up once (`probes/windows/README.md`: reuse
    /// one prefix, or every run pays 6–8 s of `wineboot`): `$WINEPREFIX` when set, else
    /// `wine/` next to the build cache (`~/.cache/sleeplab/wine`).
    fn wine_prefix(&self) -> Result<PathBuf, String> {
        let prefix = match std::env::var_os("WINEPREFIX").filter(|p| !p.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => self
                .cache_dir
                .parent()
                .unwrap_or(&self.cache_dir)
                .join("wine"),
        };
        if prefix.join("system.reg").is_file() {
            return Ok(prefix);
        }
        std::fs::create_dir_all(&prefix)
            .map_err(|e| format!("cannot create the Wine prefix {}: {e}", prefix.display()))?;
        let boot = ProbeCommand::new("wineboot")
            .with_args(["--init"])
            .with_env("WINEDEBUG", "-all")
            .with_env("WINEPREFIX", &prefix);
        let out = runner::run(
            &boot,
            &[],
            ChildSettings::default(),
            Limits {
                timeout: BUILD_TIMEOUT,
                output_cap: TOOL_OUTPUT_CAP,
            },
        )
        .map_err(|e| format!("setting up the Wine prefix: {e}"))?;
        if out.verdict() == Verdict::Ok {
            // The registry files appear when wineserver writes them as it exits.
            let wait = ProbeCommand::new("wineserver")
                .with_args(["-w"])
                .with_env("WINEPREFIX", &prefix);
            let limits = Limits {
                timeout: QUERY_TIMEOUT,
                output_cap: TOOL_OUTPUT_CAP,
            };
            let _ = runner::run(&wait, &[], ChildSettings::default(), limits);
        }
        match out.verdict() {
            Verdict::Ok if prefix.join("system.reg").is_file() => Ok(prefix),
            Verdict::Ok => Err(format!(
                "wineboot --init left no {}",
                prefix.join("system.reg").display()
            )),
            Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => {
                Err(format!(
                    "wineboot --init (WINEPREFIX={}) failed: {w}",
                    prefix.display()
                ))
            }
        }
    }
}

/// The real `python3` interpreter behind a pyenv-style shim (each shim launch costs
/// ~60 ms), or `python3` itself when it cannot be resolved.
fn real_python() -> (PathBuf, String) {
    let cmd = ProbeCommand::new("python3").with_args(["-c", "import sys; print(sys.executable)"]);
    let limits = Limits {
        timeout: QUERY_TIMEOUT,
        output_cap: 64 * 1024,
    };
    if let Ok(out) = runner::run(&cmd, &[], ChildSettings::default(), limits) {
        if out.verdict() == Verdict::Ok {
            let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if path.is_absolute() && path.is_file() {
                let note = format!("runs from source with {}", path.display());
                return (path, note);
            }
        }
    }
    (PathBuf::from("python3"), "runs from source".into())
}

/// Whether `dir` looks like the repository's `probes/` directory.
fn is_probes_dir(dir: &Path) -> bool {
    dir.is_dir()
        && RuntimeId::ALL
            .iter()
            .any(|r| dir.join(r.probe_subdir()).join(r.main_source()).is_file())
}

/// Finds the repository's `probes/` directory (see the module docs for the order).
pub fn probes_dir() -> Result<PathBuf, CatalogError> {
    if let Some(v) = std::env::var_os(PROBES_ENV) {
        let p = PathBuf::from(&v);
        return if is_probes_dir(&p) {
            Ok(p)
        } else {
            Err(CatalogError::BadEnv(p.display().to_string()))
        };
    }
    let mut looked = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        candidates.extend(exe.ancestors().skip(1).take(5).map(|a| a.join("probes")));
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../probes"));
    if let Ok(cwd) = std::env::current_dir() {
        candidates.push(cwd.join("probes"));
    }
    for c in candidates {
        if is_probes_dir(&c) {
            return Ok(c.canonicalize().unwrap_or(c));
        }
        looked.push(c.display().to_string());
    }
    Err(CatalogError::NotFound(looked.join(", ")))
}

/// The first executable named `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_probes_of_this_repository() {
        let dir = probes_dir().expect("the repository's probes/");
        assert!(dir.join("c/probe.c").is_file(), "{}", dir.display());
    }

    #[test]
    fn which_finds_sh_and_not_nonsense() {
        assert!(which("sh").is_some());
        assert!(which("sleeplab-no-such-tool-xyz").is_none());
    }

    #[test]
    fn a_missing_tool_is_skipped_with_the_install_command() {
        let cat = Catalog {
            probes_dir: probes_dir().unwrap(),
            cache_dir: std::env::temp_dir(),
        };
        // Every runtime either prepares, fails with a reason, or is skipped with a hint.
        for id in [RuntimeId::Python] {
            match cat.prepare(id) {
                Preparation::Ready { command, .. } => assert!(!command.args.is_empty()),
                Preparation::Skipped { install, .. } => assert!(install.contains("python3")),
                Preparation::Failed { reason } => panic!("{reason}"),
            }
        }
    }
}
