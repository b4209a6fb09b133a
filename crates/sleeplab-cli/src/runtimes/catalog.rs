//! The runtimes sleeplab has probes for: how to detect each, how to build its probe into
//! a cache, and how to launch it.
//!
//! Compiled probes are built into `$XDG_CACHE_HOME/sleeplab/probes` (or
//! `~/.cache/sleeplab/probes`), one directory per build keyed by a hash of the probe's
//! source files, the build command and the compiler's version output, so a changed
//! source or compiler rebuilds and an unchanged one starts at once. Builds go to a
//! temporary directory renamed into place, so a half-finished build is never used and
//! concurrent builds (parallel tests) do not collide.
//!
//! The probes themselves are found in the repository's `probes/` directory: `$SLEEPLAB_PROBES`,
//! else next to the executable's ancestors (`target/release/sleeplab` → `probes/`), else
//! the source tree this binary was built from, else `./probes`.

use super::runner::{self, ChildSettings, Limits, ProbeCommand, Verdict};
use std::ffi::OsString;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The environment variable naming the probes directory.
pub const PROBES_ENV: &str = "SLEEPLAB_PROBES";

/// How long a build (or a version query, or a Wine prefix set-up) may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a version query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// Output kept from a build or a query.
const TOOL_OUTPUT_CAP: usize = 16 << 20;

/// JVM flags for the Java probe, as `probes/java/README.md` recommends: C1 only starts
/// fastest on JDK 17 (the serial collector would disable the CDS heap archive there).
const JAVA_FLAGS: [&str; 1] = ["-XX:TieredStopAtLevel=1"];

/// `JRUBY_OPTS` for JRuby, as `probes/ruby/README.md` recommends: no RubyGems, C1 only
/// (start-up drops from ~5 s to ~2 s of CPU; `--dev` does nothing on Debian's package).
const JRUBY_OPTS: &str = "--disable-gems -J-XX:TieredStopAtLevel=1";

/// A runtime that has a probe. JRuby is its own runtime (it runs the Ruby probe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuntimeId {
    /// C (POSIX/Linux calls), `probes/c`.
    C,
    /// C++ standard library, `probes/cpp`.
    Cpp,
    /// Go, `probes/go`.
    Go,
    /// Python (CPython or whichever `python3` is), `probes/python`.
    Python,
    /// Java (the JVM), `probes/java`.
    Java,
    /// Node.js, `probes/node`.
    Node,
    /// Ruby (MRI, `ruby`), `probes/ruby`.
    Ruby,
    /// JRuby (`jruby`), `probes/ruby`.
    Jruby,
    /// Windows APIs under Wine (mingw-w64 build), `probes/windows`.
    Windows,
}

impl RuntimeId {
    /// Every runtime, in reporting order.
    pub const ALL: [RuntimeId; 9] = [
        RuntimeId::C,
        RuntimeId::Cpp,
        RuntimeId::Go,
        RuntimeId::Python,
        RuntimeId::Java,
        RuntimeId::Node,
        RuntimeId::Ruby,
        RuntimeId::Jruby,
        RuntimeId::Windows,
    ];

    /// The name on the command line (`--runtimes`).
    pub fn name(self) -> &'static str {
        match self {
            RuntimeId::C => "c",
            RuntimeId::Cpp => "cpp",
            RuntimeId::Go => "go",
            RuntimeId::Python => "python",
            RuntimeId::Java => "java",
            RuntimeId::Node => "node",
            RuntimeId::Ruby => "ruby",
            RuntimeId::Jruby => "jruby",
            RuntimeId::Windows => "windows",
        }
    }

    /// The runtime for a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Every command-line name.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|r| r.name()).collect()
    }

    /// A human title.
    pub fn title(self) -> &'static str {
        match self {
            RuntimeId::C => "C",
            RuntimeId::Cpp => "C++",
            RuntimeId::Go => "Go",
            RuntimeId::Python => "Python",
            RuntimeId::Java => "Java",
            RuntimeId::Node => "Node.js",
            RuntimeId::Ruby => "Ruby (MRI)",
            RuntimeId::Jruby => "JRuby",
            RuntimeId::Windows => "Windows (Wine)",
        }
    }

    /// The `runtime` field the probe's header must carry.
    pub fn protocol_runtime(self) -> &'static str {
        match self {
            RuntimeId::Jruby => "ruby",
            other => other.name(),
        }
    }

    /// The probe's directory under `probes/`.
    pub fn probe_subdir(self) -> &'static str {
        match self {
            RuntimeId::Jruby => "ruby",
            other => other.name(),
        }
    }

    /// The main source file of the probe (relative to its directory).
    pub fn main_source(self) -> &'static str {
        match self {
            RuntimeId::C | RuntimeId::Windows => "probe.c",
            RuntimeId::Cpp => "probe.cpp",
            RuntimeId::Go => "main.go",
            RuntimeId::Python => "probe.py",
            RuntimeId::Java => "Probe.java",
            RuntimeId::Node => "probe.mjs",
            RuntimeId::Ruby | RuntimeId::Jruby => "probe.rb",
        }
    }

    /// Commands that must be on `PATH` for this runtime.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            RuntimeId::C => &["cc"],
            RuntimeId::Cpp => &["c++"],
            RuntimeId::Go => &["go"],
            RuntimeId::Python => &["python3"],
            RuntimeId::Java => &["javac", "java"],
            RuntimeId::Node => &["node"],
            RuntimeId::Ruby => &["ruby"],
            RuntimeId::Jruby => &["jruby"],
            RuntimeId::Windows => &["x86_64-w64-mingw32-gcc", "wine", "wineboot", "wineserver"],
        }
    }

    /// The command that installs the runtime on Debian.
    pub fn install_command(self) -> &'static str {
        match self {
            RuntimeId::C => "apt-get install gcc",
            RuntimeId::Cpp => "apt-get install g++",
            RuntimeId::Go => "apt-get install golang-go",
            RuntimeId::Python => "apt-get install python3",
            RuntimeId::Java => "apt-get install default-jdk",
            RuntimeId::Node => "apt-get install nodejs",
            RuntimeId::Ruby => "apt-get install ruby",
            RuntimeId::Jruby => "apt-get install jruby",
            RuntimeId::Windows => "apt-get install gcc-mingw-w64-x86-64 wine",
        }
    }

    /// The command whose output identifies the compiler (part of the build's cache
    /// key); `None` for runtimes that run their probe from source.
    pub fn version_command(self) -> Option<&'static [&'static str]> {
        match self {
            RuntimeId::C => Some(&["cc", "--version"]),
            RuntimeId::Cpp => Some(&["c++", "--version"]),
            RuntimeId::Go => Some(&["go", "version"]),
            RuntimeId::Java => Some(&["javac", "-version"]),
            RuntimeId::Windows => Some(&["x86_64-w64-mingw32-gcc", "--version"]),
            RuntimeId::Python | RuntimeId::Node | RuntimeId::Ruby | RuntimeId::Jruby => None,
        }
    }
}

impl std::fmt::Display for RuntimeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
            Ok((command, note)) => Preparation::Ready { command, note },
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
                let (out, note) = self.build(id, dir)?;
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

    /// The build command for `id`, writing into `out` (a fresh directory).
    fn build_command(&self, id: RuntimeId, dir: &Path, out: &Path) -> ProbeCommand {
        let src = dir.join(id.main_source());
        match id {
            RuntimeId::C => ProbeCommand::new("cc")
                .with_args(["-O2", "-std=c11", "-Wall", "-Wextra", "-o"])
                .with_args([out.join("probe").into_os_string(), src.into_os_string()]),
            RuntimeId::Cpp => ProbeCommand::new("c++")
                .with_args(["-O2", "-std=c++17", "-pthread", "-Wall", "-Wextra", "-o"])
                .with_args([out.join("probe").into_os_string(), src.into_os_string()]),
            RuntimeId::Go => ProbeCommand::new("go")
                .with_args(["build", "-o"])
                .with_args([out.join("probe").into_os_string(), ".".into()])
                .with_env("GOFLAGS", "-mod=mod -buildvcs=false")
                .with_env("GOTOOLCHAIN", "local")
                .in_dir(dir),
            RuntimeId::Java => ProbeCommand::new("javac")
                .with_args(["-d"])
                .with_args([out.join("classes").into_os_string(), src.into_os_string()]),
            RuntimeId::Windows => ProbeCommand::new("x86_64-w64-mingw32-gcc")
                .with_args(["-O2", "-Wall", "-Wextra", "-o"])
                .with_args([out.join("probe.exe").into_os_string(), src.into_os_string()])
                .with_args(["-lwinmm"]),
            _ => ProbeCommand::new("true"),
        }
    }

    /// Builds the probe of `id` into the cache (or finds the cached build): the build's
    /// directory and a note.
    fn build(&self, id: RuntimeId, dir: &Path) -> Result<(PathBuf, String), String> {
        let version = match id.version_command() {
            Some(argv) => tool_output(argv)?,
            None => String::new(),
        };
        let sources =
            source_files(id, dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        // The key covers the command as written for a fixed output path, so a change of
        // flags rebuilds too.
        let template = self.build_command(id, dir, Path::new("OUT")).words(&[]);
        let key = build_key(id, &template, &version, &sources);
        let final_dir = self.cache_dir.join(format!("{}-{key:016x}", id.name()));
        if final_dir.is_dir() {
            return Ok((final_dir, "cached build".into()));
        }
        std::fs::create_dir_all(&self.cache_dir)
            .map_err(|e| format!("cannot create the cache {}: {e}", self.cache_dir.display()))?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{}-{key:016x}.tmp", id.name()))
            .tempdir_in(&self.cache_dir)
            .map_err(|e| {
                format!(
                    "cannot create a build directory in {}: {e}",
                    self.cache_dir.display()
                )
            })?;
        let cmd = self.build_command(id, dir, tmp.path());
        let t0 = Instant::now();
        let out = runner::run(
            &cmd,
            &[],
            ChildSettings::default(),
            Limits {
                timeout: BUILD_TIMEOUT,
                output_cap: TOOL_OUTPUT_CAP,
            },
        )
        .map_err(|e| format!("build failed: {e}"))?;
        if out.verdict() != Verdict::Ok {
            let why = match out.verdict() {
                Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => w,
                Verdict::Ok => String::new(),
            };
            return Err(format!(
                "build failed ({}): {why}",
                cmd.words(&[]).join(" ")
            ));
        }
        let built = tmp.keep();
        match std::fs::rename(&built, &final_dir) {
            Ok(()) => {}
            Err(_) if final_dir.is_dir() => {
                // Someone else finished the same build first: use theirs.
                let _ = std::fs::remove_dir_all(&built);
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&built);
                return Err(format!(
                    "cannot move the build into {}: {e}",
                    final_dir.display()
                ));
            }
        }
        Ok((
            final_dir,
            format!("built in {:.1} s", t0.elapsed().as_secs_f64()),
        ))
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

/// Runs a version query and returns its stdout and stderr.
fn tool_output(argv: &[&str]) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(String::new());
    };
    let cmd = ProbeCommand::new(program).with_args(args.iter().copied());
    let out = runner::run(
        &cmd,
        &[],
        ChildSettings::default(),
        Limits {
            timeout: QUERY_TIMEOUT,
            output_cap: TOOL_OUTPUT_CAP,
        },
    )
    .map_err(|e| e.to_string())?;
    match out.verdict() {
        Verdict::Ok => Ok(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
        Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => {
            Err(format!("{} failed: {w}", argv.join(" ")))
        }
    }
}

/// The files whose content decides a build: `(name relative to the probe dir, bytes)`,
/// sorted by name.
fn source_files(id: RuntimeId, dir: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let wanted = |name: &str| match id {
        RuntimeId::Go => name.ends_with(".go") || name == "go.mod" || name == "go.sum",
        other => name == other.main_source(),
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && wanted(&name) {
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    files.sort();
    Ok(files)
}

/// The cache key of a build: FNV-1a (64 bit) over the runtime, the build command, the
/// compiler's version output and every source file (name, length, bytes).
pub fn build_key(
    id: RuntimeId,
    command: &[String],
    tool_version: &str,
    sources: &[(String, Vec<u8>)],
) -> u64 {
    let mut h = fnv::FnvHasher::default();
    let mut put = |bytes: &[u8]| {
        h.write_u64(bytes.len() as u64);
        h.write(bytes);
    };
    put(id.name().as_bytes());
    for w in command {
        put(w.as_bytes());
    }
    put(tool_version.as_bytes());
    for (name, bytes) in sources {
        put(name.as_bytes());
        put(bytes);
    }
    h.finish()
}

/// The build cache: `$XDG_CACHE_HOME/sleeplab/probes`, else `~/.cache/sleeplab/probes`.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("sleeplab-cache"));
    base.join("sleeplab").join("probes")
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
    fn names_round_trip_and_jruby_runs_the_ruby_probe() {
        for id in RuntimeId::ALL {
            assert_eq!(RuntimeId::parse(id.name()), Some(id));
            assert!(!id.tools().is_empty());
            assert!(id.install_command().starts_with("apt-get install "));
        }
        assert_eq!(RuntimeId::Jruby.probe_subdir(), "ruby");
        assert_eq!(RuntimeId::Jruby.protocol_runtime(), "ruby");
        assert_eq!(RuntimeId::parse("rust"), None);
        assert_eq!(RuntimeId::names().len(), 9);
    }

    #[test]
    fn the_key_changes_with_source_command_and_compiler() {
        let src = vec![("probe.c".to_string(), b"int main(){}".to_vec())];
        let cmd = vec!["cc".to_string(), "-O2".to_string()];
        let k = build_key(RuntimeId::C, &cmd, "gcc 12", &src);
        assert_eq!(k, build_key(RuntimeId::C, &cmd, "gcc 12", &src));
        let src2 = vec![("probe.c".to_string(), b"int main(){ }".to_vec())];
        assert_ne!(k, build_key(RuntimeId::C, &cmd, "gcc 12", &src2));
        assert_ne!(k, build_key(RuntimeId::C, &cmd, "gcc 13", &src));
        assert_ne!(k, build_key(RuntimeId::Cpp, &cmd, "gcc 12", &src));
        let cmd2 = vec!["cc".to_string(), "-O3".to_string()];
        assert_ne!(k, build_key(RuntimeId::C, &cmd2, "gcc 12", &src));
    }

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
