//! Whether a model could read a snapshot: render text in a page shape, have an independent reader read the pages
//! back, and score what it read against the manifest's source text, separately for prose, code and numbers /
//! identifiers (line numbers, paths, hashes).
//!
//! The method, stated in every result: each row of each page is cut into strips of [`STRIP_CELLS`] cells along the
//! manifest's runs (so every strip's source text is known exactly), each strip upscaled ×[`SCALE`] nearest-neighbour
//! with a white margin, and the reader transcribes each strip as one line. Mark cells (the start mark, newline and tab
//! marks) count as spaces; whitespace runs are compared as one space. A character counts as read when the aligned
//! transcription (a character diff) has it unchanged. The readers are programs this crate does not contain:
//! `scripts/read-strips` runs tesseract (Debian's package) or PaddleOCR PP-OCRv4 (`rapidocr-onnxruntime` in a
//! virtualenv the script creates) over a folder of strips and prints JSON.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::render::{self, Options, Rendered, SourceText};

/// Cells per strip.
pub const STRIP_CELLS: u32 = 40;
/// Nearest-neighbour upscale before reading.
pub const SCALE: u32 = 2;
/// White pixels around a strip (after scaling).
const MARGIN: u32 = 12;

/// The kind of text a source character is, for the accuracy by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Prose,
    Code,
    /// Inside a token with a digit, a path separator, an underscore or an inner dot: line numbers, paths, hashes,
    /// identifiers.
    Number,
}

/// The kind of every character of `text`: lines that look like code or tool output are code; tokens that carry
/// digits, paths or identifiers are numbers, wherever they are.
pub fn kinds(text: &str) -> Vec<Kind> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches('\n');
        let symbols = t
            .chars()
            .filter(|c| "{}()[];=<>|&*$#@\\`".contains(*c))
            .count();
        let leading = t.len() - t.trim_start().len();
        let gutter = t
            .trim_start()
            .split(['→', ':', '|', '\t'])
            .next()
            .is_some_and(|g| {
                !g.is_empty() && g.len() <= 6 && g.chars().all(|c| c.is_ascii_digit())
            });
        let is_code = leading >= 2
            || gutter
            || symbols * 12 >= t.chars().count().max(1)
            || t.starts_with("[tool_")
            || t.starts_with('$');
        let base = if is_code { Kind::Code } else { Kind::Prose };
        // tokens: whitespace-delimited; the whitespace between them is the line's kind
        let chars: Vec<char> = line.chars().collect();
        let mut at = 0;
        for (start, i) in words(&chars) {
            out.extend(std::iter::repeat_n(base, start - at));
            at = i;
            let tok: String = chars[start..i].iter().collect();
            let inner = tok.trim_matches(|c: char| !c.is_alphanumeric());
            let number = inner.chars().any(|c| c.is_ascii_digit())
                || inner.contains('/')
                || inner.contains('_')
                || (inner.contains('.') && !inner.ends_with('.'));
            out.extend(std::iter::repeat_n(
                if number { Kind::Number } else { base },
                i - start,
            ));
        }
        out.extend(std::iter::repeat_n(base, chars.len() - at));
    }
    out
}

/// The whitespace-delimited words of a line, as character ranges `(start, end)`.
fn words(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// One strip cut from a page: its image file, where it is, and the source characters it shows, with their kinds.
#[derive(Debug, Clone)]
pub struct Strip {
    pub file: String,
    pub page: usize,
    pub row: u32,
    pub col: u32,
    pub expected: Vec<(char, Kind)>,
}

/// What a reader made of one strip: the source, its transcription, and which source characters it read.
#[derive(Debug, Clone, PartialEq)]
pub struct StripReading {
    pub page: usize,
    pub row: u32,
    pub col: u32,
    pub expected: String,
    pub got: String,
    /// Per character of `expected` (whitespace squeezed): read as written.
    pub read: Vec<bool>,
}

fn decode_gray(png_bytes: &[u8]) -> Option<(u32, u32, Vec<u8>)> {
    let mut dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut buf).ok()?;
    let (w, h) = (info.width, info.height);
    let channels = info.color_type.samples();
    // 1- and 2-bit grayscale expand to 8-bit samples scaled to 0..255
    let mut out = Vec::with_capacity((w * h) as usize);
    for y in 0..h as usize {
        let row = &buf[y * info.line_size..(y + 1) * info.line_size];
        for x in 0..w as usize {
            out.push(row[x * channels]);
        }
    }
    Some((w, h, out))
}

fn write_strip(path: &Path, w: u32, h: u32, px: &[u8]) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut e = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    e.set_color(png::ColorType::Grayscale);
    e.set_depth(png::BitDepth::Eight);
    let mut wr = e.write_header().map_err(std::io::Error::other)?;
    wr.write_image_data(px).map_err(std::io::Error::other)?;
    Ok(())
}

/// Cuts every page of `r` into strips in `dir` (see the module's method).
pub fn cut_strips(r: &Rendered, sources: &[SourceText], dir: &Path) -> std::io::Result<Vec<Strip>> {
    let (ax, ay) = (r.manifest.advance[0], r.manifest.advance[1]);
    let by_id: BTreeMap<&str, (&SourceText, Vec<Kind>)> = sources
        .iter()
        .map(|s| (s.id.as_str(), (s, kinds(&s.text))))
        .collect();
    let mut strips = Vec::new();
    for (page_no, (page, map)) in r.pages.iter().zip(&r.manifest.pages).enumerate() {
        let Some((w, _h, px)) = decode_gray(&page.png) else {
            continue;
        };
        for rm in map
            .rows
            .iter()
            .filter(|m| m.kind == crate::render::RunKind::Text && m.end > m.start)
        {
            let Some((src, ks)) = by_id.get(rm.message.as_str()) else {
                continue;
            };
            let chars: Vec<char> = src
                .text
                .chars()
                .skip(rm.start)
                .take(rm.end - rm.start)
                .collect();
            for (k, chunk) in chars.chunks(STRIP_CELLS as usize).enumerate() {
                let col = rm.col + k as u32 * STRIP_CELLS;
                let (x0, y0) = (col * ax, rm.row * ay);
                let cw = chunk.len() as u32 * ax;
                let (sw, sh) = (cw * SCALE + 2 * MARGIN, ay * SCALE + 2 * MARGIN);
                let mut out = vec![255u8; (sw * sh) as usize];
                for y in 0..ay * SCALE {
                    for x in 0..cw * SCALE {
                        let (sx, sy) = (x0 + x / SCALE, y0 + y / SCALE);
                        if sx < w {
                            let v = px.get((sy * w + sx) as usize).copied().unwrap_or(255);
                            out[((y + MARGIN) * sw + x + MARGIN) as usize] = v;
                        }
                    }
                }
                let file = format!("strip-{:06}.png", strips.len());
                write_strip(&dir.join(&file), sw, sh, &out)?;
                let expected = chunk
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let kind = ks
                            .get(rm.start + k * STRIP_CELLS as usize + i)
                            .copied()
                            .unwrap_or(Kind::Prose);
                        let c = if *c == '\n' || *c == '\t' { ' ' } else { *c };
                        (c, kind)
                    })
                    .collect();
                strips.push(Strip {
                    file,
                    page: page_no,
                    row: rm.row,
                    col,
                    expected,
                });
            }
        }
    }
    Ok(strips)
}

/// Accuracy of a reading: (read, total) characters per kind; whitespace is not counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadTally {
    pub by_kind: BTreeMap<Kind, (u64, u64)>,
}

impl ReadTally {
    pub fn fraction(&self, kind: Option<Kind>) -> Option<f64> {
        let (ok, n) = match kind {
            Some(k) => self.by_kind.get(&k).copied().unwrap_or((0, 0)),
            None => self
                .by_kind
                .values()
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
        };
        (n > 0).then(|| ok as f64 / n as f64)
    }
}

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Scores one strip's transcription against its source characters; returns the squeezed source and which of its
/// characters were read.
pub fn score(expected: &[(char, Kind)], got: &str, t: &mut ReadTally) -> (String, Vec<bool>) {
    // squeeze whitespace in both, keeping each expected character's kind
    let mut exp: Vec<(char, Kind)> = Vec::with_capacity(expected.len());
    for &(c, k) in expected {
        if c.is_whitespace() {
            if exp.last().is_some_and(|l| l.0 != ' ') && !exp.is_empty() {
                exp.push((' ', k));
            }
        } else {
            exp.push((c, k));
        }
    }
    while exp.last().is_some_and(|l| l.0 == ' ') {
        exp.pop();
    }
    let want: String = exp.iter().map(|x| x.0).collect();
    let got = squeeze(got);
    let want_chars: Vec<char> = want.chars().collect();
    let got_chars: Vec<char> = got.chars().collect();
    let mut read = vec![false; want_chars.len()];
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &want_chars, &got_chars) {
        if let similar::DiffOp::Equal { old_index, len, .. } = op {
            for r in &mut read[old_index..old_index + len] {
                *r = true;
            }
        }
    }
    for (i, (c, k)) in exp.iter().enumerate() {
        if *c == ' ' {
            continue;
        }
        let e = t.by_kind.entry(*k).or_insert((0, 0));
        e.1 += 1;
        if read[i] {
            e.0 += 1;
        }
    }
    (want, read)
}

/// A reader of strips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Tesseract,
    Ppocr,
    /// The configured vision model, answering recall questions with only the pages (costs money).
    Provider,
}

impl Reader {
    pub fn name(self) -> &'static str {
        match self {
            Reader::Tesseract => "tesseract",
            Reader::Ppocr => "ppocr",
            Reader::Provider => "provider",
        }
    }
}

/// Why a legibility run failed.
#[derive(Debug, thiserror::Error)]
pub enum LegibilityError {
    #[error(transparent)]
    Render(#[from] render::RenderError),
    #[error("strips: {0}")]
    Io(#[from] std::io::Error),
    #[error("the {reader} reader ({script}): {why}")]
    Reader {
        reader: &'static str,
        script: String,
        why: String,
    },
}

/// One shape read by one reader (the contract of `cairn legibility --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeReading {
    pub shape: String,
    pub reader: String,
    pub chars_per_image_token: f64,
    pub accuracy: Accuracy,
    pub recall: Option<f64>,
    pub pages: usize,
    pub strips: usize,
    pub method: String,
    /// Each strip's source and transcription (for a person to look at: the window's Read back).
    #[serde(skip)]
    pub readings: Vec<StripReading>,
}

impl ShapeReading {
    /// The characters of the source the reader missed most, as (character, missed, seen), the most missed first
    /// (ties: the most seen first): what a shape or its glyphs would need to draw better.
    pub fn most_missed(&self) -> Vec<(char, usize, usize)> {
        let mut by: std::collections::HashMap<char, (usize, usize)> = Default::default();
        for r in &self.readings {
            for (c, ok) in r.expected.chars().zip(&r.read) {
                let e = by.entry(c).or_default();
                e.1 += 1;
                if !ok {
                    e.0 += 1;
                }
            }
        }
        let mut v: Vec<(char, usize, usize)> = by
            .into_iter()
            .filter(|(_, (m, _))| *m > 0)
            .map(|(c, (m, n))| (c, m, n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        v
    }

    /// The strips read worst (the smallest share read), at most `n`.
    pub fn worst(&self, n: usize) -> Vec<&StripReading> {
        let share = |x: &StripReading| {
            x.read.iter().filter(|ok| **ok).count() as f64 / x.read.len().max(1) as f64
        };
        let mut v: Vec<&StripReading> = self
            .readings
            .iter()
            .filter(|x| x.read.iter().any(|ok| !ok))
            .collect();
        v.sort_by(|a, b| share(a).total_cmp(&share(b)));
        v.truncate(n);
        v
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    pub all: Option<f64>,
    pub prose: Option<f64>,
    pub code: Option<f64>,
    pub numbers: Option<f64>,
}

/// `scripts/read-strips` of this source tree, or `CAIRN_READ_STRIPS`.
pub fn default_script() -> PathBuf {
    if let Some(p) = std::env::var_os("CAIRN_READ_STRIPS") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/read-strips")
}

/// Runs the reader script over the strips in `dir`: `{file: text}`.
fn read(
    script: &Path,
    reader: Reader,
    dir: &Path,
) -> Result<BTreeMap<String, String>, LegibilityError> {
    let fail = |why: String| LegibilityError::Reader {
        reader: reader.name(),
        script: script.display().to_string(),
        why,
    };
    let out = std::process::Command::new(script)
        .arg(reader.name())
        .arg(dir)
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(fail(err.lines().last().unwrap_or("failed").to_string()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| fail(format!("not JSON: {e}")))
}

/// Renders `sources` in `opts`' shape, has `reader` read the strips (through `script`), and scores it.
pub fn measure(
    sources: &[SourceText],
    opts: &Options,
    shape: &str,
    reader: Reader,
    script: &Path,
    work: &Path,
) -> Result<ShapeReading, LegibilityError> {
    let r = render::render(sources, opts)?;
    let dir: PathBuf = work.join(format!("{shape}-{}", reader.name()));
    std::fs::create_dir_all(&dir)?;
    let strips = cut_strips(&r, sources, &dir)?;
    let texts = read(script, reader, &dir)?;
    let mut t = ReadTally::default();
    let mut readings = Vec::with_capacity(strips.len());
    for s in &strips {
        let got = texts.get(&s.file).map_or("", String::as_str);
        let (expected, read) = score(&s.expected, got, &mut t);
        readings.push(StripReading {
            page: s.page,
            row: s.row,
            col: s.col,
            expected,
            got: got.to_string(),
            read,
        });
    }
    Ok(ShapeReading {
        shape: shape.to_string(),
        reader: reader.name().to_string(),
        chars_per_image_token: r.stats.chars_per_image_token,
        accuracy: Accuracy {
            all: t.fraction(None),
            prose: t.fraction(Some(Kind::Prose)),
            code: t.fraction(Some(Kind::Code)),
            numbers: t.fraction(Some(Kind::Number)),
        },
        recall: None,
        pages: r.pages.len(),
        strips: strips.len(),
        readings,
        method: format!(
            "{} page; rows cut into {STRIP_CELLS}-cell strips along the manifest, x{SCALE} nearest-neighbour with a \
             {MARGIN}-pixel margin, one line per strip; marks as spaces, whitespace squeezed; a character counts when \
             a character diff keeps it",
            opts.profile.name
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_tell_prose_code_and_numbers_apart() {
        let k = kinds("We fixed the parser.\n   42→    let x = 1;\nsee src/lib.rs line 12\n");
        let at = |s: &str, text: &str| k[text[..text.find(s).unwrap()].chars().count()];
        let text = "We fixed the parser.\n   42→    let x = 1;\nsee src/lib.rs line 12\n";
        assert_eq!(at("fixed", text), Kind::Prose);
        assert_eq!(at("let", text), Kind::Code);
        assert_eq!(at("src/lib.rs", text), Kind::Number);
        assert_eq!(at("12\n", text), Kind::Number);
        assert_eq!(k.len(), text.chars().count());
    }

    #[test]
    fn a_reading_is_scored_by_kind_on_aligned_characters() {
        let exp: Vec<(char, Kind)> = "ab 12"
            .chars()
            .map(|c| {
                (
                    c,
                    if c.is_ascii_digit() {
                        Kind::Number
                    } else {
                        Kind::Prose
                    },
                )
            })
            .collect();
        let mut t = ReadTally::default();
        score(&exp, "ab  1Z", &mut t);
        assert_eq!(t.by_kind[&Kind::Prose], (2, 2));
        assert_eq!(t.by_kind[&Kind::Number], (1, 2));
        assert_eq!(t.fraction(None), Some(0.75));
        // a perfect reading of a strip with newline marks (spaces) scores 1
        let exp: Vec<(char, Kind)> = "fn main ".chars().map(|c| (c, Kind::Code)).collect();
        let mut t = ReadTally::default();
        score(&exp, "fn  main", &mut t);
        assert_eq!(t.fraction(Some(Kind::Code)), Some(1.0));
    }
}

/// A recall question: the exact text that follows `prefix` on the pages (an identifier, number or path).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub prefix: String,
    pub answer: String,
}

/// Up to `n` questions with exact answers from the source: tokens that carry digits, paths or identifiers (what
/// tiny glyphs put at risk), each asked by the characters before it on its line, spread through the text.
pub fn questions(sources: &[SourceText], n: usize) -> Vec<Question> {
    let mut all = Vec::new();
    for s in sources {
        for line in s.text.lines() {
            let ks = kinds(line);
            let chars: Vec<char> = line.chars().collect();
            for (start, i) in words(&chars) {
                let tok: String = chars[start..i].iter().collect();
                let prefix: String = chars[start.saturating_sub(30)..start].iter().collect();
                if ks.get(start) == Some(&Kind::Number)
                    && (4..=40).contains(&tok.chars().count())
                    && prefix.trim().chars().count() >= 8
                {
                    all.push(Question {
                        prefix: prefix.trim_start().to_string(),
                        answer: tok,
                    });
                }
            }
        }
    }
    if all.len() <= n {
        return all;
    }
    let step = all.len() as f64 / n as f64;
    (0..n)
        .filter_map(|k| all.get((k as f64 * step) as usize).cloned())
        .collect()
}

/// The prompt that asks the questions.
pub fn question_prompt(qs: &[Question]) -> String {
    let mut p = String::from(
        "The images are pages of text drawn in a monospace font, to be read in order. Answer each question with the \
         exact characters from the pages only, one line per question as `A<n>: <answer>`, and `A<n>: ?` when you \
         cannot read it.\n",
    );
    for (k, q) in qs.iter().enumerate() {
        p.push_str(&format!(
            "Q{}: what comes right after \"{}\" (up to the next space)?\n",
            k + 1,
            q.prefix
        ));
    }
    p
}

/// The share of questions answered exactly.
pub fn recall(qs: &[Question], reply: &str) -> f64 {
    if qs.is_empty() {
        return 0.0;
    }
    let mut right = 0;
    for (k, q) in qs.iter().enumerate() {
        let tag = format!("A{}:", k + 1);
        let answer = reply
            .lines()
            .find_map(|l| l.trim().strip_prefix(&tag))
            .map(|a| a.trim().trim_matches('`').trim())
            .unwrap_or("");
        if answer == q.answer {
            right += 1;
        }
    }
    right as f64 / qs.len() as f64
}

/// What asking a vision model would cost: image tokens of the pages and the prompt, at the model's list price
/// (None when it has none).
pub fn provider_cost(
    r: &Rendered,
    prompt: &str,
    model: &str,
    prices: &std::collections::BTreeMap<String, crate::models::Price>,
) -> (u64, Option<f64>) {
    let tokens = r.stats.image_tokens + crate::tokens::text(prompt) + 400;
    let usage = crate::model::Usage {
        input_tokens: tokens,
        output_tokens: 400,
        ..Default::default()
    };
    let cost = crate::models::cost(model, &usage, 0, prices);
    (tokens, cost)
}

/// Asks `provider` the questions with only the pages, and scores the answers exactly.
pub fn measure_recall(
    sources: &[SourceText],
    opts: &Options,
    shape: &str,
    provider: &crate::provider::Provider,
    store: &crate::store::Store,
    questions_n: usize,
) -> Result<ShapeReading, LegibilityError> {
    let r = render::render(sources, opts)?;
    let qs = questions(sources, questions_n);
    let prompt = question_prompt(&qs);
    let mut content: Vec<crate::model::Block> = r
        .pages
        .iter()
        .map(|p| crate::model::Block::Image {
            media_type: "image/png".into(),
            data: crate::model::ImageData::Bytes(p.png.clone()),
        })
        .collect();
    content.push(crate::model::Block::text(prompt));
    let sent = crate::reclaim::SentMessage {
        role: crate::model::Role::User,
        content,
        sources: Vec::new(),
    };
    let fail = |why: String| LegibilityError::Reader {
        reader: "provider",
        script: provider.model.clone(),
        why,
    };
    let body = match provider.kind {
        crate::provider::Kind::Anthropic => crate::export::to_anthropic(store, &[sent]),
        crate::provider::Kind::Openai => crate::export::to_openai(store, &[sent]),
    }
    .map_err(|e| fail(e.to_string()))?
    .body;
    let reply = provider
        .complete(
            &body,
            &mut |_| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .map_err(|e| fail(e.to_string()))?;
    Ok(ShapeReading {
        shape: shape.to_string(),
        reader: "provider".into(),
        chars_per_image_token: r.stats.chars_per_image_token,
        accuracy: Accuracy {
            all: None,
            prose: None,
            code: None,
            numbers: None,
        },
        recall: Some(recall(&qs, &reply.text)),
        pages: r.pages.len(),
        strips: 0,
        readings: Vec::new(),
        method: format!(
            "{} questions with exact answers (identifiers, numbers, paths, each asked by the text before it on its \
             line) asked of {} with only the {} page(s); an answer counts when it is exactly the source's",
            qs.len(),
            provider.model,
            r.pages.len()
        ),
    })
}

#[cfg(test)]
mod recall_tests {
    use super::*;

    #[test]
    fn questions_have_exact_answers_from_the_source_and_are_scored_exactly() {
        let src = vec![render::text_source(
            "t",
            "error: cannot open config at /etc/tidepool/ingest.toml (os error 2)\nthe build 7f3a9c2 failed on shard=11 again\n"
                .to_string(),
        )];
        let qs = questions(&src, 10);
        assert!(
            qs.iter().any(|q| q.answer == "/etc/tidepool/ingest.toml"),
            "{qs:?}"
        );
        assert!(
            qs.iter()
                .all(|q| src[0].text.contains(&format!("{}{}", q.prefix, q.answer)))
        );
        let reply: String = qs
            .iter()
            .enumerate()
            .map(|(k, q)| format!("A{}: {}\n", k + 1, if k == 0 { "wrong" } else { &q.answer }))
            .collect();
        let r = recall(&qs, &reply);
        assert!((r - (qs.len() - 1) as f64 / qs.len() as f64).abs() < 1e-9);
        assert!(question_prompt(&qs).contains("Q1:"));
    }
}
