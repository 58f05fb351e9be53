//! cairn: keeps the whole history of LLM agent sessions as a tree and decides what the model sees.
//!
//! The core (this library, minus [`cli`] and [`window`]) never touches a UI toolkit: the CLI and the window
//! call the same functions. See ARCHITECTURE.md for the data flow.

pub mod cache;
pub mod commands;
pub mod demo;
pub mod diff;
pub mod discover;
pub mod export;
pub mod formats;
pub mod import;
pub mod layout;
pub mod legibility;
pub mod model;
pub mod models;
pub mod pairs;
pub mod provider;
pub mod reclaim;
pub mod redact;
pub mod render;
pub mod search;
pub mod send;
pub mod slash;
pub mod stats;
pub mod store;
pub mod tokens;
pub mod wire;

pub mod cli;
pub mod config;
#[cfg(feature = "gui")]
pub mod window;
