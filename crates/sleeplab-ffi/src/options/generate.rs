//! Writes `setters.rs` from the library's option table: the constants of each choice,
//! one setter per option, and the dispatch the tests walk the table through. The test
//! below fails when the checked-in file differs; `SLEEPLAB_BLESS=1` rewrites it (and
//! the header test, run after it by the same `cargo test`, regenerates
//! `include/sleeplab.h` from it).

use std::fmt::Write as _;
use std::path::Path;

use sleeplab_core::precise::{OPTIONS, OptionKind, SleeperOption};

use super::CHOICE_NAMES;

/// How rustfmt would write a signature: on one line when it fits in 100 columns.
fn signature(name: &str, args: &[(&str, &str)]) -> String {
    let one = format!(
        "pub unsafe extern \"C\" fn {name}({}) -> c_int {{",
        args.iter()
            .map(|(a, t)| format!("{a}: {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if one.len() <= 100 {
        return one + "\n";
    }
    let mut s = format!("pub unsafe extern \"C\" fn {name}(\n");
    for (a, t) in args {
        let _ = writeln!(s, "    {a}: {t},");
    }
    s + ") -> c_int {\n"
}

/// `text` as `///` lines of at most 92 columns.
fn doc(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && indent.len() + 4 + line.len() + 1 + word.len() > 92 {
            let _ = writeln!(out, "{indent}/// {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{indent}/// {line}");
}

/// The C names of a choice option's words.
fn choice_names(o: &SleeperOption) -> &'static [&'static str] {
    let words = match o.kind {
        OptionKind::Choice(words) => words,
        _ => return &[],
    };
    let names = CHOICE_NAMES
        .iter()
        .find(|(name, _)| *name == o.name)
        .map(|(_, names)| *names)
        .unwrap_or_else(|| panic!("add the C names of `{}` to CHOICE_NAMES", o.name));
    assert_eq!(names.len(), words.len(), "CHOICE_NAMES of `{}`", o.name);
    names
}

/// The setter's name, its C arguments, how they become an `OptionValue`, the range in
/// words.
fn shape(o: &SleeperOption) -> (String, Vec<(&'static str, &'static str)>, String, String) {
    let default = o.format(o.default_value());
    let options = ("options", "*mut Options");
    match o.kind {
        OptionKind::Choice(words) => {
            let names = choice_names(o);
            let list: Vec<String> = names
                .iter()
                .zip(words)
                .map(|(n, w)| {
                    let d = if *w == default { ", the default" } else { "" };
                    format!("`{n}` ({w}{d})")
                })
                .collect();
            let last = list.len() - 1;
            (
                o.name.to_owned(),
                vec![options, ("value", "c_int")],
                "choice_value(value)".into(),
                format!("One of {} or {}", list[..last].join(", "), list[last]),
            )
        }
        OptionKind::Duration { min_ns } => {
            let default_ns = match o.default_value() {
                sleeplab_core::precise::OptionValue::Ns(ns) => ns,
                _ => 0,
            };
            (
                format!("{}_ns", o.name),
                vec![options, ("ns", "u64")],
                "OptionValue::Ns(ns)".into(),
                format!("In ns, at least {min_ns} (default {default_ns}: {default})"),
            )
        }
        OptionKind::Count { min, max } => {
            assert!(
                max <= u64::from(u32::MAX),
                "`{}` needs a wider C type",
                o.name
            );
            (
                o.name.to_owned(),
                vec![options, ("n", "u32")],
                "OptionValue::Count(u64::from(n))".into(),
                format!("From {min} to {max} {} (default {default})", o.unit),
            )
        }
        OptionKind::Number { min, max } => (
            o.name.to_owned(),
            vec![options, ("value", "f64")],
            "OptionValue::Number(value)".into(),
            format!("From {min} to {max}, not NaN (default {default})"),
        ),
        OptionKind::Budget => (
            o.name.to_owned(),
            vec![options, ("budget", "c_int"), ("percent", "f64")],
            "budget_value(budget, percent)".into(),
            "`SLEEPLAB_BUDGET_AUTO` (the default), `SLEEPLAB_BUDGET_UNLIMITED`, or \
             `SLEEPLAB_BUDGET_PERCENT` with `percent` from 0 to 100 (ignored by the other two)"
                .into(),
        ),
    }
}

/// The text of `setters.rs`.
pub(super) fn setters() -> String {
    let mut s = String::from(
        "//! Generated from the library's option table (`sleeplab_core::precise::OPTIONS`) by\n\
         //! `options::generate`; do not edit by hand: `SLEEPLAB_BLESS=1 cargo test -p sleeplab-ffi`\n\
         //! rewrites it and regenerates `include/sleeplab.h`.\n\
         \n\
         use std::ffi::c_int;\n\
         \n\
         use sleeplab_core::precise::OptionValue;\n\
         \n\
         use super::{Options, budget_value, choice_value, set};\n",
    );
    let mut dispatch = String::new();
    for o in OPTIONS {
        let default = o.format(o.default_value());
        if let OptionKind::Choice(words) = o.kind {
            for (i, (name, word)) in choice_names(o).iter().zip(words).enumerate() {
                let d = if *word == default {
                    " (the default)"
                } else {
                    ""
                };
                s.push('\n');
                doc(
                    &mut s,
                    "",
                    &format!(
                        "`{}` {word}{d}: see `sleeplab_options_set_{}`.",
                        o.name, o.name
                    ),
                );
                let _ = writeln!(s, "pub const {name}: c_int = {i};");
            }
        }
        let (cname, args, value, range) = shape(o);
        let fname = format!("sleeplab_options_set_{cname}");
        s.push('\n');
        doc(
            &mut s,
            "",
            &format!("The `{}` option: {}. {range}.", o.name, o.doc),
        );
        s.push_str("///\n/// # Safety\n/// `options` is NULL or a live pointer from `sleeplab_options_new`.\n");
        s.push_str("#[unsafe(no_mangle)]\n");
        s.push_str(&signature(&fname, &args));
        let _ = writeln!(
            s,
            "    // SAFETY: forwarded from the caller.\n    unsafe {{ set(options, \"{}\", {value}) }}\n}}",
            o.name
        );
        let call = match o.kind {
            OptionKind::Choice(_) => format!("{fname}(options, c_int::try_from(v).ok()?)"),
            OptionKind::Count { .. } => format!("{fname}(options, u32::try_from(v).ok()?)"),
            OptionKind::Budget => format!("{fname}(options, v.0, v.1)"),
            _ => format!("{fname}(options, v)"),
        };
        let variant = match o.kind {
            OptionKind::Choice(_) => "Choice(v)",
            OptionKind::Duration { .. } => "Ns(v)",
            OptionKind::Count { .. } => "Count(v)",
            OptionKind::Number { .. } => "Number(v)",
            OptionKind::Budget => "Budget(v)",
        };
        let pattern = format!("(\"{}\", OptionValue::{variant})", o.name);
        if o.kind == OptionKind::Budget {
            let _ = writeln!(
                dispatch,
                "        {pattern} => {{\n            let v = super::tests::c_budget(v);\n            \
                 Some(unsafe {{ {call} }})\n        }}"
            );
        } else {
            // rustfmt keeps an arm on one line when it fits in 100 columns.
            let arm = format!("        {pattern} => Some(unsafe {{ {call} }}),");
            if arm.len() <= 100 {
                let _ = writeln!(dispatch, "{arm}");
            } else {
                let _ = writeln!(
                    dispatch,
                    "        {pattern} => {{\n            Some(unsafe {{ {call} }})\n        }}"
                );
            }
        }
    }
    s.push_str(
        "\n/// Calls the setter of option `name` with `value` in its C form; `None` for a value of\n\
         /// another kind or one C cannot express. For the tests that walk the table.\n\
         ///\n\
         /// # Safety\n\
         /// `options` is NULL or a live pointer from `sleeplab_options_new`.\n\
         #[cfg(test)]\n\
         pub(super) unsafe fn call_setter(\n    options: *mut Options,\n    name: &str,\n    \
         value: OptionValue,\n) -> Option<c_int> {\n    // SAFETY: forwarded from the caller.\n    \
         match (name, value) {\n",
    );
    s.push_str(&dispatch);
    s.push_str("        _ => None,\n    }\n}\n");
    s
}

#[test]
fn checked_in_setters_are_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/options/setters.rs");
    let generated = setters();
    if std::env::var_os("SLEEPLAB_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "src/options/setters.rs is stale: run `SLEEPLAB_BLESS=1 cargo test --release -p sleeplab-ffi` \
         (the header test after it regenerates include/sleeplab.h) and commit both"
    );
}
