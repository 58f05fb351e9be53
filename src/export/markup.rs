//! A message's Markdown rendered to HTML at export time, safely: raw HTML in the transcript is shown as text, never
//! passed through; a link goes only to http(s), mailto or an anchor (any other scheme is shown as text); an image
//! is never fetched (it becomes a link); fenced code is highlighted by its language.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::highlight;

/// Text made safe inside HTML: the five characters that could open markup or end an attribute escaped.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

use html_escape as esc;

fn safe_url(url: &str) -> bool {
    let u = url.trim().to_ascii_lowercase();
    u.starts_with("http://")
        || u.starts_with("https://")
        || u.starts_with("mailto:")
        || u.starts_with('#')
}

/// Markdown as HTML. Everything the transcript wrote that would be markup is escaped.
pub fn to_html(text: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut events: Vec<Event> = Vec::new();
    let mut code: Option<(String, String)> = None; // (lang, text) of the fenced block being read
    let mut dropped_links: Vec<bool> = Vec::new(); // per open link: shown as text
    for ev in Parser::new_ext(text, opts) {
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => {
                if let Some((_, t)) = code.as_mut() {
                    t.push_str(&h);
                } else {
                    events.push(Event::Text(h));
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split([' ', ',', '{']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, t)) = code.take() {
                    let body = highlight::code(&t, &lang).unwrap_or_else(|| esc(&t));
                    let class = if lang.is_empty() {
                        String::new()
                    } else {
                        format!(" class=\"lang-{}\"", esc(&lang))
                    };
                    events.push(Event::Html(CowStr::from(format!(
                        "<pre><code{class}>{body}</code></pre>\n"
                    ))));
                }
            }
            Event::Text(t) if code.is_some() => {
                if let Some((_, c)) = code.as_mut() {
                    c.push_str(&t);
                }
            }
            Event::Start(Tag::Link {
                dest_url,
                title,
                link_type,
                id,
            }) => {
                let unsafe_link = !safe_url(&dest_url);
                dropped_links.push(unsafe_link);
                if unsafe_link {
                    continue;
                }
                events.push(Event::Start(Tag::Link {
                    dest_url,
                    title,
                    link_type,
                    id,
                }));
            }
            Event::End(TagEnd::Link) => {
                if dropped_links.pop() != Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                // an image is never loaded: it is a link to where it was (or text, for other schemes)
                let unsafe_link = !safe_url(&dest_url);
                dropped_links.push(unsafe_link);
                events.push(Event::Text(CowStr::from("[image: ")));
                if !unsafe_link {
                    events.push(Event::Start(Tag::Link {
                        link_type: pulldown_cmark::LinkType::Inline,
                        dest_url,
                        title: CowStr::from(""),
                        id: CowStr::from(""),
                    }));
                }
            }
            Event::End(TagEnd::Image) => {
                if dropped_links.pop() != Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
                events.push(Event::Text(CowStr::from("]")));
            }
            other => events.push(other),
        }
    }
    let mut out = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_raw_html_stays_text() {
        let h = to_html("**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(
            h.contains("<strong>bold</strong>")
                && h.contains("<code>code</code>")
                && h.contains("<table>"),
            "{h}"
        );
        let h = to_html("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n");
        assert!(!h.contains("<script>") && !h.contains("<img"), "{h}");
        assert!(
            h.contains("&lt;script&gt;") && h.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{h}"
        );
    }

    #[test]
    fn links_only_to_safe_schemes_and_images_never_load() {
        let h =
            to_html("[a](javascript:alert(1)) [b](https://example.com) ![c](http://tracker/x.png)");
        assert!(
            !h.contains("javascript:alert") || !h.contains("href=\"javascript"),
            "{h}"
        );
        assert!(!h.contains("href=\"javascript"), "{h}");
        assert!(h.contains("<a href=\"https://example.com\">b</a>"), "{h}");
        assert!(
            !h.contains("<img") && h.contains("[image: <a href=\"http://tracker/x.png\">c</a>]"),
            "{h}"
        );
    }

    #[test]
    fn fenced_code_is_highlighted_by_its_language() {
        let h = to_html("```rust\nfn main() {}\n```\n");
        assert!(
            h.contains("class=\"lang-rust\"") && h.contains("hl-"),
            "{h}"
        );
        let h = to_html("```\n<b>plain</b>\n```\n");
        assert!(h.contains("&lt;b&gt;plain&lt;/b&gt;"), "{h}");
    }
}
