//! The snapshot preview: the pages a snapshot compaction would send now (what it covers, on a profile in a shape,
//! each else the conversation's model's), with every shape's density on the same text and the text tokens each
//! page replaces.

use super::{Command, CommandError, Env};
use crate::render::{self, Rendered, SourceText};

/// Previews a conversation's snapshot pages.
#[derive(Debug, Clone)]
pub struct PreviewSnapshot {
    pub conversation: String,
    pub profile: Option<&'static render::Profile>,
    pub shape: Option<&'static render::shape::PageShape>,
}

impl Command for PreviewSnapshot {
    type Output = Box<SnapshotPreview>;

    fn run(self, env: Env<'_>) -> Result<Box<SnapshotPreview>, CommandError> {
        let Env {
            store, settings, ..
        } = env;
        let conversation = self.conversation.as_str();
        let (profile, shape) = (self.profile, self.shape);
        let (view, policy, sources) =
            super::sources::snapshot_middle(store, settings, conversation)?;
        let default_shape = policy.page_shape();
        let mut options = render::Options::new(profile.unwrap_or(policy.profile));
        shape.unwrap_or(default_shape).apply(&mut options);
        let rendered = render::render(&sources, &options)?;
        let page_text_tokens = rendered
            .manifest
            .pages
            .iter()
            .map(|p| p.text_tokens(&sources))
            .collect();
        Ok(Box::new(SnapshotPreview {
            conversation: view.conversation,
            densities: render::shape::densities(&sources, options.profile),
            page_text_tokens,
            rendered,
            sources,
            options,
            shape: shape.unwrap_or(default_shape),
            default_shape,
        }))
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}

/// The pages a snapshot compaction would send now, with the text they were drawn from.
#[derive(Debug, Clone)]
pub struct SnapshotPreview {
    pub conversation: String,
    pub rendered: Rendered,
    pub sources: Vec<SourceText>,
    pub options: render::Options,
    /// The shape the pages are drawn in.
    pub shape: &'static render::shape::PageShape,
    /// The shape the conversation's model reads by default (what `compact` draws unless told otherwise).
    pub default_shape: &'static render::shape::PageShape,
    /// Every shape on the same text and profile, measured without drawing.
    pub densities: Vec<render::shape::Density>,
    /// The text tokens each page replaces ([`render::PageMap::text_tokens`]).
    pub page_text_tokens: Vec<u64>,
}
