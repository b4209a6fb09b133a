//! The runtimes sleeplab has probes for, and the fixed facts of each: its names, its
//! probe's directory and main source, the tools it needs, how Debian installs it.

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
}
