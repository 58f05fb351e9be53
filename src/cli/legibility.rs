//! `cairn legibility CONV|--text FILE [--shape NAME ...|--all-shapes] [--reader tesseract|ppocr ...] [--json]`:
//! renders in each page shape, has an OCR engine read the pages back, and scores what it read against the source
//! (prose, code, numbers); `--list-shapes` lists the shapes.

use std::path::PathBuf;

use anyhow::{Result, anyhow};

use super::{Ctx, Profile, out, to_json};
use crate::commands::densities::MeasureDensities;
use crate::commands::legibility::ReadBack;
use crate::commands::{Progress, RenderInput};
use crate::legibility::Reader;
use crate::render::shape::{SHAPES, by_name, names};

#[derive(clap::Args)]
pub struct Args {
    /// The conversation whose active path is read (or --text).
    conv: Option<String>,
    #[arg(long, value_name = "FILE", conflicts_with = "conv")]
    text: Option<PathBuf>,
    /// Only the first this many characters of the text (a fair comparison across shapes needs the same text).
    #[arg(long, value_name = "N")]
    chars: Option<usize>,
    /// A page shape (repeatable; default: every shape with --all-shapes, else the default shape).
    #[arg(long, value_name = "NAME")]
    shape: Vec<String>,
    #[arg(long)]
    all_shapes: bool,
    /// The reader (repeatable): tesseract, ppocr, or provider (the configured vision model answers recall
    /// questions with only the pages; it costs money: it says how much and needs --yes).
    #[arg(long, value_enum, default_value = "tesseract")]
    reader: Vec<ReaderArg>,
    /// Consent to what the provider reader costs.
    #[arg(long)]
    yes: bool,
    /// The page profile (default: claude-hires for reading; with --list-shapes CONV, the conversation's model's).
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// Also show the N strips read worst (source, reading, misread characters marked) and the characters
    /// missed most, per shape and reader.
    #[arg(long, value_name = "N")]
    misreads: Option<usize>,
    /// List the page shapes and exit.
    #[arg(long)]
    list_shapes: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReaderArg {
    Tesseract,
    Ppocr,
    Provider,
}

struct Shapes;

impl Progress for Shapes {
    fn step(&self, done: usize, total: usize, what: &str) {
        if done < total {
            eprintln!("[{}/{total}] reading {what}", done + 1);
        }
    }
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    if a.list_shapes {
        return list_shapes(ctx, &a);
    }
    let shapes: Vec<_> = if a.all_shapes {
        SHAPES.iter().collect()
    } else if a.shape.is_empty() {
        vec![&SHAPES[0]]
    } else {
        a.shape
            .iter()
            .map(|n| by_name(n).ok_or_else(|| anyhow!("--shape {n:?}: {}", names())))
            .collect::<Result<_>>()?
    };
    let mut readers: Vec<Reader> = a
        .reader
        .iter()
        .map(|r| match r {
            ReaderArg::Tesseract => Reader::Tesseract,
            ReaderArg::Ppocr => Reader::Ppocr,
            ReaderArg::Provider => Reader::Provider,
        })
        .collect();
    readers.dedup();
    let input = input_of(&a)?;
    let provider = if readers.contains(&Reader::Provider) {
        let settings = ctx.settings()?.clone();
        Some(crate::config::provider(&settings, None, None)?)
    } else {
        None
    };
    let results = ctx.exec_with(
        ReadBack {
            input,
            profile: a.profile.unwrap_or(Profile::ClaudeHires).profile(),
            shapes,
            readers,
            script: crate::legibility::default_script(),
            provider,
            confirmed: a.yes,
        },
        &Shapes,
    )?;
    if a.json {
        return to_json(&serde_json::json!({ "results": results }));
    }
    table(&results, a.misreads)
}

/// What to read back: a text file (its first `--chars`), or a conversation's path.
fn input_of(a: &Args) -> Result<RenderInput> {
    Ok(match (&a.text, &a.conv) {
        (Some(f), _) => {
            let text = std::fs::read_to_string(f).map_err(|e| anyhow!("{}: {e}", f.display()))?;
            let text: String = match a.chars {
                Some(n) => text.chars().take(n).collect(),
                None => text,
            };
            RenderInput::Text {
                name: f
                    .file_name()
                    .map_or("text".into(), |n| n.to_string_lossy().into_owned()),
                text,
            }
        }
        (None, Some(c)) => RenderInput::Path {
            conversation: c.clone(),
            from: None,
            to: None,
        },
        (None, None) => return Err(anyhow!("name a conversation or --text FILE")),
    })
}

/// The readings as a table, and with `--misreads N` each reading's most missed characters and worst rows.
fn table(results: &[crate::legibility::ShapeReading], misreads: Option<usize>) -> Result<()> {
    let pct = |x: Option<f64>| {
        x.map(|v| format!("{:.1}%", v * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    out(&format!(
        "{:<24} {:<10} {:>9} {:>7} {:>7} {:>7} {:>8} {:>7}",
        "shape", "reader", "chars/tok", "all", "prose", "code", "numbers", "recall"
    ))?;
    for r in results {
        out(&format!(
            "{:<24} {:<10} {:>9.2} {:>7} {:>7} {:>7} {:>8} {:>7}",
            r.shape,
            r.reader,
            r.chars_per_image_token,
            pct(r.accuracy.all),
            pct(r.accuracy.prose),
            pct(r.accuracy.code),
            pct(r.accuracy.numbers),
            pct(r.recall)
        ))?;
    }
    if let Some(r) = results.first() {
        out(&format!("method: {}", r.method))?;
    }
    if let Some(n) = misreads {
        for r in results {
            let missed: Vec<String> = r
                .most_missed()
                .iter()
                .take(16)
                .map(|(c, m, seen)| format!("{c:?} {m}/{seen}"))
                .collect();
            out(&format!(
                "\n{} by {}: most missed {}",
                r.shape,
                r.reader,
                missed.join(", ")
            ))?;
            for x in r.worst(n) {
                let marks: String = x
                    .read
                    .iter()
                    .map(|ok| if *ok { ' ' } else { '^' })
                    .collect();
                out(&format!("p{} r{:<4} {}", x.page + 1, x.row, x.expected))?;
                out(&format!("           {marks}"))?;
                out(&format!("    read   {}", x.got))?;
            }
        }
    }
    Ok(())
}

/// `--list-shapes`: the shapes, the model families that read each by default, and with a conversation each
/// shape's density on what a snapshot of it would cover now.
fn list_shapes(ctx: &mut Ctx, a: &Args) -> Result<()> {
    use crate::models::pages::PAGES;
    let measured = match &a.conv {
        Some(c) => Some(ctx.exec(MeasureDensities {
            conversation: c.clone(),
            profile: a.profile.map(Profile::profile),
        })?),
        None => None,
    };
    let families = |name: &str| -> Vec<&'static str> {
        PAGES
            .iter()
            .filter(|f| f.shape == name)
            .map(|f| f.name)
            .collect()
    };
    let density = |name: &str| {
        measured
            .as_ref()
            .and_then(|m| m.densities.iter().find(|d| d.shape == name))
    };
    if a.json {
        let shapes: Vec<serde_json::Value> = SHAPES
            .iter()
            .map(|s| {
                let mut v = serde_json::json!({"name": s.name, "cell": format!("{}x{}", s.cell.0, s.cell.1),
                    "advance": format!("{}x{}", s.advance.0, s.advance.1),
                    "glyph": match s.glyph { crate::render::FontKind::Bitmap => "bitmap", _ => "outline" },
                    "columns": s.columns, "lines": s.lines, "about": s.about,
                    "default_for": families(s.name)});
                if let Some(d) = density(s.name) {
                    v["pages"] = d.pages.into();
                    v["image_tokens"] = d.image_tokens.into();
                    v["chars_per_image_token"] = d.chars_per_image_token.into();
                }
                v
            })
            .collect();
        let mut doc = serde_json::json!({ "shapes": shapes, "families": PAGES });
        if let Some(m) = &measured {
            doc["conversation"] = m.conversation.clone().into();
            doc["profile"] = m.profile.into();
            doc["model"] = m.model.clone().into();
            doc["default_shape"] = m.default_shape.into();
        }
        return to_json(&doc);
    }
    if let Some(m) = &measured {
        out(&format!(
            "{}: model {}, {} pages, default shape {} (*)",
            m.conversation, m.model, m.profile, m.default_shape
        ))?;
    }
    for s in SHAPES {
        let fams = families(s.name);
        let default = if fams.is_empty() {
            String::new()
        } else {
            format!(" [default for {}]", fams.join(", "))
        };
        let star = measured
            .as_ref()
            .map_or("", |m| if m.default_shape == s.name { "*" } else { " " });
        match density(s.name) {
            Some(d) => out(&format!(
                "{star}{:<24} {:>7} image tokens {:>3} page(s) {:>6.2} chars/token  {}{default}",
                s.name, d.image_tokens, d.pages, d.chars_per_image_token, s.about
            ))?,
            None => out(&format!("{:<24} {}{default}", s.name, s.about))?,
        }
    }
    Ok(())
}
