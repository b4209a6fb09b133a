//! An event's `format` file (tracefs `events/<system>/<event>/format`): where each field
//! sits in the raw record, so records decode by the layout of the running kernel rather
//! than one compiled in.
//!
//! ```text
//! name: sched_waking
//! ID: 375
//! format:
//!     field:unsigned short common_type;  offset:0;   size:2; signed:0;
//!     field:pid_t pid;   offset:24;  size:4; signed:1;
//! ```
//!
//! (tab-separated in the kernel's text).

use thiserror::Error;

/// What is wrong with a format file, or a field asked of it.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FormatError {
    /// A `field:` line that does not parse.
    #[error("bad field line {0:?}")]
    BadLine(String),
    /// No `ID:` line.
    #[error("no ID line")]
    NoId,
    /// The event has no field of that name (another kernel's layout).
    #[error("no field {0:?}")]
    NoField(String),
    /// The field is not an integer of 1, 2, 4 or 8 bytes.
    #[error("field {0:?} is {1} bytes, not an integer")]
    NotInteger(String, usize),
}

/// One field of an event's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name (`pid`, `prev_comm`; arrays without their `[16]`).
    pub name: String,
    /// Byte offset in the record.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// Whether it is signed.
    pub signed: bool,
}

/// An event's id and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The event's id (the perf tracepoint config).
    pub id: u64,
    /// Its fields, common ones included.
    pub fields: Vec<Field>,
}

impl Format {
    /// Parses the text of a `format` file.
    pub fn parse(text: &str) -> Result<Self, FormatError> {
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("ID:") {
                id = rest.trim().parse().ok();
            } else if line.starts_with("field:") {
                fields.push(parse_field(line)?);
            }
        }
        Ok(Self {
            id: id.ok_or(FormatError::NoId)?,
            fields,
        })
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Result<&Field, FormatError> {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| FormatError::NoField(name.to_string()))
    }

    /// A reader of the integer field `name`.
    pub fn int(&self, name: &str) -> Result<IntField, FormatError> {
        let f = self.field(name)?;
        if !matches!(f.size, 1 | 2 | 4 | 8) {
            return Err(FormatError::NotInteger(name.to_string(), f.size));
        }
        Ok(IntField {
            offset: f.offset,
            size: f.size,
            signed: f.signed,
        })
    }

    /// A reader of element `index` of the integer array field `name`, whose declared
    /// length is `len` (`unsigned long args[6]`: each element `size / len` bytes).
    pub fn int_at(&self, name: &str, index: usize, len: usize) -> Result<IntField, FormatError> {
        let f = self.field(name)?;
        let size = f.size / len.max(1);
        if index >= len || !matches!(size, 1 | 2 | 4 | 8) || size * len != f.size {
            return Err(FormatError::NotInteger(format!("{name}[{index}]"), size));
        }
        Ok(IntField {
            offset: f.offset + index * size,
            size,
            signed: f.signed,
        })
    }

    /// A reader of the byte-array field `name` (a `char[16]` comm).
    pub fn bytes(&self, name: &str) -> Result<BytesField, FormatError> {
        let f = self.field(name)?;
        Ok(BytesField {
            offset: f.offset,
            size: f.size,
        })
    }
}

/// `field:TYPE NAME[N]; offset:O; size:S; signed:X;` (tab-separated).
fn parse_field(line: &str) -> Result<Field, FormatError> {
    let bad = || FormatError::BadLine(line.to_string());
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, None);
    for part in line.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once(':').ok_or_else(bad)?;
        match key.trim() {
            "field" => decl = Some(value.trim()),
            "offset" => offset = value.trim().parse().ok(),
            "size" => size = value.trim().parse().ok(),
            "signed" => signed = value.trim().parse::<u8>().ok().map(|s| s != 0),
            _ => {}
        }
    }
    let decl = decl.ok_or_else(bad)?;
    let last = decl.split_whitespace().last().ok_or_else(bad)?;
    let name = last.split('[').next().unwrap_or(last).to_string();
    Ok(Field {
        name,
        offset: offset.ok_or_else(bad)?,
        size: size.ok_or_else(bad)?,
        signed: signed.unwrap_or(false),
    })
}

/// Reads one integer field of a raw record (native byte order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntField {
    offset: usize,
    size: usize,
    signed: bool,
}

impl IntField {
    /// The field's value in `raw`, sign-extended when signed; `None` when the record
    /// is too short.
    pub fn read(&self, raw: &[u8]) -> Option<i64> {
        let b = raw.get(self.offset..self.offset + self.size)?;
        Some(match (self.size, self.signed) {
            (1, false) => i64::from(b[0]),
            (1, true) => i64::from(b[0] as i8),
            (2, false) => i64::from(u16::from_ne_bytes([b[0], b[1]])),
            (2, true) => i64::from(i16::from_ne_bytes([b[0], b[1]])),
            (4, false) => i64::from(u32::from_ne_bytes(b.try_into().ok()?)),
            (4, true) => i64::from(i32::from_ne_bytes(b.try_into().ok()?)),
            _ => i64::from_ne_bytes(b.try_into().ok()?),
        })
    }
}

/// Reads one byte-array field of a raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BytesField {
    offset: usize,
    size: usize,
}

impl BytesField {
    /// The first 16 bytes of the field in `raw` (zero-padded), `None` when too short.
    pub fn read16(&self, raw: &[u8]) -> Option<[u8; 16]> {
        let b = raw.get(self.offset..self.offset + self.size)?;
        let mut out = [0u8; 16];
        let n = b.len().min(16);
        out[..n].copy_from_slice(&b[..n]);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAKING: &str = "name: sched_waking
ID: 375
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;

print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu
";

    #[test]
    fn parses_the_kernels_layout_and_reads_fields() {
        let f = Format::parse(WAKING).unwrap();
        assert_eq!(f.id, 375);
        assert_eq!(f.fields.len(), 8);
        assert_eq!(
            f.field("comm").unwrap(),
            &Field {
                name: "comm".into(),
                offset: 8,
                size: 16,
                signed: false
            }
        );
        let mut raw = vec![0u8; 36];
        raw[2] = 0x08;
        raw[4..8].copy_from_slice(&(-1i32).to_ne_bytes());
        raw[8..11].copy_from_slice(b"cc1");
        raw[24..28].copy_from_slice(&4242i32.to_ne_bytes());
        raw[32..36].copy_from_slice(&1i32.to_ne_bytes());
        assert_eq!(f.int("common_flags").unwrap().read(&raw), Some(8));
        assert_eq!(f.int("common_pid").unwrap().read(&raw), Some(-1));
        assert_eq!(f.int("pid").unwrap().read(&raw), Some(4242));
        assert_eq!(f.int("target_cpu").unwrap().read(&raw), Some(1));
        assert_eq!(
            &f.bytes("comm").unwrap().read16(&raw).unwrap()[..4],
            b"cc1\0"
        );
        assert_eq!(f.int("pid").unwrap().read(&raw[..20]), None);
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let f = Format::parse(WAKING).unwrap();
        assert_eq!(f.int("nope"), Err(FormatError::NoField("nope".into())));
        assert_eq!(
            f.int("comm"),
            Err(FormatError::NotInteger("comm".into(), 16))
        );
        assert_eq!(Format::parse("format:\n"), Err(FormatError::NoId));
        assert!(matches!(
            Format::parse("ID: 1\n\tfield:int x;\toffset:zero;\tsize:4;\n"),
            Err(FormatError::BadLine(_))
        ));
    }

    #[test]
    fn an_array_field_reads_element_by_element() {
        let f = Format::parse(
            "ID: 1\n\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n",
        )
        .unwrap();
        let mut raw = vec![0u8; 64];
        for i in 0..6u64 {
            let at = 16 + 8 * i as usize;
            raw[at..at + 8].copy_from_slice(&(100 + i).to_ne_bytes());
        }
        for i in 0..6 {
            assert_eq!(
                f.int_at("args", i, 6).unwrap().read(&raw),
                Some(100 + i as i64)
            );
        }
        assert!(f.int_at("args", 6, 6).is_err(), "past the end");
        assert!(
            f.int_at("args", 0, 5).is_err(),
            "a length that does not divide the size"
        );
        assert_eq!(f.int_at("args", 5, 6).unwrap().read(&raw[..60]), None);
    }

    #[test]
    fn sixty_four_bit_signed_fields_keep_their_sign() {
        let f =
            Format::parse("ID: 1\n\tfield:s64 expires;\toffset:0;\tsize:8;\tsigned:1;\n").unwrap();
        assert_eq!(
            f.int("expires").unwrap().read(&(-5i64).to_ne_bytes()),
            Some(-5)
        );
    }
}
