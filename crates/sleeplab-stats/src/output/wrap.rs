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

#[cfg(test)]
mod tests {
    use super::*;

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
}
