//! The session a new user sees at once: on first run the explorer creates the default store and installs this
//! bundled demo (written by `scripts/make-demo`, shipped inside the binary so an installed cairn needs no
//! assets directory). It has everything the explorer draws: parallel tool calls, an error result, a
//! screenshot, two checkpoints, a rewound exploration, an edited prompt, a long middle worth compacting, and a
//! fork made here through the same store call the CLI's `fork` uses.

use std::path::Path;

use serde_json::Value;

use crate::formats::{self, FormatError};
use crate::model::{Block, NewMessage, Role};
use crate::store::{Store, StoreError};

pub const SESSION: &str = include_str!("../assets/demo/demo-session.jsonl");
const SOURCE: &str = "cairn demo (assets/demo/demo-session.jsonl)";

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What [`install`] made.
#[derive(Debug, Clone)]
pub struct Installed {
    pub conversation: String,
    pub fork: String,
}

/// Imports the demo session and forks it at its first checkpoint (one more turn in the fork). Installing twice
/// is refused as a duplicate import, like any file.
pub fn install(store: &mut Store) -> Result<Installed, DemoError> {
    let path = Path::new("assets/demo/demo-session.jsonl");
    let mut lines = Vec::new();
    for (i, l) in SESSION.lines().enumerate() {
        let v: Value = serde_json::from_str(l)
            .map_err(|e| FormatError::new(path, i + 1, format!("not JSON: {e}")))?;
        lines.push((i + 1, v));
    }
    let (conv, _) = formats::cairn_jsonl::parse(path, &lines)?.into_imported(None);
    let hash = {
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(SESSION.as_bytes()))
    };
    let ids = store.import_file(&hash, SOURCE, &[conv], None)?;
    let conversation = ids.into_iter().next().ok_or_else(|| {
        StoreError::InvalidTurn("the demo session imported no conversation".into())
    })?;
    let at = store
        .checkpoints(&conversation)?
        .into_iter()
        .find(|c| c.label == "fix-landed")
        .map(|c| c.message);
    let fork = store.fork(&conversation, at.as_deref())?;
    store.append_turn(
        &fork,
        &[
            NewMessage::text(
                Role::User,
                "Write the fix up as a short note for the support ticket: cause, change, how we verified it.",
            ),
            NewMessage::new(
                Role::Assistant,
                vec![Block::text(
                    "**Cause:** `Queue::drain` woke blocked producers before taking the buffer, so a producer could \
                     push into the buffer being drained and items came out of order.\n**Change:** take the buffer \
                     first, then `notify_all`.\n**Verified:** `drain_order` passed 200 runs in a row.",
                )],
            ),
        ],
    )?;
    Ok(Installed { conversation, fork })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_has_what_the_explorer_shows() {
        let mut store = Store::open_in_memory().unwrap();
        let d = install(&mut store).unwrap();
        let heads = store.heads(&d.conversation).unwrap();
        assert!(heads.len() > 80, "{}", heads.len());
        assert!(heads.iter().any(|h| h.has_error()));
        assert!(heads.iter().any(|h| h.has_image()));
        assert!(heads.iter().any(|h| h.has_thinking()));
        // branches: the rewound exploration and the edited prompt
        let mut children = std::collections::HashMap::new();
        for h in &heads {
            if let Some(p) = h.parent_in(&heads) {
                *children.entry(p).or_insert(0) += 1;
            }
        }
        assert!(children.values().filter(|c| **c > 1).count() >= 2);
        assert_eq!(store.checkpoints(&d.conversation).unwrap().len(), 2);
        let fork = store.conversation(&d.fork).unwrap();
        assert_eq!(
            fork.forked_from.map(|f| f.conversation),
            Some(d.conversation.clone())
        );
        // a long middle: the snapshot rung has something to take
        let view = crate::reclaim::PathView::load(&store, &d.conversation, None).unwrap();
        let policy = crate::reclaim::Policy::new(&Default::default(), view.model(), None, None);
        let est = crate::reclaim::replay::Estimator::for_path(
            &Default::default(),
            Some(&store),
            &view,
            (&policy.model, crate::tokens::Tokenizer::Estimate),
        )
        .unwrap();
        let r = crate::reclaim::report::report(&view, &policy, &est);
        assert!(
            r.rungs
                .iter()
                .any(|r| r.name == "snapshot" && r.saves > 5_000),
            "{:?}",
            r.rungs
        );
        assert!(matches!(
            install(&mut store),
            Err(DemoError::Store(StoreError::Duplicate { .. }))
        ));
    }
}
