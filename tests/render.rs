//! Snapshot pages: every page decodes back to exactly its source text, the manifest covers every source character
//! exactly once, pages respect their profile, characters the font lacks are kept as text, output is deterministic.

use std::path::Path;

use cairn::import;
use cairn::render::{self, Options, PROFILES, SourceText, decode, font};
use cairn::store::Store;

fn sample_sources() -> Vec<(String, Vec<SourceText>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("r.db")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for f in [
        "claude-code/cc-rewind-fork-2.1.42.jsonl",
        "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "codex/codex-desktop-spawn-agents-0.140.jsonl",
        "pi/pi-v3-compaction-tiny.jsonl",
    ] {
        let o = import::import_file(&mut s, &fixtures.join(f), None);
        for c in o.conversations {
            let msgs = s.messages(&c).unwrap();
            out.push((format!("{f} {c}"), render::sources(&msgs)));
        }
    }
    out
}

fn check_round_trip(name: &str, sources: &[SourceText], opts: &Options) -> render::Rendered {
    let r = render::render(sources, opts).unwrap();
    let f = font::for_cell(opts.cell.0, opts.cell.1).unwrap();
    let pngs: Vec<Vec<u8>> = r.pages.iter().map(|p| p.png.clone()).collect();
    let checked =
        decode::verify(&pngs, &r.manifest, sources, f).unwrap_or_else(|e| panic!("{name}: {e}"));
    let total: usize = sources.iter().map(|s| s.text.chars().count()).sum();
    assert_eq!(
        checked, total,
        "{name}: decoded {checked} of {total} characters"
    );
    r
}

#[test]
fn every_page_of_every_sample_decodes_to_its_source_for_every_bitmap_profile() {
    for (name, sources) in sample_sources() {
        for p in PROFILES {
            for cell in [(5, 8), (6, 12)] {
                let mut opts = Options::new(p);
                opts.cell = cell;
                check_round_trip(&format!("{name} {} {cell:?}", p.name), &sources, &opts);
            }
        }
    }
}

#[test]
fn the_manifest_covers_every_source_character_exactly_once() {
    for (name, sources) in sample_sources() {
        let r = render::render(&sources, &Options::new(&PROFILES[0])).unwrap();
        for s in &sources {
            let mut ranges: Vec<(usize, usize)> = r
                .manifest
                .pages
                .iter()
                .flat_map(|p| &p.rows)
                .filter(|m| m.kind == "text" && m.message == s.id)
                .map(|m| (m.start, m.end))
                .collect();
            ranges.sort();
            let mut at = 0;
            for (a, b) in ranges {
                assert_eq!(a, at, "{name}: gap or overlap in {}", s.id);
                at = b;
            }
            assert_eq!(
                at,
                s.text.chars().count(),
                "{name}: {} not fully covered",
                s.id
            );
            let headers = r
                .manifest
                .pages
                .iter()
                .flat_map(|p| &p.rows)
                .filter(|m| m.kind == "header" && m.message == s.id)
                .count();
            assert!(headers >= 1, "{name}: no header for {}", s.id);
        }
        // runs on one row never overlap and stay within the columns
        for p in &r.manifest.pages {
            let mut last: Option<(u32, u32)> = None;
            for m in &p.rows {
                if let Some((row, col)) = last {
                    assert!(
                        m.row > row || (m.row == row && m.col > col),
                        "{name}: runs out of order"
                    );
                }
                assert!(m.col < r.manifest.columns);
                last = Some((m.row, m.col));
            }
        }
    }
}

#[test]
fn pages_respect_their_profile_and_the_last_one_is_cropped() {
    let text: String = (0..4000)
        .map(|i| format!("line {i}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let sources = vec![render::text_source("big", text)];
    for p in PROFILES {
        let r = check_round_trip(p.name, &sources, &Options::new(p));
        assert!(r.pages.len() >= 2, "{}", p.name);
        for (pg, map) in r.pages.iter().zip(&r.manifest.pages) {
            assert!(pg.width <= p.width && pg.height <= p.height, "{}", p.name);
            assert!(pg.png.len() <= p.max_image_bytes);
            assert_eq!(pg.tokens, p.tokens(pg.width, pg.height));
            assert_eq!(map.bytes, pg.png.len());
        }
        let last = r.pages.last().unwrap();
        let align = p.formula.align();
        assert!(
            last.height < p.height,
            "{}: the last page was not cropped",
            p.name
        );
        assert!(
            last.height.is_multiple_of(align) || last.height == p.height,
            "{}: crop not aligned",
            p.name
        );
        // full pages are full: every cell of every row but the last page's last row holds a character
        let full = &r.manifest.pages[0];
        assert_eq!(full.height, p.height, "{}", p.name);
    }
}

#[test]
fn characters_the_font_lacks_are_boxed_counted_and_kept_as_text() {
    let text = "日本語のテキスト and an emoji 🚀 and box drawing ─┼─ end".to_string();
    let sources = vec![render::text_source("cjk", text.clone())];
    let r = check_round_trip("cjk", &sources, &Options::new(&PROFILES[0]));
    let missing: String = r.manifest.unrendered.iter().map(|u| u.char).collect();
    // box drawing is in the font; CJK and emoji are not
    assert_eq!(missing, "日本語のテキスト🚀");
    assert_eq!(r.stats.unrendered, missing.chars().count());
    for c in missing.chars() {
        assert!(r.factsheet.contains(c), "factsheet lacks {c}");
    }
}

#[test]
fn empty_and_tiny_inputs() {
    let r = render::render(&[], &Options::new(&PROFILES[0])).unwrap();
    assert_eq!(r.pages.len(), 0);
    assert_eq!(r.stats.image_tokens, 0);
    let sources = vec![render::text_source("empty", String::new())];
    let r = check_round_trip("empty", &sources, &Options::new(&PROFILES[0]));
    assert_eq!(r.pages.len(), 1, "a header still takes a row");
    assert_eq!(r.pages[0].height, 28, "one row of 8 px costs one patch row");
    assert_eq!(r.pages[0].tokens, 92);
}

#[test]
fn rendering_is_deterministic() {
    let sources = &sample_sources()[1].1;
    let a = render::render(sources, &Options::new(&PROFILES[0])).unwrap();
    let b = render::render(sources, &Options::new(&PROFILES[0])).unwrap();
    assert_eq!(a.pages.len(), b.pages.len());
    for (x, y) in a.pages.iter().zip(&b.pages) {
        assert_eq!(x.png, y.png);
    }
    assert_eq!(a.factsheet, b.factsheet);
}

#[test]
fn density_on_real_transcript_text_meets_the_target_at_5x8_hires() {
    // the largest sample: enough text to fill pages
    let (name, sources) = sample_sources()
        .into_iter()
        .max_by_key(|(_, s)| s.iter().map(|x| x.text.len()).sum::<usize>())
        .unwrap();
    let r = render::render(&sources, &Options::new(&PROFILES[0])).unwrap();
    assert!(
        r.stats.chars_per_image_token >= 17.5,
        "{name}: {:.2} characters per image token",
        r.stats.chars_per_image_token
    );
    assert!(r.stats.chars_per_image_token <= 784.0 / 40.0);
}

#[test]
fn unknown_cells_and_sizes_are_clear_errors() {
    let mut o = Options::new(&PROFILES[0]);
    o.cell = (7, 13);
    let e = render::render(&[render::text_source("x", "y".into())], &o)
        .err()
        .unwrap();
    assert!(e.to_string().contains("7x13"));
}

#[test]
fn outline_font_pages_are_anti_aliased_deterministic_and_cover_their_text() {
    let sources = &sample_sources()[0].1;
    let mut o = Options::new(cairn::render::profile::by_name("openai").unwrap());
    o.font = render::FontKind::Outline;
    o.cell = (9, 16);
    let a = render::render(sources, &o).unwrap();
    let b = render::render(sources, &o).unwrap();
    assert!(!a.pages.is_empty());
    for (x, y) in a.pages.iter().zip(&b.pages) {
        assert_eq!(x.png, y.png);
    }
    assert_eq!(a.manifest.font, "dejavu-sans-mono");
    let page = &a.pages[0];
    let dec = png::Decoder::new(std::io::Cursor::new(&page.png))
        .read_info()
        .unwrap();
    assert_eq!(dec.info().bit_depth, png::BitDepth::Two);
    assert!(page.width <= o.profile.width && page.height <= o.profile.height);
    // the same layout as the bitmap path: every character in exactly one run
    let total: usize = sources.iter().map(|s| s.text.chars().count()).sum();
    let covered: usize = a
        .manifest
        .pages
        .iter()
        .flat_map(|p| &p.rows)
        .filter(|m| m.kind == "text")
        .map(|m| m.end - m.start)
        .sum();
    assert_eq!(covered, total);
    // CJK is not in DejaVu Sans Mono: boxed and kept
    let cjk = vec![render::text_source("cjk", "日本 ok".into())];
    let r = render::render(&cjk, &o).unwrap();
    assert_eq!(r.manifest.unrendered.len(), 2);
}

/// Every page shape: bitmap shapes decode back exactly by template (whatever their grid, columns or line layout);
/// every shape's manifest covers each source character once; rendering is deterministic; by lines, a row never
/// holds two source lines.
#[test]
fn every_shape_covers_its_source_and_bitmap_shapes_decode_back_exactly() {
    use cairn::render::shape::SHAPES;
    let samples = sample_sources();
    for shape in SHAPES {
        for (name, sources) in samples.iter().take(2) {
            let mut opts = Options::new(&PROFILES[0]);
            shape.apply(&mut opts);
            let name = format!("{} {name}", shape.name);
            let r = if shape.glyph == render::FontKind::Bitmap {
                check_round_trip(&name, sources, &opts)
            } else {
                render::render(sources, &opts).unwrap()
            };
            // coverage
            for s in sources {
                let mut ranges: Vec<(usize, usize)> = r
                    .manifest
                    .pages
                    .iter()
                    .flat_map(|p| &p.rows)
                    .filter(|m| m.kind == "text" && m.message == s.id)
                    .map(|m| (m.start, m.end))
                    .collect();
                ranges.sort();
                let covered: usize = ranges.iter().map(|(a, b)| b - a).sum();
                assert_eq!(covered, s.text.chars().count(), "{name}: {}", s.id);
            }
            // by lines: a text run holds at most one newline, at its end
            if shape.lines {
                for m in r
                    .manifest
                    .pages
                    .iter()
                    .flat_map(|p| &p.rows)
                    .filter(|m| m.kind == "text")
                {
                    let s = sources.iter().find(|s| s.id == m.message).unwrap();
                    let run: String = s.text.chars().skip(m.start).take(m.end - m.start).collect();
                    let inner = run.trim_end_matches('\n');
                    assert!(
                        !inner.contains('\n'),
                        "{name}: a row holds two lines: {run:?}"
                    );
                }
            }
            assert_eq!(r.manifest.advance, [shape.advance.0, shape.advance.1]);
            // what the rungs estimate for a shape (its grid and columns) is what it renders to, for the stream
            // layouts (a line layout's short rows make the estimate a floor)
            let cells: u64 = sources
                .iter()
                .map(|s| (s.label.chars().count() + 3 + s.text.chars().count()) as u64)
                .sum();
            // measured without drawing: exact for every layout
            let m = render::measure(sources, &opts);
            assert_eq!(
                (m.pages, m.image_tokens),
                (r.stats.pages, r.stats.image_tokens),
                "{name}"
            );
            let est = render::estimate(cells, &opts).image_tokens as f64;
            let got = r.stats.image_tokens as f64;
            if shape.lines {
                assert!(est <= got * 1.05, "{name}: estimate {est} over {got}");
            } else {
                assert!(
                    (est - got).abs() <= got * 0.1,
                    "{name}: estimate {est} vs rendered {got}"
                );
            }
            assert_eq!(r.manifest.text_columns, shape.columns);
            let again = render::render(sources, &opts).unwrap();
            assert!(
                again
                    .pages
                    .iter()
                    .zip(&r.pages)
                    .all(|(a, b)| a.png == b.png),
                "{name}: not deterministic"
            );
            // every page within the profile
            assert!(
                r.pages
                    .iter()
                    .all(|p| p.width <= PROFILES[0].width && p.height <= PROFILES[0].height)
            );
        }
    }
}

#[test]
fn a_last_page_shares_its_rows_evenly_between_its_text_columns() {
    // a page and a half of text columns: the last page is cropped to half a column's height, not a full one
    for name in [
        "bitmap-5x8-two-columns",
        "bitmap-6x12-lines",
        "outline-7x14-lines",
    ] {
        let shape = render::shape::by_name(name).unwrap();
        let mut opts = Options::new(&PROFILES[0]);
        shape.apply(&mut opts);
        // short lines of code: by lines each is a row, in a stream they run on
        let text: String = (1..=300)
            .map(|i| format!("{i:>4}\tlet x{i} = f({i});\n"))
            .collect();
        let sources = vec![render::text_source("t", text)];
        let r = render::render(&sources, &opts).unwrap();
        let m = &r.manifest;
        assert_eq!(r.pages.len(), 1, "{name}");
        let last = &m.pages[0];
        let used_rows = last.rows.iter().map(|s| s.row).max().unwrap() + 1;
        // every text column is used, and each to about the same depth
        let k = m.text_columns;
        let width = (m.columns - 2 * (k - 1)) / k;
        let depth = |c: u32| {
            last.rows
                .iter()
                .filter(|s| s.col / (width + 2) == c)
                .map(|s| s.row + 1)
                .max()
                .unwrap_or(0)
        };
        assert_eq!(depth(0), used_rows, "{name}");
        for c in 1..k {
            assert!(
                depth(c) + k >= used_rows,
                "{name}: column {c} holds {} rows of {used_rows}",
                depth(c)
            );
        }
        assert!(used_rows < m.rows_per_page, "{name}: {used_rows} rows");
        let height = last.height;
        let pitch = m.advance[1];
        assert!(
            height <= (used_rows * pitch).div_ceil(28) * 28,
            "{name}: page {height} px for {used_rows} rows of {pitch}"
        );
        // and the estimate is not over what it renders to
        let cells = render::cells("t", sources[0].text.chars().count() as u64);
        let est = render::estimate(cells, &opts);
        assert!(est.image_tokens <= r.stats.image_tokens, "{name}");
    }
}

#[test]
fn what_a_shape_measures_without_drawing_is_what_it_draws_on_every_profile() {
    use cairn::render::shape::SHAPES;
    let samples = sample_sources();
    let (name, sources) = &samples[1];
    for profile in PROFILES {
        for shape in SHAPES {
            let mut opts = Options::new(profile);
            shape.apply(&mut opts);
            let r = render::render(sources, &opts).unwrap();
            let m = render::measure(sources, &opts);
            assert_eq!(
                (m.pages, m.image_tokens),
                (r.stats.pages, r.stats.image_tokens),
                "{} on {}: {name}",
                shape.name,
                profile.name
            );
        }
    }
}

#[test]
fn each_page_counts_the_text_it_replaces_and_the_pages_cover_it_all() {
    // three messages over several pages: each page's spans are its messages in order, and the text they replace
    // adds up to the whole text (a message split across pages counts on each for its part)
    let sources: Vec<SourceText> = (0..3)
        .map(|k| {
            let text: String = (0..3000)
                .map(|i| format!("message {k} line {i}: the queue drains in order\n"))
                .collect();
            render::text_source(&format!("m{k}"), text)
        })
        .collect();
    let r = render::render(&sources, &Options::new(&PROFILES[0])).unwrap();
    assert!(r.pages.len() > 1, "{} pages", r.pages.len());
    let mut covered = 0usize;
    for p in &r.manifest.pages {
        let spans = p.spans();
        assert!(!spans.is_empty());
        for w in spans.windows(2) {
            assert_ne!(w[0].message, w[1].message, "one span per run of a message");
        }
        covered += spans.iter().map(|s| s.end - s.start).sum::<usize>();
        assert!(p.text_tokens(&sources) > 0);
    }
    let total: usize = sources.iter().map(|s| s.text.chars().count()).sum();
    assert_eq!(covered, total);
    let one_page_each: u64 = r
        .manifest
        .pages
        .iter()
        .map(|p| p.text_tokens(&sources))
        .sum();
    let whole: u64 = sources.iter().map(|s| cairn::tokens::text(&s.text)).sum();
    let off = one_page_each.abs_diff(whole) as f64 / whole as f64;
    assert!(off < 0.02, "pages {one_page_each} vs whole {whole}");
}
