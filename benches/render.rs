//! Snapshot renderer benchmarks (prints figures; `cargo bench --no-default-features --bench render`):
//! - density: characters per image token on real transcript text at 5x8 on the Claude high-resolution page
//!   (target >= 17.5; the ceiling is 784/40 = 19.6), and for every profile;
//! - speed: source text -> encoded PNG pages, MB/s on one core (target >= 20 MB/s).

use std::path::Path;
use std::time::Instant;

use cairn::render::{self, Options, PROFILES};
use cairn::store::Store;

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("b.db")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut sources = Vec::new();
    for f in cairn::import::collect(&[
        fixtures.join("claude-code"),
        fixtures.join("codex"),
        fixtures.join("pi"),
    ])
    .unwrap()
    {
        let o = cairn::import::import_file(&mut s, &f, None);
        for c in o.conversations {
            sources.extend(render::sources(&s.messages(&c).unwrap()));
        }
    }
    let chars: usize = sources.iter().map(|x| x.text.chars().count()).sum();
    println!(
        "real transcript text: {} messages, {} characters (the samples in tests/fixtures)",
        sources.len(),
        chars
    );
    for p in PROFILES {
        for cell in [(5, 8), (6, 12)] {
            let mut o = Options::new(p);
            o.cell = cell;
            let r = render::render(&sources, &o).unwrap();
            println!(
                "  {:<13} {}x{}: {:>3} pages, {:>6} image tokens, {:>6.2} chars/image token, {:.2}x fewer tokens than the text{}",
                p.name,
                cell.0,
                cell.1,
                r.stats.pages,
                r.stats.image_tokens,
                r.stats.chars_per_image_token,
                r.stats.ratio,
                if p.name == "claude-hires" && cell == (5, 8) {
                    "   [target >= 17.5]"
                } else {
                    ""
                }
            );
        }
    }
    let mut o = Options::new(render::profile::by_name("openai").unwrap());
    o.font = render::FontKind::Outline;
    o.cell = (9, 16);
    let r = render::render(&sources, &o).unwrap();
    println!(
        "  openai        9x16 outline (DejaVu Sans Mono, anti-aliased): {} pages, {} image tokens, {:.2} chars/image token",
        r.stats.pages, r.stats.image_tokens, r.stats.chars_per_image_token
    );
    // Speed: the same text repeated to ~20 MB, one thread.
    let mut big = Vec::new();
    let mut bytes = 0usize;
    while bytes < 20_000_000 {
        for src in &sources {
            bytes += src.text.len();
            let mut x = src.clone();
            x.id = format!("{}-{}", x.id, big.len());
            big.push(x);
        }
    }
    for compression in [
        render::Compression::Fast,
        render::Compression::Default,
        render::Compression::Best,
    ] {
        let mut o = Options::new(&PROFILES[0]);
        o.compression = compression;
        let mut best = f64::MAX;
        let mut pages = 0;
        let mut png_bytes = 0;
        let runs = if compression == render::Compression::Best {
            1
        } else {
            3
        };
        for _ in 0..runs {
            let t = Instant::now();
            let r = render::render(&big, &o).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            pages = r.stats.pages;
            png_bytes = r.stats.png_bytes;
        }
        println!(
            "speed ({compression:?} PNG): {:.1} MB of text -> {pages} pages ({:.0} kB each) in {:.3} s = {:.1} MB/s{}",
            bytes as f64 / 1e6,
            png_bytes as f64 / pages.max(1) as f64 / 1e3,
            best,
            bytes as f64 / 1e6 / best,
            if compression == render::Compression::Default {
                "   [target >= 20 MB/s, the default]"
            } else {
                ""
            }
        );
    }
}
