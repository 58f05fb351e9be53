//! Gitleaks' rule set, as data: `assets/secrets/gitleaks.toml` is gitleaks' own default configuration (MIT,
//! `assets/secrets/LICENSE-gitleaks`), read as gitleaks reads it: each rule's keywords select it (one
//! Aho-Corasick pass over the text for all of them), its regular expression finds the candidate, the secret is its
//! `secretGroup` (else the first non-empty group, else the match), a rule's `entropy` is a floor on the secret's
//! Shannon entropy, and the rule's and the global allowlists (regexes on the secret, the match or the line;
//! stopwords) let through what only looks like a secret. Rules whose expression the `regex` crate cannot compile
//! (none today: gitleaks writes RE2, which it follows) are counted and left out, never guessed at.
//!
//! `assets/secrets/cairn.toml` adds, in the same format, the families neither set finds (Claude Code's OAuth
//! tokens, Discord webhooks and bot tokens, Sentry DSNs, Azure account keys, passwords on `mysql`/`sshpass`
//! command lines, session cookies, keys of AI tooling written bare: Zhipu's, Baidu Qianfan's, fal's, Firecrawl's,
//! Voyage's).
//!
//! Why beside redact-secret: the two sets overlap, but each has families the other lacks (gitleaks: Slack and
//! Discord webhooks, PyPI, Twilio, age, Sentry, hundreds of SaaS tokens); cairn redacts what either finds.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;
use serde::Deserialize;

const GITLEAKS: &str = include_str!("../../assets/secrets/gitleaks.toml");
/// cairn's own rules, in the same format, for families neither set finds.
const CAIRN: &str = include_str!("../../assets/secrets/cairn.toml");

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AllowSpec {
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

/// What an allowlist's regexes are matched against.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allow {
    all: bool,
    target: Target,
    /// The expressions, compiled the first time a candidate secret is checked against them (most commands never
    /// find one).
    exprs: Vec<String>,
    regexes: std::sync::OnceLock<Vec<Regex>>,
    stopwords: Vec<String>,
}

impl Allow {
    fn build(a: &AllowSpec) -> Allow {
        Allow {
            all: a.condition.as_deref() == Some("AND"),
            target: match a.regex_target.as_deref() {
                Some("match") => Target::Match,
                Some("line") => Target::Line,
                _ => Target::Secret,
            },
            exprs: a.regexes.clone(),
            regexes: std::sync::OnceLock::new(),
            stopwords: a.stopwords.iter().map(|s| s.to_lowercase()).collect(),
        }
    }

    /// Whether this allowlist lets the candidate through.
    fn allows(&self, secret: &str, whole: &str, line: &str) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        let lower = secret.to_lowercase();
        let regexes = self.regexes.get_or_init(|| {
            self.exprs
                .iter()
                .filter_map(|r| Regex::new(r).ok())
                .collect()
        });
        let by_regex = (!regexes.is_empty()).then(|| regexes.iter().any(|r| r.is_match(target)));
        let by_word = (!self.stopwords.is_empty())
            .then(|| self.stopwords.iter().any(|w| lower.contains(w.as_str())));
        match (by_regex, by_word) {
            (None, None) => false,
            (Some(a), None) | (None, Some(a)) => a,
            (Some(a), Some(b)) if self.all => a && b,
            (Some(a), Some(b)) => a || b,
        }
    }
}

struct Rule {
    id: String,
    /// The expression, compiled the first time a text selects the rule (most never are: a command that prints a
    /// few lines must not compile 200 expressions first).
    expr: String,
    regex: std::sync::OnceLock<Option<Regex>>,
    entropy: Option<f64>,
    group: Option<usize>,
    allow: Vec<Allow>,
}

/// The compiled rule set.
pub struct Rules {
    rules: Vec<Rule>,
    /// Rules with no keyword run on every text.
    always: Vec<usize>,
    keywords: AhoCorasick,
    /// keyword index → the rules it selects
    by_keyword: Vec<Vec<usize>>,
    global: Vec<Allow>,
}

/// A secret found: its byte range in the text and the rule's id.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleHit {
    pub start: usize,
    pub end: usize,
    pub rule: String,
}

/// Shannon entropy of a text, in bits a character (gitleaks' measure; the key-shape detector's too).
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let n = s.chars().count() as f64;
    for c in s.chars() {
        *counts.entry(c).or_insert(0u32) += 1;
    }
    counts
        .values()
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum()
}

impl Rule {
    /// The compiled expression (the size limit raised for the long alternations some rules carry).
    fn compiled(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                regex::RegexBuilder::new(&as_re2(&self.expr))
                    .size_limit(64 << 20)
                    .build()
                    .ok()
            })
            .as_ref()
    }
}

/// An RE2 expression as RE2 reads it, for the `regex` crate: RE2's `\b`, `\B`, `\w`, `\d` and `\s` are ASCII's,
/// the crate's Unicode's. Unicode's made every gitleaks rule that opens with `(?i)[\w.-]{0,50}?` an automaton too
/// large for the crate's fast engines, so each crawled through its slowest one (1 to 2 s a rule on a 3 MB session),
/// and its word boundaries stopped the fast engines on any text that is not ASCII. Written out as the ASCII classes
/// they are (inside a class too: `[\w.-]`); a negated class inside a class is left as written.
fn as_re2(expr: &str) -> String {
    const WORD: &str = "0-9A-Za-z_";
    const DIGIT: &str = "0-9";
    const SPACE: &str = "\\t\\n\\f\\r ";
    let mut out = String::with_capacity(expr.len() + 64);
    let mut chars = expr.chars().peekable();
    let mut class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(b @ ('b' | 'B')) if !class => {
                    out.push_str("(?-u:\\");
                    out.push(b);
                    out.push(')');
                }
                Some(e @ ('w' | 'd' | 's' | 'W' | 'D' | 'S')) => {
                    let set = match e.to_ascii_lowercase() {
                        'w' => WORD,
                        'd' => DIGIT,
                        _ => SPACE,
                    };
                    match (class, e.is_ascii_uppercase()) {
                        (true, false) => out.push_str(set),
                        (true, true) => {
                            out.push('\\');
                            out.push(e);
                        }
                        (false, negated) => {
                            out.push_str(if negated { "[^" } else { "[" });
                            out.push_str(set);
                            out.push(']');
                        }
                    }
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !class => {
                class = true;
                out.push(c);
                // a `^` and a `]` first in a class are the class's own
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            '[' if class && chars.peek() == Some(&':') => {
                // a POSIX class inside a class (`[[:alpha:]]`): copied whole
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' if class => {
                class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

impl Rules {
    fn load() -> Option<Rules> {
        let file: File = toml::from_str(GITLEAKS).ok()?;
        let own: File = toml::from_str(CAIRN).ok()?;
        let mut rules = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut by_keyword: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for r in file.rules.into_iter().chain(own.rules) {
            let Some(expr) = r.regex.as_deref() else {
                continue; // a rule on file paths only
            };
            // gitleaks' (RE2) expressions are compiled the first time a text has a rule's keywords (compiling, or
            // even resolving, every rule's classes up front cost every command ~50 ms); that every bundled rule
            // compiles is the test's to say
            let i = rules.len();
            if r.keywords.is_empty() {
                always.push(i);
            }
            for k in &r.keywords {
                let k = k.to_lowercase();
                match keywords.iter().position(|x| *x == k) {
                    Some(j) => by_keyword[j].push(i),
                    None => {
                        keywords.push(k);
                        by_keyword.push(vec![i]);
                    }
                }
            }
            rules.push(Rule {
                id: r.id,
                expr: expr.to_string(),
                regex: std::sync::OnceLock::new(),
                entropy: r.entropy,
                group: r.secret_group,
                allow: r.allowlists.iter().map(Allow::build).collect(),
            });
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&keywords)
            .ok()?;
        Some(Rules {
            rules,
            always,
            keywords,
            by_keyword,
            global: file.allowlist.iter().map(Allow::build).collect(),
        })
    }

    /// How many rules are in force.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every secret the rules find in `text`.
    pub fn scan(&self, text: &str) -> Vec<RuleHit> {
        let mut selected = vec![false; self.rules.len()];
        for i in &self.always {
            selected[*i] = true;
        }
        for m in self.keywords.find_overlapping_iter(text) {
            for &i in &self.by_keyword[m.pattern().as_usize()] {
                selected[i] = true;
            }
        }
        let mut out = Vec::new();
        for (i, rule) in self.rules.iter().enumerate().filter(|(i, _)| selected[*i]) {
            let Some(regex) = rule.compiled() else {
                continue;
            };
            for caps in regex.captures_iter(text) {
                let Some(whole) = caps.get(0) else { continue };
                let secret = match rule.group {
                    Some(g) => caps.get(g),
                    None => (1..caps.len()).find_map(|g| caps.get(g).filter(|m| !m.is_empty())),
                }
                .unwrap_or(whole);
                if secret.is_empty() {
                    continue;
                }
                if rule.entropy.is_some_and(|e| entropy(secret.as_str()) < e) {
                    continue;
                }
                let line_start = text[..whole.start()].rfind('\n').map_or(0, |p| p + 1);
                let line_end = text[whole.end()..]
                    .find('\n')
                    .map_or(text.len(), |p| whole.end() + p);
                let line = &text[line_start..line_end];
                if rule
                    .allow
                    .iter()
                    .chain(&self.global)
                    .any(|a| a.allows(secret.as_str(), whole.as_str(), line))
                {
                    continue;
                }
                out.push(RuleHit {
                    start: secret.start(),
                    end: secret.end(),
                    rule: self.rules[i].id.clone(),
                });
            }
        }
        out
    }
}

/// The rule set, compiled once (None if the bundled file could not be read: redaction then fails closed).
pub fn rules() -> Option<&'static Rules> {
    static R: LazyLock<Option<Rules>> = LazyLock::new(Rules::load);
    R.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitleaks_rules_load_and_compile() {
        let r = rules().unwrap();
        assert!(r.len() >= 200, "{}", r.len());
        let failed: Vec<&str> = r
            .rules
            .iter()
            .filter(|x| x.compiled().is_none())
            .map(|x| x.id.as_str())
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
    }

    #[test]
    fn a_rule_finds_its_secret_and_its_allowlist_lets_placeholders_through() {
        let r = rules().unwrap();
        let hook = "post to https://hooks.slack.com/services/T01234567/B01234567/abcdefghijklmnopqrstuvwx now";
        let h = r.scan(hook);
        assert!(h.iter().any(|h| h.rule.contains("slack")), "{h:?}");
        assert!(r.scan("the token is ${GITHUB_TOKEN}").is_empty());
    }

    /// RE2's classes and boundaries are ASCII's, written out for the `regex` crate; what is not one is left.
    #[test]
    fn an_re2_expression_reads_as_re2_reads_it() {
        for (re2, ours) in [
            (r"\bkey\b", r"(?-u:\b)key(?-u:\b)"),
            (r"(?i)[\w.-]{0,50}?x", r"(?i)[0-9A-Za-z_.-]{0,50}?x"),
            (r"\d+\s\W", r"[0-9]+[\t\n\f\r ][^0-9A-Za-z_]"),
            (r"[^\w]\\b[\b]", r"[^0-9A-Za-z_]\\b[\b]"),
            (r"[]\w][[:alpha:]\d]", r"[]0-9A-Za-z_][[:alpha:]0-9]"),
            (r"[\S]", r"[\S]"),
        ] {
            assert_eq!(as_re2(re2), ours, "{re2}");
        }
        // the same matches on ASCII; a letter beyond ASCII is no word character, as in RE2
        let re = regex::Regex::new(&as_re2(r"\bab\w+\b")).unwrap();
        assert_eq!(re.find("x abc1 y").map(|m| m.as_str()), Some("abc1"));
        assert_eq!(re.find("éabc").map(|m| m.as_str()), Some("abc"));
    }

    /// A Discord bot token is the bot's id in base64, however many digits the id has; a dotted name is not one.
    #[test]
    fn a_discord_bot_token_is_found_by_its_base64_id() {
        use base64::Engine as _;
        let r = rules().unwrap();
        let hmac = "el31iEl2hpChYgCfrL1spNxnyVmihA_2O76UMF";
        for id in [
            "12345678901234567",
            "123456789012345678",
            "7383207964119141687",
            "73832079641191416870",
        ] {
            let b64 = base64::engine::general_purpose::STANDARD_NO_PAD.encode(id);
            let text = format!("bot.run(\"{b64}.GjmUhB.{hmac}\")");
            let h = r.scan(&text);
            assert!(
                h.iter().any(|h| h.rule == "discord-bot-token"),
                "{id}: {text}"
            );
        }
        let code = format!("MyVeryLongServiceClassNameX.method.{hmac}()");
        assert!(r.scan(&code).iter().all(|h| h.rule != "discord-bot-token"));
    }
}
