//! `cairn render CONV|--text FILE [--from MSG --to MSG] [--profile P] [--cell WxH] [--font F] --out DIR`: draws
//! messages or a text file as snapshot pages (page-001.png..., manifest.json, factsheet.txt).

use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::ValueEnum;

use super::{Ctx, Profile, out, to_json};
use crate::commands::RenderInput;
use crate::commands::render::RenderPages;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Font {
    /// Crisp 1-bit bitmap glyphs (5x8 or 6x12), decodable.
    Bitmap,
    /// DejaVu Sans Mono, anti-aliased, at any cell size.
    Outline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Compression {
    Fast,
    Default,
    Best,
}

#[derive(clap::Args)]
pub struct Args {
    /// The conversation (its active path); omit with --text.
    conv: Option<String>,
    /// First message of the range (default: the root).
    #[arg(long, value_name = "MSG")]
    from: Option<String>,
    /// Last message of the range (default: the tip).
    #[arg(long, value_name = "MSG")]
    to: Option<String>,
    /// Render a text file instead of a conversation.
    #[arg(long, value_name = "FILE", conflicts_with = "conv")]
    text: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "claude-hires")]
    profile: Profile,
    /// Cell size WxH (bitmap: 5x8 or 6x12; outline: any; default: the profile's).
    #[arg(long, value_name = "WxH", value_parser = parse_cell)]
    cell: Option<(u32, u32)>,
    #[arg(long, value_enum, default_value = "bitmap")]
    font: Font,
    /// A named page shape (glyphs, grid, columns, line layout) instead of --cell/--font; see
    /// `cairn legibility --list-shapes`.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["cell", "font"])]
    shape: Option<String>,
    #[arg(long, value_enum, default_value = "default")]
    compression: Compression,
    /// Leave the factsheet of exact strings out.
    #[arg(long)]
    no_factsheet: bool,
    /// Draw secrets (keys, tokens, passwords) as stored instead of redacting them.
    #[arg(long)]
    no_redact: bool,
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[arg(long)]
    json: bool,
}

fn parse_cell(s: &str) -> Result<(u32, u32), String> {
    s.split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .ok_or_else(|| format!("{s:?}: expected WxH such as 5x8"))
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.no_redact {
        super::keep_secrets();
    }
    let profile = a.profile.profile();
    let mut opts = crate::render::Options::new(profile);
    opts.font = match a.font {
        Font::Bitmap => crate::render::FontKind::Bitmap,
        Font::Outline => crate::render::FontKind::Outline,
    };
    if let Some(c) = a.cell {
        opts.cell = c;
    }
    if let Some(name) = &a.shape {
        let shape = crate::render::shape::by_name(name).ok_or_else(|| {
            anyhow::anyhow!("--shape {name:?}: {}", crate::render::shape::names())
        })?;
        shape.apply(&mut opts);
    }
    opts.compression = match a.compression {
        Compression::Fast => crate::render::Compression::Fast,
        Compression::Default => crate::render::Compression::Default,
        Compression::Best => crate::render::Compression::Best,
    };
    opts.factsheet = !a.no_factsheet;
    let input = match (&a.text, a.conv) {
        (Some(f), _) => RenderInput::Text {
            name: f.display().to_string(),
            text: std::fs::read_to_string(f)
                .with_context(|| format!("cannot read {}", f.display()))?,
        },
        (None, Some(conversation)) => RenderInput::Path {
            conversation,
            from: a.from,
            to: a.to,
        },
        (None, None) => bail!("give a conversation or --text FILE"),
    };
    let r = ctx
        .exec(RenderPages {
            input,
            options: opts.clone(),
            redact: !a.no_redact,
        })?
        .rendered;
    let dir = &a.out;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (p, m) in r.pages.iter().zip(&r.manifest.pages) {
        let f = dir.join(&m.file);
        std::fs::write(&f, &p.png).with_context(|| format!("cannot write {}", f.display()))?;
    }
    let manifest = dir.join("manifest.json");
    std::fs::write(&manifest, serde_json::to_string(&r.manifest)?)
        .with_context(|| format!("cannot write {}", manifest.display()))?;
    if opts.factsheet {
        let f = dir.join("factsheet.txt");
        std::fs::write(&f, &r.factsheet)
            .with_context(|| format!("cannot write {}", f.display()))?;
    }
    if a.json {
        return to_json(&r.stats);
    }
    let st = &r.stats;
    out(&format!(
        "{} pages, {} characters, {} image tokens ({}), ~{} text tokens as text; {:.2} characters per image token, {:.2}x cheaper than text{}",
        st.pages,
        st.characters,
        st.image_tokens,
        profile.name,
        st.text_tokens,
        st.chars_per_image_token,
        st.ratio,
        if st.unrendered > 0 {
            format!(
                "; {} characters drawn as boxes (text kept in the factsheet)",
                st.unrendered
            )
        } else {
            String::new()
        }
    ))
    .map_err(|e| anyhow!(e))
}
