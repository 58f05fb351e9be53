//! The window's views, named once: the tabs' labels and the names `cairn screenshot --view` takes, and the ways a
//! screenshot stages one. Plain data, no UI toolkit: the command line knows them in a build without the window.

/// The centre views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    Tree,
    Snapshots,
    Compare,
    Context,
    Timeline,
    Diff,
    Operations,
    Search,
    Stats,
    Models,
}

impl View {
    pub const ALL: [View; 10] = [
        View::Tree,
        View::Snapshots,
        View::Compare,
        View::Context,
        View::Timeline,
        View::Diff,
        View::Operations,
        View::Search,
        View::Stats,
        View::Models,
    ];

    pub fn name(self) -> &'static str {
        match self {
            View::Tree => "Tree",
            View::Snapshots => "Snapshots",
            View::Compare => "Compare",
            View::Context => "Context",
            View::Timeline => "Timeline",
            View::Diff => "Diff",
            View::Operations => "Operations",
            View::Search => "Search all",
            View::Stats => "Stats",
            View::Models => "Models",
        }
    }

    /// The name `cairn screenshot --view` takes.
    pub const fn key(self) -> &'static str {
        match self {
            View::Tree => "tree",
            View::Snapshots => "snapshots",
            View::Compare => "compare",
            View::Context => "context",
            View::Timeline => "timeline",
            View::Diff => "diff",
            View::Operations => "operations",
            View::Search => "search",
            View::Stats => "stats",
            View::Models => "models",
        }
    }

    pub fn from_name(s: &str) -> Option<View> {
        View::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s) || v.key() == s)
    }
}

/// The screenshots that stage a view beyond opening it (`cairn screenshot --view NAME`): the name, the view it
/// opens, and what it shows.
pub const STAGINGS: [(&str, View, &str); 4] = [
    (
        "transcript",
        View::Tree,
        "The tree view with messages opened in the transcript beside it",
    ),
    (
        "readback",
        View::Snapshots,
        "The snapshot pages with a reader's reading of them",
    ),
    (
        "shapes",
        View::Snapshots,
        "The snapshot pages with the shape picker open (every shape's density on the middle)",
    ),
    (
        "continue",
        View::Tree,
        "The tree view with the dialog of a session just written for Claude Code (into a folder under the \
         temporary directory, not the home folder)",
    ),
];

/// Every name `cairn screenshot --view` takes: each view's key, then the stagings.
pub const SHOTS: [&str; View::ALL.len() + STAGINGS.len()] = {
    let mut v = [""; View::ALL.len() + STAGINGS.len()];
    let mut i = 0;
    while i < View::ALL.len() {
        v[i] = View::ALL[i].key();
        i += 1;
    }
    let mut k = 0;
    while k < STAGINGS.len() {
        v[i + k] = STAGINGS[k].0;
        k += 1;
    }
    v
};

/// The view a screenshot named `name` opens (a view's key, or a staging's name).
pub fn of_shot(name: &str) -> Option<View> {
    View::ALL
        .into_iter()
        .find(|v| v.key() == name)
        .or_else(|| STAGINGS.iter().find(|s| s.0 == name).map(|s| s.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_and_staging_is_a_screenshot_name_once() {
        for v in View::ALL {
            assert_eq!(of_shot(v.key()), Some(v));
            assert_eq!(View::from_name(v.name()), Some(v));
        }
        assert_eq!(of_shot("readback"), Some(View::Snapshots));
        assert_eq!(of_shot("continue"), Some(View::Tree));
        assert_eq!(of_shot("nothing"), None);
        let mut names = SHOTS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SHOTS.len(), "{SHOTS:?}");
    }
}
