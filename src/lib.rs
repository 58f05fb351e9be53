//! cairn: keeps the whole history of LLM agent sessions as a tree and decides what the model sees.
//!
//! The modules sit in layers, lowest first. A module imports from its own layer and the layers below it, never
//! from above, and no two modules import each other, however indirectly: `tests/layers.rs` reads the groups
//! below (each begins with a `// layer:` line) and fails on an import that breaks either rule. The core (every
//! layer below the shells) never touches a UI toolkit: the CLI and the window call the same functions. See
//! ARCHITECTURE.md for the data flow.

// No function a page long: split along its phases instead (clippy.toml sets the page at 100 lines).
#![warn(clippy::too_many_lines)]

// layer: the data model. Messages, their blocks and their JSON forms; imports nothing else of cairn.
pub mod model;
pub mod wire;

// layer: what cairn knows of text, tokens and models. Pure functions of the data model: tool-call pairing,
// token counts, the model catalog, secrets, a provider's HTTP client, the tree's layout on a canvas.
pub mod layout;
pub mod models;
pub mod pairs;
pub mod provider;
pub mod redact;
pub mod tokens;

// layer: drawing text as pages. The renderer and what reads its pages back; knows no store.
pub mod legibility;
pub mod render;

// layer: the store. The tree and its figures kept durable; the search index, the prompt cache's reading and the
// statistics over it. Knows nothing of reclaim.
pub mod cache;
pub mod search;
pub mod stats;
pub mod store;

// layer: deciding what the model sees. The reclaim ladder, its policy and what it leaves.
pub mod reclaim;

// layer: sessions in and out. The harnesses' formats read, the exports written, a request sent back to a model.
pub mod demo;
pub mod diff;
pub mod discover;
pub mod export;
pub mod formats;
pub mod import;
pub mod send;

// layer: the commands. One definition per action; the slash commands and the settings read into them.
pub mod commands;
pub mod config;
pub mod slash;

// layer: the shells. They build an action, run it and format its outcome; they compute nothing.
pub mod cli;
pub mod views;
#[cfg(feature = "gui")]
pub mod window;
