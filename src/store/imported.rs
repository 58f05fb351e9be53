//! What an importer hands the store: one conversation's tree as it was recorded, its messages pointing at
//! their parents by index. The formats build it; the store's writers (a new import, a merge, a file's new lines)
//! read it.

use serde_json::Value;

use crate::model::NewMessage;

/// One message of an imported tree; `parent` is the index of an earlier message of the same import.
#[derive(Debug, Clone)]
pub struct ImportedMessage {
    pub parent: Option<usize>,
    pub message: NewMessage,
}

/// One conversation of an import; `linked_to` names an earlier conversation of the same file (a subagent's
/// parent session), recorded as `meta.cairn.linked_to`.
#[derive(Debug, Clone)]
pub struct ImportedConversation {
    pub title: Option<String>,
    pub messages: Vec<ImportedMessage>,
    pub tip: Option<usize>,
    pub checkpoints: Vec<(String, usize)>,
    pub meta: Value,
    pub linked_to: Option<usize>,
}
