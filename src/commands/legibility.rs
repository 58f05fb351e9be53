//! `legibility`: a text or a path drawn in each page shape and read back by each reader (tesseract, PaddleOCR, or
//! the provider's model answering questions about the pages), scored. The provider reader costs money: unconfirmed,
//! it only says how much.

use std::path::PathBuf;

use super::{Command, CommandError, Env, RenderInput};
use crate::legibility::{Reader, ShapeReading};
use crate::provider::Provider;
use crate::reclaim::Settings;
use crate::render;
use crate::store::Store;

/// Reads pages back.
#[derive(Debug, Clone)]
pub struct ReadBack {
    pub input: RenderInput,
    pub profile: &'static render::profile::Profile,
    pub shapes: Vec<&'static render::shape::PageShape>,
    pub readers: Vec<Reader>,
    /// The script that runs the OCR readers.
    pub script: PathBuf,
    /// For the provider reader: the model asked, and the user's consent to what it costs.
    pub provider: Option<Provider>,
    pub confirmed: bool,
}

impl Command for ReadBack {
    type Output = Vec<ShapeReading>;

    fn run(self, env: Env<'_>) -> Result<Vec<ShapeReading>, CommandError> {
        legibility(env.store, env.settings, self, env.progress)
    }
}

/// What `legibility` reads and with what.
/// Renders the input in each shape and has each reader read it back. The provider reader costs money: without
/// `confirmed` it only says how much.
fn legibility(
    store: &mut Store,
    settings: &Settings,
    c: ReadBack,
    progress: &dyn super::Progress,
) -> Result<Vec<ShapeReading>, CommandError> {
    let ReadBack {
        input,
        profile,
        shapes,
        readers,
        script,
        provider,
        confirmed,
    } = c;
    let sources = super::sources::sources_of(store, input, true)?;
    if readers.contains(&Reader::Provider) {
        let p = provider.as_ref().ok_or_else(|| {
            CommandError::Invalid(
                "the provider reader needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or the settings \
                 file's \"provider\")"
                    .into(),
            )
        })?;
        if !confirmed {
            let prices = super::learned_prices::prices(store, settings)?;
            let mut tokens = 0;
            let mut cost = Some(0.0);
            // the same questions go with every shape's pages
            let prompt =
                crate::legibility::question_prompt(&crate::legibility::questions(&sources, 20));
            for shape in &shapes {
                let mut opts = render::Options::new(profile);
                shape.apply(&mut opts);
                let r = render::render(&sources, &opts)?;
                let (t, c) = crate::legibility::provider_cost(&r, &prompt, &p.model, &prices);
                tokens += t;
                cost = cost.zip(c).map(|(x, y)| x + y);
            }
            return Err(CommandError::Invalid(format!(
                "the provider reader sends about {tokens} tokens to {} ({}): run again with --yes",
                p.model,
                cost.map_or_else(
                    || "its price is unknown".to_string(),
                    |c| format!("about ${c:.2}")
                )
            )));
        }
    }
    let work = tempfile_dir()?;
    let mut out = Vec::new();
    let total = shapes.len() * readers.len();
    for (i, shape) in shapes.iter().enumerate() {
        for (j, reader) in readers.iter().enumerate() {
            progress.step(i * readers.len() + j, total, shape.name);
            let mut opts = render::Options::new(profile);
            shape.apply(&mut opts);
            opts.factsheet = false;
            let reading = match (reader, &provider) {
                (Reader::Provider, Some(p)) => {
                    crate::legibility::measure_recall(&sources, &opts, shape.name, p, store, 20)
                }
                _ => {
                    crate::legibility::measure(&sources, &opts, shape.name, *reader, &script, &work)
                }
            };
            out.push(reading.map_err(|e| CommandError::Invalid(e.to_string()))?);
        }
    }
    std::fs::remove_dir_all(&work).ok();
    Ok(out)
}

/// A fresh folder for strips under the system's temporary folder.
fn tempfile_dir() -> Result<std::path::PathBuf, CommandError> {
    let d = std::env::temp_dir().join(format!(
        "cairn-legibility-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&d)
        .map_err(|e| CommandError::Invalid(format!("{}: {e}", d.display())))?;
    Ok(d)
}
