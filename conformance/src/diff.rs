//! A readable, line-oriented side-by-side diff for divergence reports.
//!
//! Both sides are rendered as `key: value` lines in the same order (the projection guarantees the
//! same keys), so a positional comparison is enough and keeps the report stable.

/// One line of a side-by-side comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub model: String,
    pub manager: String,
}

impl DiffLine {
    pub fn differs(&self) -> bool {
        self.model != self.manager
    }
}

fn key_of(line: &str) -> &str {
    line.split_once(": ").map_or(line, |(k, _)| k)
}

/// Pairs the lines of the two renderings by their `key:` prefix, so a line present on one side
/// only shows against an empty cell instead of shifting every later line.
pub fn side_by_side(model: &str, manager: &str) -> Vec<DiffLine> {
    let left: Vec<&str> = model.lines().collect();
    let right: Vec<&str> = manager.lines().collect();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let pair = |m: &str, g: &str| DiffLine {
        model: m.to_string(),
        manager: g.to_string(),
    };
    while i < left.len() || j < right.len() {
        match (left.get(i), right.get(j)) {
            (Some(l), Some(r)) if key_of(l) == key_of(r) => {
                out.push(pair(l, r));
                i += 1;
                j += 1;
            }
            (Some(l), Some(r)) => {
                if right[j..].iter().any(|x| key_of(x) == key_of(l)) {
                    out.push(pair("", r));
                    j += 1;
                } else {
                    out.push(pair(l, ""));
                    i += 1;
                }
            }
            (Some(l), None) => {
                out.push(pair(l, ""));
                i += 1;
            }
            (None, Some(r)) => {
                out.push(pair("", r));
                j += 1;
            }
            (None, None) => unreachable!("loop condition"),
        }
    }
    out
}

/// Renders only the differing lines (with one line of context each side), marked with `!`.
pub fn render(lines: &[DiffLine]) -> String {
    render_as(lines, "manager")
}

/// [`render`], with the right-hand column named `right` (a validated log's, for one).
pub fn render_as(lines: &[DiffLine], right: &str) -> String {
    let width = lines
        .iter()
        .map(|l| l.model.len())
        .max()
        .unwrap_or(0)
        .clamp(5, 70);
    let mut shown = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if line.differs() {
            let last = (i + 1).min(lines.len() - 1);
            shown[i.saturating_sub(1)..=last].fill(true);
        }
    }
    let mut out = format!("  {:<width$} | {right}\n", "model");
    let mut skipped = false;
    for (i, line) in lines.iter().enumerate() {
        if !shown[i] {
            skipped = true;
            continue;
        }
        if skipped {
            out.push_str("  ...\n");
            skipped = false;
        }
        let mark = if line.differs() { '!' } else { ' ' };
        out.push_str(&format!(
            "{mark} {:<width$} | {}\n",
            line.model, line.manager
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_differing_lines_and_context_are_rendered() {
        let model = "a: 1\nb: 2\nc: 3\nd: 4\ne: 5";
        let manager = "a: 1\nb: 2\nc: 9\nd: 4\ne: 5";
        let text = render(&side_by_side(model, manager));
        assert!(text.contains("! c: 3"));
        assert!(text.contains("| c: 9"));
        assert!(text.contains("  b: 2"));
        assert!(!text.contains("a: 1"), "{text}");
    }

    #[test]
    fn a_line_on_one_side_only_does_not_shift_the_rest() {
        let lines = side_by_side("a: 1\nc: 3", "a: 1\nb: 2\nc: 3");
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].model, "");
        assert_eq!(lines[1].manager, "b: 2");
        assert!(!lines[2].differs());
    }

    #[test]
    fn a_missing_line_is_a_difference() {
        let lines = side_by_side("a\nb", "a");
        assert!(lines[1].differs());
        assert!(!lines[0].differs());
    }
}
