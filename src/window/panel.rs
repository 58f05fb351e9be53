//! One interface for the window's panels that ask the core for something and show its answer (after egui's demo,
//! where each panel is a struct with its own state and a `ui` method). The explorer keeps them in one list
//! ([`super::Explorer`]'s `panels!`), draws the one whose tab is open, does what it asks ([`Ask`]: run an action,
//! open a conversation or a message), and hands each background result to the list: a failure to the panel whose
//! request failed, an outcome to the panel it answers. Adding a panel adds it to the list; the explorer's drawing
//! and routing do not change.

use eframe::egui;

use super::View;
use super::remote::Remote;
use super::session::Session;
use super::worker::For;
use crate::commands::{Action, Outcome};
use crate::model::Conversation;

/// What a panel is drawn with: the open conversation (None when none is) and the store's conversations.
pub struct Shared<'a> {
    pub session: Option<&'a Session>,
    pub conversations: &'a [Conversation],
}

/// What a panel asks of the explorer from its `ui`.
#[derive(Debug)]
pub enum Ask {
    /// An action for the core (run on the worker, its result handed back to the panels).
    Run(Box<Action>),
    /// Open a conversation (the open one when None) at a message (the tree when None).
    Open {
        conversation: Option<String>,
        message: Option<String>,
    },
}

impl Ask {
    pub fn run(action: Action) -> Option<Ask> {
        Some(Ask::Run(Box::new(action)))
    }
}

/// Where an answer arrives: the conversation open now, and the one the request was about.
#[derive(Clone, Copy)]
pub struct At<'a> {
    pub open: Option<&'a str>,
    pub about: Option<&'a str>,
}

impl At<'_> {
    /// The conversation an answer is shown under: the one asked about, else the one open.
    pub fn conversation(&self) -> Option<String> {
        self.about.or(self.open).map(str::to_string)
    }

    /// Whether an answer naming `conversation` belongs to what is open.
    pub fn is_open(&self, conversation: &str) -> bool {
        self.open == Some(conversation)
    }
}

pub trait Panel {
    /// The tab it is drawn under.
    fn view(&self) -> View;
    /// Whether it is about the open conversation (drawn only while one is open).
    fn needs_session(&self) -> bool {
        true
    }
    /// Draws it; what it asks of the explorer.
    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask>;
    /// Takes the failure of a request it made (`purpose`), to show with a way to try again; false when the
    /// request was not its own.
    fn failed(&mut self, purpose: For, error: &str) -> bool;
    /// Takes an outcome it asked for; gives back one that is not its own.
    fn answered(&mut self, at: At<'_>, outcome: Outcome) -> Option<Outcome>;
    /// The store changed (files imported, a followed file grown): forget answers drawn from it, to ask again.
    fn stale(&mut self) {}
}

/// The answer to a panel's job as its command's `T`, or the outcome given back (another's).
pub fn answer_of<T: Clone + Send + Sync + 'static>(outcome: Outcome) -> Result<T, Box<Outcome>> {
    match outcome {
        Outcome::Answer(a) => a
            .take_owned::<T>()
            .map_err(|a| Box::new(Outcome::Answer(a))),
        other => Err(Box::new(other)),
    }
}

/// Shows a failed request in the slot its answer would fill, when the request was `mine`; whether it was.
pub fn fail_into<T>(slot: &mut Remote<T>, mine: bool, error: &str) -> bool {
    if mine {
        *slot = Remote::Failed(error.to_string());
    }
    mine
}
