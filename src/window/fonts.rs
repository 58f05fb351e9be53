//! The window's fonts. egui's own (Latin, Cyrillic, Greek, emoji) and the bundled DejaVu Sans Mono (arrows, flags,
//! box drawing) come first; for each script they lack, the first font of this machine that has it follows as a
//! fallback: found with fontdb in the folders fontconfig names, a regular sans face preferred. So a session titled
//! 中文版, or written in Arabic or Hebrew, reads as itself. A script no font on the machine has is named
//! ([`Fonts::missing`]) so the window can say so where it shows such text, instead of drawing empty boxes.

use std::sync::Arc;

use eframe::egui;

/// A script: its name, the character its fonts are tried on, and the code point ranges it covers.
pub struct Script {
    pub name: &'static str,
    sample: char,
    ranges: &'static [(u32, u32)],
}

/// The scripts a transcript may be written in beyond what egui's fonts hold, in the order tried.
pub const SCRIPTS: &[Script] = &[
    Script {
        name: "Chinese",
        sample: '中',
        ranges: &[
            (0x4E00, 0x9FFF),
            (0x3400, 0x4DBF),
            (0x3000, 0x303F),
            (0xFF00, 0xFFEF),
        ],
    },
    Script {
        name: "Japanese",
        sample: 'あ',
        ranges: &[(0x3040, 0x30FF)],
    },
    Script {
        name: "Korean",
        sample: '한',
        ranges: &[(0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F)],
    },
    Script {
        name: "Arabic",
        sample: 'ع',
        ranges: &[
            (0x0600, 0x06FF),
            (0x0750, 0x077F),
            (0xFB50, 0xFDFF),
            (0xFE70, 0xFEFF),
        ],
    },
    Script {
        name: "Hebrew",
        sample: 'ש',
        ranges: &[(0x0590, 0x05FF)],
    },
    Script {
        name: "Devanagari",
        sample: 'क',
        ranges: &[(0x0900, 0x097F)],
    },
    Script {
        name: "Thai",
        sample: 'ก',
        ranges: &[(0x0E00, 0x0E7F)],
    },
    Script {
        name: "Cyrillic",
        sample: 'Ж',
        ranges: &[(0x0400, 0x04FF)],
    },
    Script {
        name: "Greek",
        sample: 'Ω',
        ranges: &[(0x0370, 0x03FF)],
    },
];

impl Script {
    fn holds(&self, c: char) -> bool {
        let c = c as u32;
        self.ranges.iter().any(|(a, b)| (*a..=*b).contains(&c))
    }
}

/// The font definitions the window installs, and what they could not cover.
pub struct Fonts {
    pub definitions: egui::FontDefinitions,
    /// Scripts with a font of this machine added, and the font's family.
    pub added: Vec<(&'static str, String)>,
    /// Scripts no font has (neither egui's, the bundled one, nor any on this machine).
    pub missing: Vec<&'static str>,
}

impl Fonts {
    /// The scripts of `text` that no font here can draw.
    pub fn missing_in(&self, text: &str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for c in text.chars().filter(|c| !c.is_ascii()) {
            if let Some(s) = SCRIPTS.iter().find(|s| s.holds(c))
                && self.missing.contains(&s.name)
                && !out.contains(&s.name)
            {
                out.push(s.name);
            }
        }
        out
    }
}

/// How far a face is from a regular upright sans (smaller first): italic, not regular weight, not sans, monospace.
type Rank = (bool, bool, bool, bool);

fn covers(data: &[u8], index: u32, c: char) -> bool {
    ab_glyph::FontRef::try_from_slice_and_index(data, index)
        .is_ok_and(|f| ab_glyph::Font::glyph_id(&f, c).0 != 0)
}

const DEJAVU: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");

/// egui's fonts and DejaVu Sans Mono after them: what the window draws with until the machine's are found.
pub fn bundled() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert(
        "dejavu-mono".into(),
        Arc::new(egui::FontData::from_static(DEJAVU)),
    );
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push("dejavu-mono".into());
    }
    fonts
}

/// The bundled fonts, then a machine font for every script they lack (a search through every font of the
/// machine: run off the frame loop).
pub fn definitions() -> Fonts {
    let mut fonts = bundled();
    let mut order: Vec<String> = Vec::new();
    let held = |fonts: &egui::FontDefinitions, c: char| {
        fonts
            .font_data
            .values()
            .any(|d| covers((*d.font).as_ref(), d.index, c))
    };
    let lacking: Vec<&Script> = SCRIPTS.iter().filter(|s| !held(&fonts, s.sample)).collect();
    let mut added = Vec::new();
    let mut missing = Vec::new();
    if !lacking.is_empty() {
        let mut db = fontdb::Database::new();
        db.load_system_fonts();
        // regular upright sans faces first, then the rest; colour emoji (bitmaps) are no use to egui
        let family = |f: &fontdb::FaceInfo| {
            f.families
                .first()
                .map(|(n, _)| n.clone())
                .unwrap_or_default()
        };
        let mut faces: Vec<(fontdb::ID, String, Rank)> = db
            .faces()
            .filter(|f| !f.families.iter().any(|(n, _)| n.contains("Color Emoji")))
            .map(|f| {
                let name = family(f);
                let rank = (
                    f.style != fontdb::Style::Normal,
                    f.weight != fontdb::Weight::NORMAL,
                    !name.contains("Sans"),
                    name.contains("Mono"),
                );
                (f.id, name, rank)
            })
            .collect();
        faces.sort_by(|a, b| a.2.cmp(&b.2).then_with(|| a.1.cmp(&b.1)));
        let mut used: Vec<fontdb::ID> = Vec::new();
        for s in lacking {
            let found = faces.iter().find(|(id, _, _)| {
                db.with_face_data(*id, |data, index| covers(data, index, s.sample))
                    .unwrap_or(false)
            });
            let Some((id, name, _)) = found.cloned() else {
                missing.push(s.name);
                continue;
            };
            if !used.contains(&id) {
                let Some((data, index)) =
                    db.with_face_data(id, |data, index| (data.to_vec(), index))
                else {
                    missing.push(s.name);
                    continue;
                };
                let mut font = egui::FontData::from_owned(data);
                font.index = index;
                let key = format!("system:{name}:{index}");
                fonts.font_data.insert(key.clone(), Arc::new(font));
                order.push(key);
                used.push(id);
            }
            added.push((s.name, name));
        }
    }
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .extend(order.iter().cloned());
    }
    Fonts {
        definitions: fonts,
        added,
        missing,
    }
}
