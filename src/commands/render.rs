//! `render`: a text, or a stretch of a conversation's path, drawn as snapshot pages (secrets redacted unless asked
//! not to), with the text each page was drawn from.

use super::{Command, CommandError, Env, RenderInput};
use crate::render::{Options, Rendered, SourceText};

/// Draws pages.
#[derive(Debug, Clone)]
pub struct RenderPages {
    pub input: RenderInput,
    pub options: Options,
    pub redact: bool,
}

/// The pages and the texts they were drawn from.
pub struct Pages {
    pub rendered: Rendered,
    pub sources: Vec<SourceText>,
}

impl Command for RenderPages {
    type Output = Pages;

    fn run(self, env: Env<'_>) -> Result<Pages, CommandError> {
        let sources = super::sources::sources_of(env.store, self.input, self.redact)?;
        let rendered = crate::render::render(&sources, &self.options)?;
        Ok(Pages { rendered, sources })
    }
}
