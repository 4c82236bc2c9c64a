//! `--sut 'COMMAND'` as a program and its arguments: split on whitespace, with single quotes,
//! double quotes and backslashes as a POSIX shell reads them (no variables, globs or pipes: the
//! program is started directly, so the harness's child is the implementation itself and a
//! timeout kills it by its id). Wrap a pipeline in `sh -c '...'` if one is needed.

/// A malformed `--sut` command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Nothing to run.
    #[error("the --sut command is empty")]
    Empty,
    /// A quote is not closed.
    #[error("the --sut command has an unclosed {0} quote")]
    Unclosed(&'static str),
    /// A backslash ends the command.
    #[error("the --sut command ends with a backslash")]
    TrailingBackslash,
}

/// The words of `command`.
pub fn split(command: &str) -> Result<Vec<String>, CommandError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(CommandError::Unclosed("single")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(CommandError::Unclosed("double")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(CommandError::Unclosed("double")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(CommandError::TrailingBackslash),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(w) = word {
        words.push(w);
    }
    if words.is_empty() {
        return Err(CommandError::Empty);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(
            split(r#"sh -c 'echo "a b"; exit 3' x\ y "q\"r" '' "#).unwrap(),
            vec!["sh", "-c", r#"echo "a b"; exit 3"#, "x y", "q\"r", ""]
        );
        assert_eq!(split("  "), Err(CommandError::Empty));
        assert_eq!(split("sh -c 'x"), Err(CommandError::Unclosed("single")));
        assert_eq!(split("a\\"), Err(CommandError::TrailingBackslash));
    }
}
