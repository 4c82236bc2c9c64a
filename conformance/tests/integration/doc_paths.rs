//! Every repository path the documents name exists: README, `spec/`, `docs/`, the crates'
//! `NOTES.md`, and the doc comments (`//!`, `///`) of every Rust file, which are the crate docs.
//! A path in backquotes that ends in a file extension must name a file relative to the
//! repository root, to the document's own directory, to its crate's root or `src/`, or to
//! `model/src` (the spec names the model's files as `step/coordinator/mod.rs`); with a `:LINE`
//! suffix, the file must have that many lines. Placeholders (`DIR/suite.json`) and what runs
//! write (`mutants-runs/`) are not paths of the repository.

use crate::common;
use std::path::{Path, PathBuf};

const EXTENSIONS: &[&str] = &["rs", "md", "json", "sh", "toml", "txt", "py"];
/// The crates' directories: each is a base for relative paths, and its `NOTES.md` a document.
const CRATES: &[&str] = &["model", "impl", "stores", "wire", "conformance", "stdio"];
/// Other bases: the root, and `model/src`, which the spec names the model's files from.
const OTHER_BASES: &[&str] = &["", "model/src"];

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    for dir in ["spec", "docs"].iter().chain(CRATES) {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if (*dir == "spec" || *dir == "docs") && name.ends_with(".md") || name == "NOTES.md" {
                docs.push(p);
            }
        }
    }
    for dir in CRATES {
        common::files_with_ext(&root.join(dir), "rs", &mut docs);
    }
    docs.retain(|p| !p.components().any(|c| c.as_os_str() == "target"));
    docs.sort();
    docs
}

/// What of a document is prose: a Rust file's doc comments, the whole of anything else.
fn prose(doc: &Path, text: &str) -> String {
    if doc.extension().is_some_and(|e| e == "rs") {
        text.lines()
            .map(str::trim_start)
            .filter_map(|l| l.strip_prefix("//!").or_else(|| l.strip_prefix("///")))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_string()
    }
}

/// The backquoted spans of `text` that look like repository paths: a `/`, a known extension,
/// nothing but path characters, and an optional `:LINE`.
fn named_paths(text: &str) -> Vec<(String, Option<usize>)> {
    let mut out = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 || !span.contains('/') {
            continue;
        }
        let (path, line) = match span.rsplit_once(':') {
            Some((p, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                (p, n.parse().ok())
            }
            _ => (span, None),
        };
        let path_chars = path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
        let ext_ok = path
            .rsplit_once('.')
            .is_some_and(|(_, e)| EXTENSIONS.contains(&e));
        let placeholder = path
            .split('/')
            .any(|seg| seg.len() > 1 && seg.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        let written_by_runs = path.starts_with("mutants-runs/") || path.starts_with("/tmp/");
        if path_chars && ext_ok && !placeholder && !written_by_runs && !path.starts_with("http") {
            out.push((path.to_string(), line));
        }
    }
    out
}

fn resolve(root: &Path, doc: &Path, path: &str) -> Option<PathBuf> {
    let doc_dir = doc.parent().unwrap().to_path_buf();
    // A crate's file may name its siblings from the crate's `src/` (`zk/codec.rs`).
    let crate_src = CRATES
        .iter()
        .map(|c| root.join(c))
        .find(|c| doc.starts_with(c))
        .map(|c| c.join("src"));
    std::iter::once(doc_dir)
        .chain(crate_src)
        .chain(OTHER_BASES.iter().chain(CRATES).map(|b| root.join(b)))
        .map(|base| base.join(path))
        .find(|p| p.is_file())
}

#[test]
fn every_path_the_documents_name_exists() {
    let root = common::repo_root();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents(&root) {
        let text = prose(
            &doc,
            &std::fs::read_to_string(&doc).expect("readable document"),
        );
        for (path, line) in named_paths(&text) {
            checked += 1;
            let shown = doc.strip_prefix(&root).unwrap().display();
            match resolve(&root, &doc, &path) {
                None => missing.push(format!("{shown}: `{path}` does not exist")),
                Some(file) => {
                    if let Some(n) = line {
                        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
                        if n == 0 || n > lines {
                            missing
                                .push(format!("{shown}: `{path}:{n}` is past its {lines} lines"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: the scan is broken"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_scan_finds_paths_and_skips_placeholders() {
    let found = named_paths(
        "see `model/src/model.rs:12`, `DIR/suite.json`, `mutants-runs/x/caught.txt`, \
         `cargo test`, `a/b` and `impl/NOTES.md`",
    );
    assert_eq!(
        found,
        vec![
            ("model/src/model.rs".to_string(), Some(12)),
            ("impl/NOTES.md".to_string(), None)
        ]
    );
    let root = common::repo_root();
    assert!(resolve(&root, &root.join("README.md"), "spec/missing-file.md").is_none());
    let rust =
        "//! see `spec/protocol.md`\nlet x = \"`not/a/doc.rs`\";\n    /// and `wire/src/lib.rs`";
    assert_eq!(
        named_paths(&prose(Path::new("a.rs"), rust)),
        vec![
            ("spec/protocol.md".to_string(), None),
            ("wire/src/lib.rs".to_string(), None)
        ]
    );
}
