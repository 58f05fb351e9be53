//! Code and tool output highlighted at export time, as classes and one stylesheet (no script, no inline colours),
//! with syntect's bundled Sublime syntaxes. Highlighting is bounded: a block over [`MAX_BYTES`] is shown plain, so
//! a megabyte of log costs no more than escaping it, and a page highlights at most [`PAGE_BUDGET`] bytes of code in
//! all (highlighting makes a block about six times larger and is most of an export's time: past the budget code is
//! shown plain, so a page of a 100k-message session is written in seconds and stays a size a browser opens).

use std::cell::Cell;
use std::sync::OnceLock;

use syntect::highlighting::ThemeSet;
use syntect::html::{ClassStyle, ClassedHTMLGenerator, css_for_theme_with_class_style};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Blocks larger than this are shown unhighlighted.
pub const MAX_BYTES: usize = 64 * 1024;

/// Bytes of code one page highlights, in page order.
pub const PAGE_BUDGET: usize = 128 * 1024;

thread_local! {
    /// What the page being drawn on this thread may still highlight (no limit outside a page).
    static LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Runs `f` with `budget` bytes to highlight on this thread; what it returned, and the budget it left.
pub fn with_budget<T>(budget: usize, f: impl FnOnce() -> T) -> (T, usize) {
    let before = LEFT.replace(budget);
    let out = f();
    (out, LEFT.replace(before))
}

const STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "hl-" };

fn syntaxes() -> &'static SyntaxSet {
    static S: OnceLock<SyntaxSet> = OnceLock::new();
    S.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Names a reader or a fence uses that syntect knows by another.
fn token(lang: &str) -> &str {
    match lang {
        "sh" | "bash" | "zsh" | "shell" | "console" => "sh",
        "ts" | "tsx" | "typescript" | "mts" | "cts" => "js",
        "jsx" | "mjs" | "cjs" | "javascript" => "js",
        "yml" => "yaml",
        "toml" => "ini",
        "jsonl" | "jsonc" => "json",
        "py" | "python" => "py",
        "rust" => "rs",
        other => other,
    }
}

/// `text` as highlighted HTML (escaped, wrapped in classed spans) when `lang` names a known syntax and the text is
/// small enough; else None (the caller shows it plain).
pub fn code(text: &str, lang: &str) -> Option<String> {
    if lang.is_empty() || text.len() > MAX_BYTES || text.len() > LEFT.get() {
        return None;
    }
    LEFT.set(LEFT.get() - text.len());
    let ss = syntaxes();
    let syntax = ss
        .find_syntax_by_token(token(&lang.to_ascii_lowercase()))
        .filter(|s| s.name != "Plain Text")?;
    let mut g = ClassedHTMLGenerator::new_with_class_style(syntax, ss, STYLE);
    for line in LinesWithEndings::from(text) {
        g.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(g.finalize())
}

/// The stylesheet for the highlight classes: light, dark, or both by the reader's preference.
pub fn css(theme: super::Theme) -> &'static str {
    static CSS: OnceLock<[String; 3]> = OnceLock::new();
    let [auto, light, dark] = CSS.get_or_init(|| {
        [super::Theme::Auto, super::Theme::Light, super::Theme::Dark].map(build_css)
    });
    match theme {
        super::Theme::Auto => auto,
        super::Theme::Light => light,
        super::Theme::Dark => dark,
    }
}

fn build_css(theme: super::Theme) -> String {
    let set = ThemeSet::load_defaults();
    let of = |name: &str| {
        set.themes
            .get(name)
            .and_then(|t| css_for_theme_with_class_style(t, STYLE).ok())
            .unwrap_or_default()
    };
    let light = of("InspiredGitHub");
    let dark = of("base16-ocean.dark");
    match theme {
        super::Theme::Light => light,
        super::Theme::Dark => dark,
        super::Theme::Auto => {
            format!("{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_classed_and_escaped() {
        let h = code("fn main() { let s = \"<script>\"; }\n", "rs").unwrap();
        assert!(h.contains("class=\"hl-"), "{h}");
        assert!(
            !h.contains("<script>") && h.contains("&lt;script&gt;"),
            "{h}"
        );
        assert_eq!(code("plain words", ""), None);
        assert_eq!(code(&"x".repeat(MAX_BYTES + 1), "rs"), None);
    }
}
