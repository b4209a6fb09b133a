//! The pages of the kernel's trace ring buffer, as `per_cpu/cpuN/trace_pipe_raw` hands
//! them out: a page header (the first event's timestamp, the bytes committed and the
//! flags of events missed before it), then events, each behind a 4-byte header of a
//! 5-bit type and a 27-bit time delta from the previous one.
//!
//! ```text
//! type_len 1..=28  data of type_len × 4 bytes follows the header
//! type_len 0       the next u32 holds the length (itself included); data after it
//! type_len 29      padding (a discarded event; with no delta and no length: page end)
//! type_len 30      time extend: delta = next u32 << 27 | header delta
//! type_len 31      absolute time stamp, same encoding (its top bits from the page)
//! ```
//!
//! The header's layout comes from tracefs `events/header_page` (its offsets and sizes
//! differ between 32- and 64-bit kernels); the event header is the same everywhere.
//! Pure: the tests build pages by hand.

use thiserror::Error;

/// What is wrong with a page or a page layout.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RingError {
    /// `events/header_page` lacks a field.
    #[error("header_page has no field {0:?}")]
    NoField(&'static str),
    /// A page shorter than its header, or whose commit runs past its end.
    #[error("a ring buffer page of {len} bytes that says it holds {commit}")]
    Truncated {
        /// The page's length.
        len: usize,
        /// Bytes of events it claims.
        commit: usize,
    },
}

/// Where a page's header fields are (`events/header_page`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset of the u64 timestamp of the page's first event.
    timestamp: usize,
    /// Offset and size of `commit` (bytes of events, and the missed-events flags).
    commit: (usize, usize),
    /// Offset of the first event.
    data: usize,
}

/// `commit` flag: events were lost (overwritten or dropped) before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// `commit` flag: how many is stored right after the page's events.
const MISSED_STORED: u64 = 1 << 30;
/// The bits of `commit` that are flags.
const MISSED_FLAGS: u64 = MISSED_EVENTS | MISSED_STORED;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// An absolute time stamp holds the low 59 bits; the rest comes from the time before.
const TS_MSB: u64 = 0x1f << 59;

impl PageLayout {
    /// The layout of a 64-bit kernel (u64 timestamp, 8-byte `local_t` commit).
    pub const X86_64: PageLayout = PageLayout {
        timestamp: 0,
        commit: (8, 8),
        data: 16,
    };

    /// Reads `events/header_page`:
    /// `field: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;` and so on.
    pub fn parse(text: &str) -> Result<Self, RingError> {
        let find = |name: &'static str| -> Result<(usize, usize), RingError> {
            text.lines()
                .find_map(|line| {
                    let (decl, rest) = line.trim().strip_prefix("field:")?.split_once(';')?;
                    (decl.split_whitespace().last()? == name).then_some(())?;
                    let num = |key: &str| -> Option<usize> {
                        let v = rest.split(';').find_map(|p| p.trim().strip_prefix(key))?;
                        v.trim().parse().ok()
                    };
                    Some((num("offset:")?, num("size:")?))
                })
                .ok_or(RingError::NoField(name))
        };
        Ok(Self {
            timestamp: find("timestamp")?.0,
            commit: find("commit")?,
            data: find("data")?.0,
        })
    }
}

/// What one page held besides its events. (Whether the kernel lost events before the
/// page is in `commit`'s flags too; a session counts lost events from the instance's
/// statistics instead, which cover every page, read or not.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSummary {
    /// Events handed to the caller.
    pub events: usize,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn uint_at(b: &[u8], at: usize, size: usize) -> Option<u64> {
    let bytes = b.get(at..at + size)?;
    let mut buf = [0u8; 8];
    buf[..size.min(8)].copy_from_slice(&bytes[..size.min(8)]);
    Some(u64::from_le_bytes(buf))
}

/// Hands each event of `page` to `on_event` with its absolute timestamp (the trace
/// clock's ns) and its data (the record, starting with `common_type`).
pub fn read_page(
    layout: &PageLayout,
    page: &[u8],
    mut on_event: impl FnMut(u64, &[u8]),
) -> Result<PageSummary, RingError> {
    let truncated = |commit| RingError::Truncated {
        len: page.len(),
        commit,
    };
    let mut ts = uint_at(page, layout.timestamp, 8).ok_or(truncated(0))?;
    let commit = uint_at(page, layout.commit.0, layout.commit.1).ok_or(truncated(0))?;
    let size = (commit & !MISSED_FLAGS & 0xffff_ffff) as usize;
    let data = page
        .get(layout.data..layout.data + size)
        .ok_or(truncated(size))?;
    let mut summary = PageSummary::default();
    let mut at = 0;
    while let Some(header) = u32_at(data, at) {
        let type_len = header & 0x1f;
        let delta = u64::from(header >> 5);
        let array0 = u32_at(data, at + 4);
        let (len, event) = match type_len {
            TYPE_PADDING => match array0 {
                // No delta and no length: the rest of the page is empty.
                _ if delta == 0 => break,
                Some(a) => (4 + a as usize, None),
                None => break,
            },
            TYPE_TIME_EXTEND => {
                ts = ts.wrapping_add(u64::from(array0.unwrap_or(0)) << 27 | delta);
                (8, None)
            }
            TYPE_TIME_STAMP => {
                let mut abs = u64::from(array0.unwrap_or(0)) << 27 | delta;
                if ts & TS_MSB != 0 {
                    abs |= ts & TS_MSB;
                    if abs < ts {
                        abs = abs.wrapping_add(1 << 59);
                    }
                }
                ts = abs;
                (8, None)
            }
            0 => {
                let Some(a) = array0.filter(|&a| a >= 4) else {
                    break;
                };
                ts = ts.wrapping_add(delta);
                (4 + a as usize, Some((at + 8, a as usize - 4)))
            }
            n => {
                ts = ts.wrapping_add(delta);
                (4 + 4 * n as usize, Some((at + 4, 4 * n as usize)))
            }
        };
        if let Some((from, n)) = event {
            let Some(record) = data.get(from..from + n) else {
                break;
            };
            on_event(ts, record);
            summary.events += 1;
        }
        at += len;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
        \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
        \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    /// A page of `events` (already encoded) with first timestamp `ts` and `flags`.
    fn page(ts: u64, flags: u64, events: &[u8], tail: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&ts.to_le_bytes());
        p.extend_from_slice(&(events.len() as u64 | flags).to_le_bytes());
        p.extend_from_slice(events);
        p.extend_from_slice(tail);
        p.resize(4096, 0);
        p
    }

    fn header(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | delta << 5).to_le_bytes()
    }

    fn small(delta: u32, data: &[u8]) -> Vec<u8> {
        assert_eq!(data.len() % 4, 0);
        let mut e = header(data.len() as u32 / 4, delta).to_vec();
        e.extend_from_slice(data);
        e
    }

    fn collect(p: &[u8]) -> (Vec<(u64, Vec<u8>)>, PageSummary) {
        let mut out = Vec::new();
        let s = read_page(&PageLayout::X86_64, p, |t, d| out.push((t, d.to_vec()))).unwrap();
        (out, s)
    }

    #[test]
    fn the_kernels_header_page_parses_to_the_64_bit_layout() {
        assert_eq!(PageLayout::parse(HEADER_PAGE).unwrap(), PageLayout::X86_64);
        assert_eq!(
            PageLayout::parse("field: u64 timestamp;\toffset:0;\tsize:8;"),
            Err(RingError::NoField("commit"))
        );
    }

    #[test]
    fn deltas_accumulate_from_the_page_timestamp() {
        let mut ev = small(0, &[1, 2, 3, 4]);
        ev.extend(small(100, &[5, 6, 7, 8, 9, 10, 11, 12]));
        ev.extend(small(7, &[13, 14, 15, 16]));
        let (out, s) = collect(&page(1_000, 0, &ev, &[]));
        assert_eq!(s.events, 3);
        let times: Vec<u64> = out.iter().map(|e| e.0).collect();
        assert_eq!(times, vec![1_000, 1_100, 1_107]);
        assert_eq!(out[1].1, vec![5, 6, 7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn long_events_carry_their_length_and_extends_add_high_bits() {
        // A time extend of (2 << 27) + 5, then a type-0 event of 120 data bytes.
        let mut ev = header(TYPE_TIME_EXTEND, 5).to_vec();
        ev.extend(2u32.to_le_bytes());
        ev.extend(header(0, 3));
        ev.extend(124u32.to_le_bytes());
        ev.extend(vec![9u8; 120]);
        let (out, _) = collect(&page(10, 0, &ev, &[]));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 10 + (2 << 27) + 5 + 3);
        assert_eq!(out[0].1.len(), 120);
    }

    #[test]
    fn padding_is_skipped_and_an_empty_padding_ends_the_page() {
        let mut ev = small(1, &[1, 1, 1, 1]);
        ev.extend(header(TYPE_PADDING, 50));
        // Its length counts what follows the header: the length word and 4 bytes.
        ev.extend(8u32.to_le_bytes());
        ev.extend([0u8; 4]);
        ev.extend(small(2, &[2, 2, 2, 2]));
        ev.extend(header(TYPE_PADDING, 0));
        ev.extend(small(2, &[3, 3, 3, 3]));
        let (out, _) = collect(&page(0, 0, &ev, &[]));
        // A discarded event's delta does not count (as the kernel's reader has it).
        assert_eq!(out.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn an_absolute_stamp_keeps_the_pages_top_bits() {
        let base = 3u64 << 59;
        let mut ev = header(TYPE_TIME_STAMP, 4).to_vec();
        ev.extend(1u32.to_le_bytes());
        ev.extend(small(6, &[0, 0, 0, 0]));
        let (out, _) = collect(&page(base + 1, 0, &ev, &[]));
        assert_eq!(out[0].0, base + (1 << 27) + 4 + 6);
    }

    #[test]
    fn the_missed_events_flags_do_not_change_the_events_read() {
        let ev = small(0, &[1, 2, 3, 4]);
        let plain = collect(&page(0, 0, &ev, &[]));
        let flagged = collect(&page(
            0,
            MISSED_EVENTS | MISSED_STORED,
            &ev,
            &42u64.to_le_bytes(),
        ));
        assert_eq!(plain, flagged);
        assert_eq!(plain.1.events, 1);
    }

    #[test]
    fn a_page_that_claims_more_than_it_holds_is_an_error() {
        let mut p = page(0, 0, &[], &[]);
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(matches!(
            read_page(&PageLayout::X86_64, &p, |_, _| {}),
            Err(RingError::Truncated { .. })
        ));
        assert!(read_page(&PageLayout::X86_64, &[0u8; 4], |_, _| {}).is_err());
    }

    /// Pages a real kernel wrote (6.18, x86_64: `trace_pipe_raw` of an instance that
    /// recorded the five tracepoints for 50 ms) read whole: every event's record is
    /// inside the data area, and the timestamps never go back.
    #[test]
    fn a_real_kernels_pages_read_whole() {
        let layout = PageLayout::parse(include_str!("../testdata/linux-6.18/header_page")).unwrap();
        for page in [
            &include_bytes!("../testdata/linux-6.18/page_0.raw")[..],
            &include_bytes!("../testdata/linux-6.18/page_1.raw")[..],
            &include_bytes!("../testdata/linux-6.18/page_2.raw")[..],
        ] {
            let mut times = Vec::new();
            let s = read_page(&layout, page, |t, r| {
                assert!(r.len() >= 8, "a record shorter than its common fields");
                times.push(t);
            })
            .unwrap();
            assert!(s.events > 10, "{} events", s.events);
            assert_eq!(s.events, times.len());
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        }
    }
}
