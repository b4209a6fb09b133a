//! What the BPF recorder reads from the kernel's own type information
//! (`/sys/kernel/btf/vmlinux`): which BTF tracepoints the kernel has (a
//! `btf_trace_NAME` typedef each), and where its per-CPU variables lie in
//! `.data..percpu`. A walk over the BTF types, bounds-checked: a malformed blob gives
//! `None`, never a panic.

use std::collections::{HashMap, HashSet};

/// BTF's magic number, little-endian.
const MAGIC: u16 = 0xeb9f;

/// The kinds read (`BTF_KIND_*`).
const KIND_TYPEDEF: u32 = 8;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;

/// The section of the per-CPU variables.
const PERCPU: &str = ".data..percpu";

/// The kernel's tracepoints and per-CPU variables, as its BTF describes them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KernelTypes {
    /// The tracepoints a BTF-typed program can attach to (`btf_trace_` stripped).
    tracepoints: HashSet<String>,
    /// Each per-CPU variable's offset in the per-CPU area.
    percpu: HashMap<String, u32>,
}

impl KernelTypes {
    /// Whether the kernel has the tracepoint `name` (as a BTF tracepoint).
    pub fn has_tracepoint(&self, name: &str) -> bool {
        self.tracepoints.contains(name)
    }

    /// The per-CPU variable `name`'s offset in every CPU's per-CPU area.
    pub fn percpu_offset(&self, name: &str) -> Option<u32> {
        self.percpu.get(name).copied()
    }

    /// The types of the BTF blob `b` (little-endian, as on x86), or `None` where it is
    /// not one.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let u32_at = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(
                b.get(at..at.checked_add(4)?)?.try_into().ok()?,
            ))
        };
        if u16::from_le_bytes(b.get(0..2)?.try_into().ok()?) != MAGIC {
            return None;
        }
        let hdr_len = u32_at(4)? as usize;
        let (type_off, type_len) = (u32_at(8)? as usize, u32_at(12)? as usize);
        let (str_off, str_len) = (u32_at(16)? as usize, u32_at(20)? as usize);
        let types = hdr_len.checked_add(type_off)?;
        let types_end = types.checked_add(type_len)?;
        let strings = b.get(
            hdr_len.checked_add(str_off)?..hdr_len.checked_add(str_off)?.checked_add(str_len)?,
        )?;
        let name = |off: u32| -> Option<&str> {
            let s = strings.get(off as usize..)?;
            let end = s.iter().position(|&c| c == 0)?;
            std::str::from_utf8(&s[..end]).ok()
        };
        let mut out = Self::default();
        let mut vars: HashMap<u32, u32> = HashMap::new();
        let mut percpu: Vec<(u32, u32)> = Vec::new();
        let (mut at, mut id) = (types, 1u32);
        while at < types_end {
            let (name_off, info) = (u32_at(at)?, u32_at(at + 4)?);
            let (kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
            let body = at + 12;
            let extra = match kind {
                1 | 14 | 17 => 4,             // INT, VAR, DECL_TAG
                3 => 12,                      // ARRAY
                4 | 5 | 15 | 19 => 12 * vlen, // STRUCT, UNION, DATASEC, ENUM64
                6 | 13 => 8 * vlen,           // ENUM, FUNC_PROTO
                2 | 7..=12 | 16 | 18 => 0,    // PTR, FWD, TYPEDEF…FUNC, FLOAT, TYPE_TAG
                _ => return None,
            };
            match kind {
                KIND_TYPEDEF => {
                    if let Some(tp) = name(name_off).and_then(|n| n.strip_prefix("btf_trace_")) {
                        out.tracepoints.insert(tp.to_string());
                    }
                }
                KIND_VAR => {
                    vars.insert(id, name_off);
                }
                KIND_DATASEC if name(name_off) == Some(PERCPU) => {
                    for k in 0..vlen {
                        let e = body + 12 * k;
                        percpu.push((u32_at(e)?, u32_at(e + 4)?));
                    }
                }
                _ => {}
            }
            at = body.checked_add(extra)?;
            id = id.checked_add(1)?;
        }
        for (var, offset) in percpu {
            if let Some(n) = vars.get(&var).and_then(|&off| name(off)) {
                out.percpu.insert(n.to_string(), offset);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob of `types` (each: name offset, kind, vlen, size/type, trailing words)
    /// and the string table `strings`.
    fn blob(types: &[(u32, u32, u32, u32, Vec<u32>)], strings: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for (name, kind, vlen, size, extra) in types {
            t.extend(name.to_le_bytes());
            t.extend(((kind << 24) | vlen).to_le_bytes());
            t.extend(size.to_le_bytes());
            for w in extra {
                t.extend(w.to_le_bytes());
            }
        }
        let mut b = Vec::new();
        b.extend(MAGIC.to_le_bytes());
        b.extend([1u8, 0]);
        b.extend(24u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((t.len() as u32).to_le_bytes());
        b.extend((t.len() as u32).to_le_bytes());
        b.extend((strings.len() as u32).to_le_bytes());
        b.extend(t);
        b.extend(strings);
        b
    }

    #[test]
    fn tracepoints_and_percpu_offsets_are_read() {
        // Strings: 0 "", 1 "int", 5 "btf_trace_sched_switch", 28 "__preempt_count",
        // 44 "runqueues", 54 ".data..percpu", 68 "other".
        let strings =
            b"\0int\0btf_trace_sched_switch\0__preempt_count\0runqueues\0.data..percpu\0other\0";
        let types = [
            (1, 1, 0, 4, vec![32]),          // 1: INT int
            (0, 2, 0, 1, vec![]),            // 2: PTR → 1
            (5, KIND_TYPEDEF, 0, 2, vec![]), // 3: TYPEDEF btf_trace_sched_switch
            (28, KIND_VAR, 0, 1, vec![1]),   // 4: VAR __preempt_count
            (44, KIND_VAR, 0, 1, vec![1]),   // 5: VAR runqueues
            (4, 4, 1, 8, vec![1, 0, 0]),     // 6: STRUCT of one member
            (54, KIND_DATASEC, 2, 0, vec![4, 86_064, 4, 5, 178_752, 3584]),
            (68, KIND_DATASEC, 1, 0, vec![4, 8, 4]), // another section: not per-CPU
        ];
        let k = KernelTypes::parse(&blob(&types, strings)).unwrap();
        assert!(k.has_tracepoint("sched_switch"));
        assert!(!k.has_tracepoint("sched_waking"));
        assert_eq!(k.percpu_offset("__preempt_count"), Some(86_064));
        assert_eq!(k.percpu_offset("runqueues"), Some(178_752));
        assert_eq!(k.percpu_offset("other"), None);
    }

    #[test]
    fn a_malformed_blob_is_none_not_a_panic() {
        let strings = b"\0x\0";
        let good = blob(&[(1, 1, 0, 4, vec![32])], strings);
        assert!(KernelTypes::parse(&good).is_some());
        assert_eq!(KernelTypes::parse(&[]), None);
        let mut bad_magic = good.clone();
        bad_magic[0] = 0;
        assert_eq!(KernelTypes::parse(&bad_magic), None);
        // Every truncation, and an unknown kind.
        for n in 0..good.len() {
            let _ = KernelTypes::parse(&good[..n]);
        }
        let unknown = blob(&[(1, 31, 0, 4, vec![])], strings);
        assert_eq!(KernelTypes::parse(&unknown), None);
    }

    #[test]
    fn the_running_kernels_btf_parses_where_it_has_one() {
        let Ok(bytes) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            return;
        };
        let k = KernelTypes::parse(&bytes).expect("the running kernel's BTF parses");
        assert!(k.has_tracepoint("sched_switch"));
        assert!(k.has_tracepoint("sched_waking"));
    }
}
