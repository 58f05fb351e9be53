//! The shape of the crate, enforced: the layers `src/lib.rs` declares (each group of modules begins with a
//! `// layer:` line) are read from it, every module's imports are read from its source, and an import that reaches
//! a higher layer, or any cycle between modules (a top-level module, or a submodule of one), fails here with the
//! file and the path that broke the rule. It reads the source as text: `crate::a::b` paths and `use crate::{..}`
//! groups, and `super::x` naming a sibling submodule; doc comments and test modules are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`["store", "turns"]`) → the source with comments and its test module removed.
fn sources() -> BTreeMap<Vec<String>, (PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap().with_extension("");
        let path: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path == ["lib"] || path == ["main"] {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        let code: String = text
            .lines()
            .map(|l| match l.find("//") {
                // a line's comment; `://` is a URL inside a string
                Some(i) if !l[..i].ends_with(':') => &l[..i],
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        out.insert(path, (f, code));
    }
    out
}

/// The identifiers right after `prefix` in `code` (the first segment of each path).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the names at the group's top level
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(split(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 && c != '}' {
                    item.push(c);
                }
            }
            out.push(split(item.trim()));
        } else {
            out.push(split(rest));
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

fn split(s: &str) -> Vec<String> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(s.len());
    s[..end]
        .split("::")
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// The modules each module imports: top-level modules, and the submodules of one named where they exist.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = sources();
    let known: BTreeSet<Vec<String>> = src.keys().cloned().collect();
    // the longest known module a path names
    let module = |segments: &[String]| -> Option<Vec<String>> {
        (1..=segments.len().min(2)).rev().find_map(|n| {
            let m: Vec<String> = segments[..n].to_vec();
            known.contains(&m).then_some(m)
        })
    };
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (me, (_, code)) in &src {
        let mine = me[..me.len().min(2)].to_vec();
        let deps = g.entry(mine.clone()).or_default();
        for p in paths_after(code, "crate::") {
            if let Some(m) = module(&p) {
                deps.insert(m);
            }
        }
        if me.len() >= 2 {
            for p in paths_after(code, "super::") {
                let mut full: Vec<String> = me[..me.len() - 1].to_vec();
                full.extend(p);
                if let Some(m) = module(&full) {
                    deps.insert(m);
                }
            }
        }
        deps.retain(|d| *d != mine && !mine.starts_with(d) && !d.starts_with(&mine));
    }
    g
}

/// `src/lib.rs`'s layers: each top-level module's layer number (0 lowest) and the layers' titles.
fn layers() -> (BTreeMap<String, usize>, Vec<String>) {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut of = BTreeMap::new();
    let mut titles = Vec::new();
    for line in lib.lines() {
        if let Some(t) = line.strip_prefix("// layer:") {
            titles.push(t.split('.').next().unwrap_or("").trim().to_string());
        } else if let Some(m) = line.trim().strip_prefix("pub mod ") {
            assert!(
                !titles.is_empty(),
                "src/lib.rs: `{line}` before any `// layer:` line"
            );
            of.insert(m.trim_end_matches(';').to_string(), titles.len() - 1);
        }
    }
    (of, titles)
}

#[test]
fn every_module_is_in_a_layer_and_imports_only_its_own_and_lower_ones() {
    let (of, titles) = layers();
    assert!(
        titles.len() >= 5,
        "src/lib.rs declares {} layers",
        titles.len()
    );
    let g = graph();
    let mut wrong = Vec::new();
    for (me, deps) in &g {
        let Some(&mine) = of.get(&me[0]) else {
            wrong.push(format!("src/{}.rs is in no layer of src/lib.rs", me[0]));
            continue;
        };
        for d in deps {
            if let Some(&theirs) = of.get(&d[0])
                && theirs > mine
            {
                wrong.push(format!(
                    "{} ({}) imports {} ({})",
                    me.join("::"),
                    titles[mine],
                    d.join("::"),
                    titles[theirs]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other_however_indirectly() {
    let g = graph();
    // Tarjan's strongly connected components, iteratively small enough to recurse: the graph has ~150 nodes.
    struct T<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        cycles: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[w].min(self.low[v]);
                    self.low.insert(v, l);
                } else if self.stack.contains(&w) {
                    let l = self.index[w].min(self.low[v]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    comp.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.cycles.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g: &g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        cycles: Vec::new(),
    };
    let nodes: BTreeSet<&Vec<String>> = g.keys().chain(g.values().flatten()).collect();
    for v in nodes {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    let shown: Vec<String> = t.cycles.iter().map(|c| c.join(" ↔ ")).collect();
    assert!(
        shown.is_empty(),
        "modules that import each other:\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_core_never_names_a_ui_toolkit_and_the_window_never_writes_sql() {
    let mut wrong = Vec::new();
    for (me, (file, code)) in sources() {
        let shell = me[0] == "window" || me[0] == "cli";
        for toolkit in ["egui", "eframe", "rfd::"] {
            if !shell && code.contains(toolkit) {
                wrong.push(format!("{} names {toolkit}", file.display()));
            }
        }
        if me[0] == "window" && code.contains("rusqlite") {
            wrong.push(format!("{} uses rusqlite", file.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reader_finds_what_it_must() {
    // the checks above are only as good as this reading of paths
    let code = "use crate::{model::Role, store::{A, B}};\nlet x = crate::reclaim::marker::Kept::All;\nsuper::sources::record(x)";
    let mut crate_paths = paths_after(code, "crate::");
    crate_paths.sort();
    assert_eq!(
        crate_paths,
        vec![
            vec!["model", "Role"],
            vec!["reclaim", "marker", "Kept", "All"],
            vec!["store"]
        ]
    );
    assert_eq!(
        paths_after(code, "super::"),
        vec![vec!["sources", "record"]]
    );
    let g = graph();
    assert!(
        g[&vec!["store".to_string(), "merge".to_string()]]
            .contains(&vec!["store".to_string(), "turns".to_string()])
    );
    assert!(g[&vec!["cli".to_string()]].contains(&vec!["commands".to_string()]));
}
