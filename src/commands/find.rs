//! `find` (the tree's search box): messages of one conversation, every branch, whose id starts with the query or
//! whose text holds its words (the last one as a prefix), in tree order.

use std::sync::atomic::Ordering;

use super::{Command, CommandError, Env};

/// Finds messages in a conversation.
#[derive(Debug, Clone)]
pub struct FindInConversation {
    pub conversation: String,
    pub query: String,
}

/// The matches, in tree order.
pub struct Found {
    pub conversation: String,
    pub query: String,
    pub hits: Vec<String>,
}

impl Command for FindInConversation {
    type Output = Found;

    fn run(self, env: Env<'_>) -> Result<Found, CommandError> {
        let store = env.store;
        let conversation = store.resolve_conversation(&self.conversation)?;
        let q = self.query.trim().to_lowercase();
        let mut hits: Vec<String> = Vec::new();
        if !q.is_empty() && q.chars().all(|c| c.is_ascii_hexdigit()) {
            hits.extend(store.ids_with_prefix(&conversation, &q)?);
        }
        if env.cancel.load(Ordering::Relaxed) {
            return Err(CommandError::Cancelled);
        }
        // the words as one phrase, its last word a prefix: what a find box means, whatever characters it holds
        let words: Vec<String> = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        if !words.is_empty() {
            let found = store.search(&crate::store::SearchQuery {
                text: format!("\"{}\"*", words.join(" ")),
                conversation: Some(conversation.clone()),
                limit: 100_000,
                ..Default::default()
            })?;
            let mut seen: std::collections::HashSet<String> = hits.iter().cloned().collect();
            // in tree order (the index ranks; a find steps through the tree)
            let mut by_order: Vec<(String, i64)> = found
                .hits
                .into_iter()
                .filter(|h| seen.insert(h.message.clone()))
                .map(|h| (h.message, h.seq))
                .collect();
            by_order.sort_by_key(|x| x.1);
            hits.extend(by_order.into_iter().map(|x| x.0));
        }
        Ok(Found {
            conversation,
            query: self.query,
            hits,
        })
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}
