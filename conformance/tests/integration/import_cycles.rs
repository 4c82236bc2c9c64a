//! No two source files of a crate import each other, directly or through others: within each
//! crate (and each binary), the files' `use` and path references to other modules of the same
//! crate form a graph without cycles. A cycle means neither file can be read, tested or moved
//! without the other; the layering the crates' docs describe (protocol below checks below
//! views; projection types below their renderings) is only true while this holds.
//!
//! What counts as a reference: `crate::a::b`, `super::a`, `self::a` and, in `use` items, a first
//! segment naming a child module (`use codec::X` in `stores/src/zk/mod.rs`), anywhere in a
//! file's code outside comments and its `#[cfg(test)]` module. Declaring a child (`mod a;`) is
//! not a reference. A path resolves to the deepest module of the crate it names.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &["model", "impl", "stores", "wire", "conformance", "stdio"];

/// One compilation unit's files: module path (segments below the unit's root) -> file.
type Unit = BTreeMap<Vec<String>, PathBuf>;

/// The units of one crate's `src/`: the library, `src/main.rs` and each `src/bin/NAME/`.
fn units(src: &Path) -> Vec<Unit> {
    let mut files = Vec::new();
    common::files_with_ext(src, "rs", &mut files);
    let mut lib = Unit::new();
    let mut bins: BTreeMap<String, Unit> = BTreeMap::new();
    for f in files {
        let rel: Vec<String> = f
            .strip_prefix(src)
            .unwrap()
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let (unit, rest) = match rel.as_slice() {
            [main] if main == "main.rs" => (bins.entry("main".into()).or_default(), vec![]),
            [bin, name, rest @ ..] if bin == "bin" => {
                (bins.entry(name.clone()).or_default(), rest.to_vec())
            }
            [bin, _] if bin == "bin" => continue,
            _ => (&mut lib, rel.clone()),
        };
        let mut module: Vec<String> = rest
            .iter()
            .map(|s| s.trim_end_matches(".rs").to_string())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        unit.insert(module, f);
    }
    std::iter::once(lib).chain(bins.into_values()).collect()
}

/// The file's code without comments and without its `#[cfg(test)]` module (by convention the
/// last item of a file).
fn code(text: &str) -> String {
    let text = &text[..test_module_start(text).unwrap_or(text.len())];
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    let text = std::fs::read_to_string(file).expect("read source");
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
fn no_two_files_of_a_crate_import_each_other() {
    let root = common::repo_root();
    let mut found = Vec::new();
    let mut files = 0;
    for krate in CRATES {
        for unit in units(&root.join(krate).join("src")) {
            files += unit.len();
            let graph = graph_of(&unit);
            let name = |p: &PathBuf| p.strip_prefix(&root).unwrap().display().to_string();
            for cycle in cycles(&graph) {
                // Each edge inside the cycle, so the report says which import to remove.
                let inside: BTreeSet<&PathBuf> = cycle.iter().collect();
                let mut text = format!("a cycle of {} files:", cycle.len());
                for from in &cycle {
                    for to in graph[from].iter().filter(|t| inside.contains(t)) {
                        text.push_str(&format!("\n  {} -> {}", name(from), name(to)));
                    }
                }
                found.push(text);
            }
        }
    }
    assert!(files > 50, "only {files} source files found: wrong root?");
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The check sees a cycle when there is one: two modules of a made-up unit that use each other,
/// one by `crate::`, the other by `super::` and a child `use`.
#[test]
fn a_cycle_through_crate_super_and_child_paths_is_found() {
    let dir = std::env::temp_dir().join(format!("import-cycles-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(
        src.join("a/mod.rs"),
        "mod c;\nuse c::{Thing, other::{X}};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a/c.rs"),
        "// use crate::b; (a comment)\nuse crate::b::Y;\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "fn f() { super::a::g() }\n").unwrap();
    let units = units(&src);
    let found = cycles(&graph_of(&units[0]));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let names: Vec<String> = found[0]
        .iter()
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["a/c.rs", "a/mod.rs", "b.rs"]);
}
