//! Which hypervisor this machine runs under, from every place that can tell: the DMI
//! tables, `/sys/hypervisor`, the CPU's hypervisor leaf and the kernel log.

use std::fs;
use std::io::Read;

/// What the machine says about its hypervisor, each source read on its own (`None`,
/// or empty, where a source is absent or unreadable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signs {
    /// DMI's system vendor and product name, joined by a space.
    pub dmi: String,
    /// `/sys/hypervisor/type` (Xen guests).
    pub sys_type: Option<String>,
    /// The vendor signature of CPUID leaf `0x4000_0000` (12 bytes, `KVMKVMKVM\0\0\0`),
    /// read only where leaf 1 sets the hypervisor bit.
    pub cpuid_vendor: Option<String>,
    /// The kernel log's `Hypervisor detected: …` line, from its colon on.
    pub kernel_log: Option<String>,
    /// Whether `/proc/cpuinfo`'s flags hold `hypervisor` (the CPU says it is virtual).
    pub cpu_flag: bool,
}

/// The name for what `signs` show, as the fingerprint's `virtualization`
/// records it: the most specific source first (DMI names the cloud, e.g. `firecracker`
/// or `aws-nitro`, where CPUID only says `kvm`), then `/sys/hypervisor`, CPUID's leaf, the
/// kernel log; `unknown hypervisor` where only the CPU flag says the machine is virtual;
/// `None` where nothing does (bare metal, or nothing readable).
pub fn name(signs: &Signs) -> Option<String> {
    let dmi = signs.dmi.to_ascii_lowercase();
    const DMI: [(&str, &str); 9] = [
        ("firecracker", "firecracker"),
        ("amazon ec2", "aws-nitro"),
        ("google", "gce"),
        ("kvm", "kvm"),
        ("qemu", "qemu"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("xen", "xen"),
        ("microsoft", "hyperv"),
    ];
    if let Some((_, n)) = DMI.iter().find(|(k, _)| dmi.contains(k)) {
        return Some((*n).to_string());
    }
    if let Some(t) = signs.sys_type.as_deref().filter(|t| !t.is_empty()) {
        return Some(t.to_string());
    }
    // The signatures each hypervisor puts in leaf 0x4000_0000 (Linux's arch/x86
    // detection reads the same leaf).
    const CPUID: [(&str, &str); 10] = [
        ("KVMKVMKVM", "kvm"),
        ("Linux KVM Hv", "kvm"),
        ("Microsoft Hv", "hyperv"),
        ("VMwareVMware", "vmware"),
        ("XenVMMXenVMM", "xen"),
        ("TCGTCGTCGTCG", "qemu"),
        ("VBoxVBoxVBox", "virtualbox"),
        ("bhyve bhyve ", "bhyve"),
        ("ACRNACRNACRN", "acrn"),
        (" lrpepyh  vr", "parallels"),
    ];
    if let Some(v) = &signs.cpuid_vendor {
        if let Some((_, n)) = CPUID.iter().find(|(k, _)| v.starts_with(k)) {
            return Some((*n).to_string());
        }
    }
    if let Some(line) = &signs.kernel_log {
        let l = line.trim().to_ascii_lowercase();
        const LOG: [(&str, &str); 7] = [
            ("kvm", "kvm"),
            ("hyper-v", "hyperv"),
            ("vmware", "vmware"),
            ("xen", "xen"),
            ("acrn", "acrn"),
            ("jailhouse", "jailhouse"),
            ("bhyve", "bhyve"),
        ];
        if let Some((_, n)) = LOG.iter().find(|(k, _)| l.contains(k)) {
            return Some((*n).to_string());
        }
        if !l.is_empty() {
            return Some(l);
        }
    }
    signs.cpu_flag.then(|| "unknown hypervisor".to_string())
}

impl Signs {
    /// Reads every source on this machine (`cpuinfo`: `/proc/cpuinfo`'s text). The
    /// kernel log is read only where the CPU says it is virtual and the sources before it
    /// named nothing, as it may need privileges (`dmesg_restrict`) and holds thousands of
    /// lines.
    pub fn read(cpuinfo: &str) -> Self {
        let read = |p: &str| fs::read_to_string(p).ok().map(|s| s.trim().to_string());
        let mut s = Signs {
            dmi: format!(
                "{} {}",
                read("/sys/class/dmi/id/sys_vendor").unwrap_or_default(),
                read("/sys/class/dmi/id/product_name").unwrap_or_default()
            ),
            sys_type: read("/sys/hypervisor/type").filter(|t| !t.is_empty()),
            cpuid_vendor: cpuid_vendor(),
            kernel_log: None,
            cpu_flag: cpuinfo
                .lines()
                .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor")),
        };
        // Only a CPU that says it is virtual can have a hypervisor the log names: bare
        // metal never reads the log.
        if s.cpu_flag && name(&s).is_none_or(|n| n == "unknown hypervisor") {
            s.kernel_log = kernel_log_line();
        }
        s
    }
}

/// CPUID leaf `0x4000_0000`'s vendor signature, where leaf 1's hypervisor bit (ECX bit
/// 31) says there is one; `None` elsewhere and off x86.
#[cfg(target_arch = "x86_64")]
fn cpuid_vendor() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86_64 CPU; leaves 1 and 0x4000_0000 only read.
    // (The intrinsic is safe from Rust 1.87 on; the block keeps older compilers.)
    #[allow(unused_unsafe)]
    let (leaf1, leaf) = unsafe { (__cpuid(1), __cpuid(0x4000_0000)) };
    if (leaf1.ecx >> 31) & 1 == 0 {
        return None;
    }
    let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    let s = String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_vendor() -> Option<String> {
    None
}

/// The text after `Hypervisor detected:` in the kernel log (`/dev/kmsg`, read without
/// blocking, one record per read), if it is there and readable.
fn kernel_log_line() -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
        .ok()?;
    let mut buf = vec![0u8; 8192];
    // The boot messages come first; stop at the end of the buffer (EAGAIN) or after
    // enough records that the line is no longer near.
    for _ in 0..20_000 {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            // EPIPE: a record was overwritten while reading; the next read goes on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => break,
        };
        let record = String::from_utf8_lossy(&buf[..n]);
        if let Some(rest) = record.split_once("Hypervisor detected:").map(|(_, r)| r) {
            return Some(rest.lines().next().unwrap_or("").trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signs() -> Signs {
        Signs::default()
    }

    #[test]
    fn nothing_virtual_is_bare_metal() {
        assert_eq!(name(&signs()), None);
    }

    #[test]
    fn the_cpu_flag_alone_is_an_unknown_hypervisor() {
        let s = Signs {
            cpu_flag: true,
            ..signs()
        };
        assert_eq!(name(&s).as_deref(), Some("unknown hypervisor"));
    }

    /// A Firecracker guest has no DMI and no /sys/hypervisor: CPUID's leaf names KVM,
    /// and without it the kernel log does.
    #[test]
    fn a_guest_without_dmi_is_named_by_cpuid_then_the_kernel_log() {
        let s = Signs {
            cpuid_vendor: Some("KVMKVMKVM".into()),
            kernel_log: Some("KVM".into()),
            cpu_flag: true,
            ..signs()
        };
        assert_eq!(name(&s).as_deref(), Some("kvm"));
        let log_only = Signs {
            cpuid_vendor: None,
            ..s.clone()
        };
        assert_eq!(name(&log_only).as_deref(), Some("kvm"));
        for (line, want) in [
            ("Microsoft Hyper-V", "hyperv"),
            ("VMware", "vmware"),
            ("Xen HVM", "xen"),
            ("Jailhouse", "jailhouse"),
            ("SomethingNew", "somethingnew"),
        ] {
            let s = Signs {
                kernel_log: Some(line.into()),
                ..signs()
            };
            assert_eq!(name(&s).as_deref(), Some(want), "{line}");
        }
    }

    #[test]
    fn every_cpuid_signature_has_its_name() {
        for (sig, want) in [
            ("Microsoft Hv", "hyperv"),
            ("VMwareVMware", "vmware"),
            ("XenVMMXenVMM", "xen"),
            ("TCGTCGTCGTCG", "qemu"),
            ("Linux KVM Hv", "kvm"),
        ] {
            let s = Signs {
                cpuid_vendor: Some(sig.into()),
                ..signs()
            };
            assert_eq!(name(&s).as_deref(), Some(want), "{sig}");
        }
        // An unknown signature says no more than the flag does.
        let s = Signs {
            cpuid_vendor: Some("NewVisor".into()),
            cpu_flag: true,
            ..signs()
        };
        assert_eq!(name(&s).as_deref(), Some("unknown hypervisor"));
    }

    /// DMI names the cloud where CPUID says only KVM; /sys/hypervisor comes before CPUID.
    #[test]
    fn the_most_specific_source_wins() {
        let s = Signs {
            dmi: "Amazon EC2 m5.large".into(),
            cpuid_vendor: Some("KVMKVMKVM".into()),
            cpu_flag: true,
            ..signs()
        };
        assert_eq!(name(&s).as_deref(), Some("aws-nitro"));
        let s = Signs {
            sys_type: Some("xen".into()),
            cpuid_vendor: Some("KVMKVMKVM".into()),
            ..signs()
        };
        assert_eq!(name(&s).as_deref(), Some("xen"));
    }

    #[test]
    fn reading_this_machine_never_fails() {
        let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let s = Signs::read(&info);
        // Whatever it finds, a virtual CPU is never called bare metal.
        if s.cpu_flag {
            assert!(name(&s).is_some());
        }
    }
}
