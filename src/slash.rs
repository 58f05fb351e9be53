//! Slash commands, parsed once here and used by the CLI (`cairn slash CONV "/compact snapshot"`) and the window's
//! command bar: `/compact [elide|images|snapshot|summary] [instructions]`, `/shake [elide|images|all]`,
//! `/context`, `/tree`, `/fork [MSG]`, `/checkpoint LABEL`, `/rewind LABEL DIGEST…`, `/branch MSG`,
//! `/export FORMAT [FILE]`, `/undo`.

use crate::commands::Action;
use crate::export::ExportFormat;
use crate::reclaim::Strategy;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    /// No strategy: the ladder.
    Compact {
        strategy: Option<Strategy>,
        instructions: Option<String>,
    },
    /// The free rungs only, forced.
    Shake {
        elide: bool,
        images: bool,
    },
    Context,
    Tree,
    Fork {
        at: Option<String>,
    },
    Checkpoint {
        label: String,
    },
    Rewind {
        label: String,
        digest: String,
    },
    Branch {
        message: String,
    },
    Export {
        format: ExportFormat,
        file: Option<String>,
    },
    Undo,
}

impl Slash {
    /// The action this command is, on a conversation: the same action whichever shell typed it. A rung named
    /// explicitly runs even below its threshold; `/compact` alone is the ladder.
    pub fn action(self, conversation: &str) -> Action {
        let conversation = conversation.to_string();
        match self {
            Slash::Compact {
                strategy,
                instructions,
            } => Action::Compact {
                conversation,
                strategy,
                force: true,
                target: None,
                protect: None,
                instructions,
                provider: None,
                from: None,
                to: None,
            },
            Slash::Shake { elide, images } => Action::Shake {
                conversation,
                elide,
                images,
            },
            Slash::Context => Action::Context {
                conversation,
                model: None,
            },
            Slash::Tree => Action::Tree { conversation },
            Slash::Fork { at } => Action::Fork { conversation, at },
            Slash::Checkpoint { label } => Action::Checkpoint {
                conversation,
                label: Some(label),
            },
            Slash::Rewind { label, digest } => Action::Rewind {
                conversation,
                label,
                digest,
            },
            Slash::Branch { message } => Action::Branch {
                conversation,
                message,
                expect: None,
            },
            Slash::Export { format, file } => Action::Export {
                conversation,
                at: None,
                format,
                options: crate::export::Options::default(),
                out: file.map(std::path::PathBuf::from),
            },
            Slash::Undo => Action::Undo { conversation },
        }
    }
}

/// The command names, for completion.
pub const COMMANDS: &[&str] = &[
    "/compact",
    "/shake",
    "/context",
    "/tree",
    "/fork",
    "/checkpoint",
    "/rewind",
    "/branch",
    "/export",
    "/undo",
];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct SlashError(pub String);

fn err(s: impl Into<String>) -> SlashError {
    SlashError(s.into())
}

pub fn parse(input: &str) -> Result<Slash, SlashError> {
    let input = input.trim();
    let Some(rest) = input.strip_prefix('/') else {
        return Err(err(format!(
            "{input:?} is not a slash command (they start with /)"
        )));
    };
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let args = args.trim();
    let words: Vec<&str> = args.split_whitespace().collect();
    let rest_after = |n: usize| -> Option<String> {
        let mut it = args.splitn(n + 1, char::is_whitespace);
        for _ in 0..n {
            it.next();
        }
        it.next()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Ok(match name {
        "compact" => match words.first().and_then(|w| Strategy::from_name(w)) {
            Some(s) => Slash::Compact {
                strategy: Some(s),
                instructions: rest_after(1),
            },
            None => Slash::Compact {
                strategy: None,
                instructions: (!args.is_empty()).then(|| args.to_string()),
            },
        },
        "shake" => match words.first().copied().unwrap_or("all") {
            "elide" => Slash::Shake {
                elide: true,
                images: false,
            },
            "images" => Slash::Shake {
                elide: false,
                images: true,
            },
            "all" => Slash::Shake {
                elide: true,
                images: true,
            },
            w => return Err(err(format!("/shake {w}: elide, images or all"))),
        },
        "context" => Slash::Context,
        "tree" => Slash::Tree,
        "fork" => Slash::Fork {
            at: words.first().map(|s| s.to_string()),
        },
        "checkpoint" => Slash::Checkpoint {
            label: words
                .first()
                .ok_or_else(|| err("/checkpoint LABEL"))?
                .to_string(),
        },
        "rewind" => Slash::Rewind {
            label: words
                .first()
                .ok_or_else(|| err("/rewind LABEL DIGEST"))?
                .to_string(),
            digest: rest_after(1)
                .ok_or_else(|| err("/rewind LABEL DIGEST: say what the abandoned path found"))?,
        },
        "branch" => Slash::Branch {
            message: words.first().ok_or_else(|| err("/branch MSG"))?.to_string(),
        },
        "export" => {
            let f = words.first().ok_or_else(|| err("/export FORMAT [FILE]"))?;
            Slash::Export {
                format: ExportFormat::from_name(f).ok_or_else(|| {
                    let names: Vec<&str> = ExportFormat::ALL.iter().map(|x| x.name()).collect();
                    let (last, rest) = names.split_last().unwrap_or((&"html", &[]));
                    err(format!("/export {f}: {} or {last}", rest.join(", ")))
                })?,
                file: words.get(1).map(|s| s.to_string()),
            }
        }
        "undo" => Slash::Undo,
        other => {
            return Err(err(format!(
                "unknown command /{other}: {}",
                COMMANDS.join(" ")
            )));
        }
    })
}

/// Completions of a partial command name.
pub fn complete(prefix: &str) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .copied()
        .filter(|c| c.starts_with(prefix))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(
            parse("/compact snapshot").unwrap(),
            Slash::Compact {
                strategy: Some(Strategy::Snapshot),
                instructions: None
            }
        );
        assert_eq!(
            parse("/compact summary keep the API names").unwrap(),
            Slash::Compact {
                strategy: Some(Strategy::Summary),
                instructions: Some("keep the API names".into())
            }
        );
        assert_eq!(
            parse("/compact").unwrap(),
            Slash::Compact {
                strategy: None,
                instructions: None
            }
        );
        assert_eq!(
            parse("/shake").unwrap(),
            Slash::Shake {
                elide: true,
                images: true
            }
        );
        assert_eq!(
            parse("/shake images").unwrap(),
            Slash::Shake {
                elide: false,
                images: true
            }
        );
        assert_eq!(
            parse("/rewind plan X fails: no batch API").unwrap(),
            Slash::Rewind {
                label: "plan".into(),
                digest: "X fails: no batch API".into()
            }
        );
        assert!(parse("/rewind plan").is_err());
        assert!(parse("compact").is_err());
        assert!(parse("/nope").unwrap_err().0.contains("/compact"));
        assert_eq!(complete("/c"), vec!["/compact", "/context", "/checkpoint"]);
    }
}
