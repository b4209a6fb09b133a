//! HTML escaping. Every string that comes from a result file (host names, kernel
//! versions, mechanism names, notes, errors, command lines) is hostile until escaped:
//! a result may come from another machine or have been edited by hand.

/// Escapes text for HTML element content and double- or single-quoted attribute values.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters have no business in a report; keep them visible.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A string safe as an HTML `id` or CSS class: ASCII letters, digits and `-`, everything
/// else replaced by `-`.
pub fn ident(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if out.is_empty() || !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert(0, 'x');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            html(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(html("plain µs ×"), "plain µs ×");
        assert!(!html("a\u{1b}[31mb\0").contains('\u{1b}'));
        assert!(!html("a\0b").contains('\0'));
    }

    #[test]
    fn idents_are_safe() {
        assert_eq!(ident("clock-nanosleep"), "clock-nanosleep");
        assert_eq!(ident("<x y=\"1\">"), "x-x-y--1--");
        assert_eq!(ident("9lives"), "x9lives");
        assert_eq!(ident(""), "x");
    }
}
