//! `calibrate`: each model's estimate fitted on the store's measured replies (per harness), the fits kept in the
//! store for every later estimate.

use super::{Command, CommandError, Env};
use crate::reclaim::replay::Calibration;

/// Fits and keeps every model's calibration.
#[derive(Debug, Clone, Copy)]
pub struct Calibrate;

/// The fits, and the conversations that could not be read (named, then left out).
pub struct Calibrated {
    pub models: Vec<Calibration>,
    pub skipped: Vec<String>,
}

impl Command for Calibrate {
    type Output = Calibrated;

    fn run(self, env: Env<'_>) -> Result<Calibrated, CommandError> {
        let (models, skipped) = crate::reclaim::replay::calibrate(env.store)?;
        Ok(Calibrated { models, skipped })
    }
}
