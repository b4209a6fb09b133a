//! Text wrapped to the terminal's width, a number kept with its unit.

/// `text` after `lead`, wrapped at `width` columns, the lines after the first indented
/// by `indent` spaces; a number and its unit stay on one line. The terminal's one
/// wrapping: the answer's lines, the survey's findings, every command's notes and the
/// kernel's account around its table.
pub fn wrap(lead: &str, text: &str, width: usize, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let mut out = vec![lead.trim_end().to_string()];
    let mut words = text.split_whitespace().peekable();
    while let Some(first) = words.next() {
        // A number and its unit (`0.37 %`, `1.08 ms,`) stay on one line.
        let mut word = first.to_string();
        if let Some(unit) = words.next_if(|w| is_unit(w)) {
            word = format!("{word} {unit}");
        }
        let last = out.last_mut().expect("one line at least");
        let (used, w) = (last.chars().count(), word.chars().count());
        if used + 1 + w > width && used > indent {
            out.push(format!("{pad}{word}"));
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(&word);
        }
    }
    out
}

/// Whether `word` is a unit (`%`, `ns`, `µs`, `ms`, `s`), with trailing punctuation.
fn is_unit(word: &str) -> bool {
    let bare = word.trim_end_matches([',', '.', ';', ':', ')']);
    ["%", "ns", "µs", "ms", "s"].contains(&bare)
}

/// `text` with every line longer than `width` broken at its spaces, the lines after a
/// line's first indented two more than it; the others as they are. A line keeps its own
/// spacing (an aligned legend stays aligned) and a number keeps its unit. Tables fit
/// the width themselves ([`super::TermTable`]): what is still too long is prose.
pub fn fit_lines(text: &str, width: Option<u16>) -> String {
    let Some(width) = width.map(usize::from) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let indent = body.len() - body.trim_start().len();
        let pad = " ".repeat(indent + 2);
        let mut rest: String = body.to_string();
        let mut first = true;
        while rest.chars().count() > width {
            let Some(at) = break_at(&rest, width, if first { indent } else { indent + 2 }) else {
                break;
            };
            out.push_str(rest[..at].trim_end());
            out.push('\n');
            rest = format!("{pad}{}", rest[at..].trim_start());
            first = false;
        }
        out.push_str(&rest);
        out.push_str(end);
    }
    out
}

/// The byte index of the space to break `line` at so its head fits `width` characters:
/// the last one within it past the `indent` that parts neither a number from its unit
/// nor a comparison from its number (`≥ 10 %` is one word); where none does, the first
/// such space after the head, so the too-long word gets a line of its own; else any
/// space; `None` where the line has none past its indent.
fn break_at(line: &str, width: usize, indent: usize) -> Option<usize> {
    let ok = |i: usize| {
        let next = line[i..].split_whitespace().next().unwrap_or("");
        let before = line[..i].split_whitespace().last().unwrap_or("");
        // A unit binds to the word before it, unless that is a unit itself.
        let unit_pair = is_unit(next) && !is_unit(before);
        !line[..i].ends_with(' ')
            && !unit_pair
            && !["≥", "≤", "<", ">", "=", "±", "×"].contains(&before)
    };
    let spaces: Vec<usize> = line
        .char_indices()
        .filter(|&(i, c)| c == ' ' && i > indent)
        .map(|(i, _)| i)
        .collect();
    let within = line
        .char_indices()
        .nth(width + 1)
        .map_or(line.len(), |(i, _)| i);
    spaces
        .iter()
        .rev()
        .copied()
        .filter(|&i| i < within)
        .find(|&i| ok(i))
        .or_else(|| spaces.iter().copied().find(|&i| i >= within && ok(i)))
        // Nowhere a pair allows (units in a row): any space, as a plain word would.
        .or_else(|| spaces.iter().rev().copied().find(|&i| i < within))
        .or_else(|| spaces.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lines_longer_than_the_width_are_wrapped_with_their_indent() {
        let text = "short\n  • a bullet that goes on and on past the width\nend";
        let fitted = fit_lines(text, Some(20));
        assert_eq!(
            fitted,
            "short\n  • a bullet that\n    goes on and on\n    past the width\nend"
        );
        assert!(fitted.lines().all(|l| l.chars().count() <= 20));
        assert_eq!(fit_lines(text, None), text);
        assert_eq!(fit_lines("a\n", Some(20)), "a\n");
        // Its own spacing kept; a number with its unit; µ is one character, not two.
        assert_eq!(
            fit_lines("x  ' ' < 1 %  '.' ≥ 10 µs", Some(18)),
            "x  ' ' < 1 %  '.'\n  ≥ 10 µs"
        );
        assert_eq!(
            fit_lines("late by 12.5 µs here", Some(14)),
            "late by\n  12.5 µs here"
        );
    }

    #[test]
    fn wrapping_keeps_every_word_within_the_width() {
        let lines = wrap("Label: ", "aaa bbb ccc ddd eee", 12, 2);
        assert_eq!(lines, ["Label: aaa", "  bbb ccc", "  ddd eee"]);
        assert_eq!(wrap("L: ", "", 12, 2), ["L:"]);
        // A unit stays with its number.
        assert_eq!(wrap("L: ", "at 0.37 %).", 8, 2), ["L: at", "  0.37 %)."]);
        assert_eq!(
            wrap("L: ", "took 1.08 ms, a", 12, 2),
            ["L: took", "  1.08 ms, a"]
        );
    }

    proptest::proptest! {
        /// Whatever the text and width: no word is lost, added or reordered, and a line
        /// longer than the width is one that cannot break (a single word after its indent).
        #[test]
        fn fitting_keeps_the_words_and_the_width(
            words in proptest::collection::vec("[a-z]{1,12}|µs|%", 0..40),
            indent in 0usize..4,
            width in 8u16..60,
        ) {
            let text = format!("{}{}", " ".repeat(indent), words.join(" "));
            let fitted = fit_lines(&text, Some(width));
            let norm = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(norm(&fitted), norm(&text));
            for line in fitted.lines() {
                let w = line.chars().count();
                proptest::prop_assert!(
                    w <= usize::from(width) || line.trim().split(' ').count() <= 2,
                    "{} > {}: {:?}", w, width, line
                );
            }
        }
    }
}
