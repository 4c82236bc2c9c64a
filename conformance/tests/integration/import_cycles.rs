//! No two source files of a compilation unit import each other, directly or through others:
//! within each library, binary, example, bench and test target of every workspace crate, the
//! files' `use` and path references to other modules of the same target form a graph without
//! cycles. A cycle means neither file can be read, tested or moved without the other; the
//! layering the crates' docs describe (protocol below checks below views; projection types below
//! their renderings) is only true while this holds.
//!
//! The files of a target are found the way the compiler finds them: from its root (`src/lib.rs`,
//! `src/main.rs`, `src/bin/*`, `examples/*`, `benches/*`, `tests/*`), following each `mod NAME;`
//! to `NAME.rs` or `NAME/mod.rs`, or to the file its `#[path = "..."]` names. What counts as a
//! reference: `crate::a::b`, `super::a`, `self::a` and, in `use` items, a first segment naming a
//! child module (`use codec::X` in `stores/src/zk/mod.rs`), anywhere in a file's code outside
//! comments, string and character literals, and its `#[cfg(test)]` module. Declaring a child
//! (`mod a;`) is not a reference. A path resolves to the deepest module of the target it names.
//! Inline modules (`mod a { ... }`) count as part of their file.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One compilation unit's files: module path (segments below the unit's root) -> file.
type Unit = BTreeMap<Vec<String>, PathBuf>;

/// The workspace's crates, as the root manifest lists them: a crate added there is checked
/// without a change here.
fn crates(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members line in the workspace manifest");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The root files of a crate's targets: the library, the main binary, each `src/bin/` binary,
/// and each example, bench and test (a file, or a folder with `main.rs`).
fn target_roots(krate: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
        .iter()
        .map(|f| krate.join(f))
        .filter(|p| p.is_file())
        .collect();
    for dir in ["src/bin", "examples", "benches", "tests"] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(krate.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() && p.join("main.rs").is_file() {
                roots.push(p.join("main.rs"));
            } else if p.extension().is_some_and(|x| x == "rs") {
                roots.push(p);
            }
        }
    }
    roots
}

/// The unit whose root is `root`: every file reachable through `mod` declarations.
fn unit_from(root: &Path) -> Unit {
    let mut unit = Unit::new();
    let mut todo = vec![(Vec::new(), root.to_path_buf(), true)];
    while let Some((module, file, mod_rs)) = todo.pop() {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let dir = file.parent().expect("a file's folder");
        // Children of `a/b.rs` live in `a/b/`; of a root or `mod.rs`, beside it.
        let children_dir = if mod_rs {
            dir.to_path_buf()
        } else {
            dir.join(file.file_stem().expect("a file name"))
        };
        for (name, path) in declared_modules(&text) {
            let (child, child_mod_rs) = match path {
                Some(p) => {
                    let child = dir.join(p);
                    let is_mod_rs = child.file_name().is_some_and(|n| n == "mod.rs");
                    (child, is_mod_rs)
                }
                None => {
                    let flat = children_dir.join(format!("{name}.rs"));
                    if flat.is_file() {
                        (flat, false)
                    } else {
                        (children_dir.join(&name).join("mod.rs"), true)
                    }
                }
            };
            assert!(
                child.is_file(),
                "{} declares `mod {name};` but {} is not a file",
                file.display(),
                child.display()
            );
            let mut m = module.clone();
            m.push(name);
            todo.push((m, child, child_mod_rs));
        }
        unit.insert(module, file);
    }
    unit
}

/// The `mod NAME;` declarations of a file's code (outside its test module), each with the path
/// its `#[path = "..."]` attribute gives, if any.
fn declared_modules(text: &str) -> Vec<(String, Option<String>)> {
    let code = code(text);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("mod ") {
        let at = from + i;
        from = at + 4;
        if code[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let Some((name, tail)) = ident(code[from..].trim_start()) else {
            continue;
        };
        if !tail.trim_start().starts_with(';') {
            continue; // an inline module, part of this file
        }
        // The attributes of this item: back to the end of the previous item.
        let item_start = code[..at].rfind([';', '}', '{']).map_or(0, |j| j + 1);
        let path = code[item_start..at].find("#[path").map(|j| {
            // The literal is blanked in `code`; read it from the text at the same offsets.
            let attr = &text[item_start + j..at];
            let lit = attr
                .split('"')
                .nth(1)
                .expect("#[path = \"...\"] has a string");
            lit.to_string()
        });
        out.push((name.to_string(), path));
    }
    out
}

/// The file's code without comments, string and character literals (each byte of them a
/// space, newlines kept, so offsets match the text) and without its `#[cfg(test)]` module (by
/// convention the last item of a file). Lifetimes (`'a`) are code.
fn code(text: &str) -> String {
    let mut code = blank_comments_and_literals(text);
    code.truncate(test_module_start(&code).unwrap_or(code.len()));
    code
}

fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut out[from..to] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let word = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            // Block comments nest.
            let (mut depth, mut j) = (0usize, i);
            loop {
                if j >= b.len() {
                    break j;
                }
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break j;
                    }
                } else {
                    j += 1;
                }
            }
        } else if let Some(len) = raw_string_start(b, i).filter(|_| !word(i) || b[i - 1] == b'b') {
            // r"..", r#".."#, br#".."#: no escapes, ends at the quote and as many `#`.
            let hashes = len - 2;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + len;
            b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len())
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(b.len())
        } else if b[i] == b'\'' {
            char_literal_end(text, i).unwrap_or(i + 1)
        } else {
            i + 1
        };
        if end > i + 1 {
            blank(&mut out, i, end);
        }
        i = end.max(i + 1);
    }
    String::from_utf8(out).expect("only ASCII spaces replace bytes")
}

/// The length of `r"`, `r#"`, `r##"`... starting at `i` (the `r`), if one does.
fn raw_string_start(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'r') {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    (b.get(i + 1 + hashes) == Some(&b'"')).then_some(hashes + 2)
}

/// Where a character literal starting at `i` (a `'`) ends, or None for a lifetime or label.
fn char_literal_end(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i + 1..];
    if let Some(esc) = rest.strip_prefix('\\') {
        // '\n', '\'', '\\', '\u{1F600}', '\x7f'
        let close = esc.get(1..)?.find('\'')? + 1;
        return Some(i + 1 + 1 + close + 1);
    }
    let c = rest.chars().next()?;
    rest[c.len_utf8()..]
        .starts_with('\'')
        .then(|| i + 1 + c.len_utf8() + 1)
}

/// Where an inline `#[cfg(test)] mod NAME {` begins (other attributes may come between): inside
/// it `super` is the file's own module, so its references are not the file's.
fn test_module_start(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        from = at + 1;
        let item = text[at..]
            .lines()
            .skip(1)
            .map(str::trim)
            .find(|l| !l.starts_with("#[") && !l.is_empty());
        let module = |l: &str| {
            let l = ["pub(crate) ", "pub(super) ", "pub "]
                .iter()
                .find_map(|p| l.strip_prefix(p))
                .unwrap_or(l);
            l.starts_with("mod ") && l.ends_with('{')
        };
        if item.is_some_and(module) {
            return Some(at);
        }
    }
    None
}

fn ident(s: &str) -> Option<(&str, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| s.split_at(end))
}

/// Every path of a `use` tree (`a::{b, c::{d}}` -> a::b, a::c::d), as segments.
fn use_paths(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut rest = tree.trim();
    let mut path = prefix.to_vec();
    loop {
        if let Some(inner) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        use_paths(&inner[start..i], &path, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        use_paths(&inner[start..i], &path, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        match ident(rest) {
            Some((name, tail)) => {
                path.push(name.to_string());
                match tail.trim_start().strip_prefix("::") {
                    Some(t) => rest = t.trim_start(),
                    None => break,
                }
            }
            // A glob (`a::*`) keeps `*` as its last segment, for the re-export table.
            None if rest.starts_with('*') => {
                path.push("*".to_string());
                break;
            }
            None => break,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// The module paths `text` (the code of module `me`) refers to, absolute within its unit.
fn references(text: &str, me: &[String], unit: &Unit, exports: &Exports) -> Vec<Vec<String>> {
    let mut raw: Vec<Vec<String>> = Vec::new();
    // `use` items, with their trees.
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest.find(';').unwrap_or(rest.len());
        use_paths(&rest[..end], &[], &mut raw);
    }
    // Paths in code: `crate::`, `super::`, `self::`.
    for anchor in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(anchor) {
            let at = from + i;
            from = at + anchor.len();
            if text[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let mut segs = vec![anchor.trim_end_matches("::").to_string()];
            let mut tail = &text[from..];
            while let Some((name, t)) = ident(tail) {
                segs.push(name.to_string());
                match t.strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            raw.push(segs);
        }
    }
    // The module `super` and `self` stand for: a file `a/b.rs` is module a::b; `self` is
    // itself, `super` its parent.
    let parent = me[..me.len().saturating_sub(1)].to_vec();
    raw.into_iter()
        .filter_map(|segs| {
            let (base, rest) = match segs[0].as_str() {
                "crate" => (Vec::new(), &segs[1..]),
                "super" => {
                    let mut base = parent.clone();
                    let mut rest = &segs[1..];
                    while rest.first().is_some_and(|s| s == "super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    (base, rest)
                }
                "self" => (me.to_vec(), &segs[1..]),
                first => {
                    // A relative `use` of a child module (`use codec::X` in zk/mod.rs).
                    let mut child = me.to_vec();
                    child.push(first.to_string());
                    if unit.contains_key(&child) {
                        (me.to_vec(), &segs[..])
                    } else {
                        return None;
                    }
                }
            };
            Some(deepest(base, rest, unit, exports))
        })
        .collect()
}

/// The deepest module of the unit that `base::rest` names. A name the unit's root re-exports
/// (`pub use a::b::Name;`, `pub use a::*;`) is followed to the module that defines it, so that
/// `crate::Name` is an edge to that module and not to the root.
fn deepest(base: Vec<String>, rest: &[String], unit: &Unit, exports: &Exports) -> Vec<String> {
    let mut module = base.clone();
    let mut best = base;
    for (i, s) in rest.iter().enumerate() {
        module.push(s.clone());
        if unit.contains_key(&module) {
            best = module.clone();
            continue;
        }
        if best.is_empty() && i == 0 {
            if let Some(path) = exports.named.get(s) {
                return deepest(Vec::new(), path, unit, &Exports::default());
            }
            if let Some(m) = exports.globs.iter().find(|m| defines(&unit[*m], s)) {
                return m.clone();
            }
        }
        break;
    }
    best
}

/// What a unit's root re-exports: names to their paths, and the modules it re-exports whole.
#[derive(Default)]
struct Exports {
    named: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

fn exports(unit: &Unit) -> Exports {
    let mut out = Exports::default();
    let Some(root) = unit.get(&Vec::new()) else {
        return out;
    };
    let text = code(&std::fs::read_to_string(root).expect("read source"));
    let mut rest = text.as_str();
    while let Some(i) = rest.find("pub use ") {
        rest = &rest[i + 8..];
        let end = rest.find(';').unwrap_or(rest.len());
        let mut paths = Vec::new();
        use_paths(&rest[..end], &[], &mut paths);
        for mut path in paths {
            if path.first().is_some_and(|s| s == "crate") {
                path.remove(0);
            }
            match path.last().map(String::as_str) {
                Some("*") => {
                    path.pop();
                    out.globs.push(path);
                }
                Some(name) => {
                    out.named.insert(name.to_string(), path.clone());
                }
                None => {}
            }
        }
    }
    out
}

/// Whether a module's file defines an item called `name`.
fn defines(file: &Path, name: &str) -> bool {
    let text = code(&std::fs::read_to_string(file).expect("read source"));
    ["struct", "enum", "type", "fn", "const", "trait", "static"]
        .iter()
        .any(|kind| {
            text.contains(&format!("pub {kind} {name} "))
                || text.contains(&format!("pub {kind} {name}("))
                || text.contains(&format!("pub {kind} {name}<"))
                || text.contains(&format!("pub {kind} {name}:"))
                || text.contains(&format!("pub {kind} {name};"))
        })
}

/// The cycles (strongly connected components of more than one file) of a graph.
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    // Kosaraju: order by finish time, then collect components on the reversed graph.
    let nodes: Vec<&PathBuf> = edges.keys().collect();
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in &nodes {
        let mut stack = vec![(*n, false)];
        while let Some((v, done)) = stack.pop() {
            if done {
                order.push(v);
                continue;
            }
            if !seen.insert(v) {
                continue;
            }
            stack.push((v, true));
            for w in &edges[v] {
                if !seen.contains(w) {
                    stack.push((w, false));
                }
            }
        }
    }
    let mut reverse: BTreeMap<&PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    for (v, ws) in edges {
        for w in ws {
            reverse.entry(w).or_default().push(v);
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for v in order.into_iter().rev() {
        if assigned.contains(v) {
            continue;
        }
        let mut component = Vec::new();
        let mut stack = vec![v];
        assigned.insert(v);
        while let Some(x) = stack.pop() {
            component.push(x.clone());
            for w in reverse.get(x).into_iter().flatten() {
                if assigned.insert(*w) {
                    stack.push(w);
                }
            }
        }
        if component.len() > 1 {
            component.sort();
            out.push(component);
        }
    }
    out
}

fn graph_of(unit: &Unit) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let exports = exports(unit);
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (module, file) in unit {
        let text = code(&std::fs::read_to_string(file).expect("read source"));
        let targets = edges.entry(file.clone()).or_default();
        for target in references(&text, module, unit, &exports) {
            let to = &unit[&target];
            if to != file {
                targets.insert(to.clone());
            }
        }
    }
    edges
}

#[test]
fn no_two_files_of_a_target_import_each_other() {
    let root = common::repo_root();
    let mut found = Vec::new();
    let (mut files, mut targets) = (0, 0);
    for krate in crates(&root) {
        for target in target_roots(&root.join(&krate)) {
            let unit = unit_from(&target);
            files += unit.len();
            targets += 1;
            let graph = graph_of(&unit);
            let name = |p: &PathBuf| p.strip_prefix(&root).unwrap_or(p).display().to_string();
            for cycle in cycles(&graph) {
                // Each edge inside the cycle, so the report says which import to remove.
                let inside: BTreeSet<&PathBuf> = cycle.iter().collect();
                let mut text = format!("a cycle of {} files in {}:", cycle.len(), name(&target));
                for from in &cycle {
                    for to in graph[from].iter().filter(|t| inside.contains(t)) {
                        text.push_str(&format!("\n  {} -> {}", name(from), name(to)));
                    }
                }
                found.push(text);
            }
        }
    }
    assert!(
        files > 100 && targets > 20,
        "only {files} files in {targets} targets found: wrong root?"
    );
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// A made-up crate in a fresh temporary folder, its files written from (path, text) pairs;
/// removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str, files: &[(&str, &str)]) -> Scratch {
        let dir = std::env::temp_dir().join(format!("import-cycles-{tag}-{}", std::process::id()));
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Scratch(dir)
    }

    /// The graph of the unit rooted at `root`, as file names relative to `src`.
    fn edges(&self, root: &str) -> BTreeMap<String, BTreeSet<String>> {
        let src = self.0.join("src");
        let rel = |p: &PathBuf| p.strip_prefix(&src).unwrap().display().to_string();
        graph_of(&unit_from(&self.0.join(root)))
            .iter()
            .map(|(from, to)| (rel(from), to.iter().map(rel).collect()))
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn edges(pairs: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
    pairs
        .iter()
        .map(|(f, to)| (f.to_string(), to.iter().map(|t| t.to_string()).collect()))
        .collect()
}

/// The check sees a cycle when there is one: two modules of a made-up unit that use each other,
/// one by `crate::`, the other by `super::` and a child `use`.
#[test]
fn a_cycle_through_crate_super_and_child_paths_is_found() {
    let scratch = Scratch::new(
        "paths",
        &[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a/mod.rs", "mod c;\nuse c::{Thing, other::{X}};\n"),
            (
                "src/a/c.rs",
                "// use crate::b; (a comment)\nuse crate::b::Y;\n",
            ),
            ("src/b.rs", "fn f() { super::a::g() }\n"),
        ],
    );
    let graph = scratch.edges("src/lib.rs");
    let found = cycles(&graph_of(&unit_from(&scratch.0.join("src/lib.rs"))));
    assert_eq!(found.len(), 1, "{graph:?}");
    assert_eq!(
        graph,
        edges(&[
            ("lib.rs", &[]),
            ("a/mod.rs", &["a/c.rs"]),
            ("a/c.rs", &["b.rs"]),
            ("b.rs", &["a/mod.rs"]),
        ])
    );
}

/// Code is read as the compiler reads it: a `//` inside a string (`"http://"`) does not hide
/// the rest of its line, paths inside string, raw string and block comments are not references,
/// a `'"'` does not open a string, a lifetime does not open a character, and `#[path]` leads to
/// the file it names. Each decoy below would add the edge b.rs -> a.rs, or hide a -> b.
#[test]
fn strings_comments_and_path_attributes_are_read_as_the_compiler_reads_them() {
    let scratch = Scratch::new(
        "lexer",
        &[
            (
                "src/lib.rs",
                "mod a;\nmod b;\n#[path = \"elsewhere/c_file.rs\"]\nmod c;\n",
            ),
            (
                "src/a.rs",
                "pub fn f() { let _q = '\"'; let _u = \"http://h\"; crate::b::g() }\n",
            ),
            (
                "src/b.rs",
                "/* crate::a /* nested */ crate::a */\n\
                 const S: &str = r#\"crate::a \"quoted\" \"#;\n\
                 const T: &str = \"say \\\"crate::a\\\"\";\n\
                 fn h<'x>(s: &'x str) -> char { let _ = s; '\\'' }\n\
                 pub fn g() { crate::c::k() }\n",
            ),
            ("src/elsewhere/c_file.rs", "pub fn k() { super::a::f() }\n"),
        ],
    );
    assert_eq!(
        scratch.edges("src/lib.rs"),
        edges(&[
            ("lib.rs", &[]),
            ("a.rs", &["b.rs"]),
            ("b.rs", &["elsewhere/c_file.rs"]),
            ("elsewhere/c_file.rs", &["a.rs"]),
        ])
    );
}

/// Examples, benches and tests are targets too: an example's two files that use each other are
/// a cycle, found from `examples/NAME/main.rs`.
#[test]
fn example_targets_are_read() {
    let scratch = Scratch::new(
        "example",
        &[
            ("src/lib.rs", "pub fn lib() {}\n"),
            (
                "examples/tool/main.rs",
                "mod one;\nmod two;\nfn main() {}\n",
            ),
            (
                "examples/tool/one.rs",
                "use crate::two::B;\npub struct A;\n",
            ),
            (
                "examples/tool/two.rs",
                "use crate::one::A;\npub struct B;\n",
            ),
            ("benches/speed.rs", "fn main() {}\n"),
        ],
    );
    let roots: Vec<String> = target_roots(&scratch.0)
        .iter()
        .map(|p| p.strip_prefix(&scratch.0).unwrap().display().to_string())
        .collect();
    assert_eq!(
        roots,
        ["src/lib.rs", "examples/tool/main.rs", "benches/speed.rs"]
    );
    let found = cycles(&graph_of(&unit_from(
        &scratch.0.join("examples/tool/main.rs"),
    )));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 2);
}
