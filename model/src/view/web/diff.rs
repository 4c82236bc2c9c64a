//! Which lines of a state's text the last step changed: the lines of the new text that are not
//! in a longest common subsequence of the two texts' lines, as a line diff marks them. The
//! texts are tens of lines, so the quadratic table costs nothing.

/// For each line of `new`, whether it is changed (new or different) relative to `old`.
pub fn changed_lines(old: &[&str], new: &[&str]) -> Vec<bool> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: the length of a longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut changed = vec![true; m];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if old[i] == new[j] {
            changed[j] = false;
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    changed
}

/// How many lines of `old` the step removed (not matched in `new`).
pub fn removed_lines(old: &[&str], new: &[&str]) -> usize {
    let kept = changed_lines(old, new).iter().filter(|c| !**c).count();
    old.len() - kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_and_an_inserted_line_are_marked_and_nothing_else() {
        let old = ["a", "b", "c", "d"];
        let new = ["a", "B", "c", "x", "d"];
        assert_eq!(changed_lines(&old, &new), [false, true, false, true, false]);
        assert_eq!(removed_lines(&old, &new), 1);
    }

    #[test]
    fn identical_texts_have_no_change_and_an_empty_old_text_changes_everything() {
        let t = ["a", "b"];
        assert_eq!(changed_lines(&t, &t), [false, false]);
        assert_eq!(changed_lines(&[], &t), [true, true]);
        assert_eq!(removed_lines(&t, &[]), 2);
    }
}
