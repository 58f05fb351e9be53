//! `legibility CONV`'s measurement: how dense each page shape draws the middle of a conversation a snapshot would
//! cover, on a profile (else its model's), beside the shape its model would use.

use super::{Command, CommandError, Env};
use crate::render::Profile;
use crate::render::shape::{Density, densities};

/// Measures every page shape on a conversation's snapshot middle.
#[derive(Debug, Clone)]
pub struct MeasureDensities {
    pub conversation: String,
    pub profile: Option<&'static Profile>,
}

/// Each shape's density, and what it was measured on.
pub struct Densities {
    pub conversation: String,
    pub profile: &'static str,
    pub model: String,
    pub default_shape: &'static str,
    pub densities: Vec<Density>,
}

impl Command for MeasureDensities {
    type Output = Densities;

    fn run(self, env: Env<'_>) -> Result<Densities, CommandError> {
        let (view, policy, sources) =
            super::sources::snapshot_middle(env.store, env.settings, &self.conversation)?;
        let profile = self.profile.unwrap_or(policy.profile);
        Ok(Densities {
            conversation: view.conversation,
            profile: profile.name,
            default_shape: policy.page_shape().name,
            model: policy.model,
            densities: densities(&sources, profile),
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
