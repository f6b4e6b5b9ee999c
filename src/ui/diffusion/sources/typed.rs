//! Numbers typed into text fields and taken only when Enter is pressed or the field loses
//! focus, so that a half-typed value never reaches the simulation. A value that does not read
//! as a number is refused: what runs stays as it was and the caller tells the user.

use std::collections::HashMap;

use eframe::egui;

/// What a typed field gave this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// Nothing was committed.
    Unchanged,
    /// A number was committed.
    Value(f64),
    /// Text that is not a finite number was committed (the text, for the notice).
    Refused(String),
}

/// The text of the fields being edited, by their id (a field not being edited shows the value
/// that runs).
#[derive(Debug, Default)]
pub struct TypedNumbers {
    editing: HashMap<egui::Id, String>,
}

impl TypedNumbers {
    /// A text field showing `current` after the label `label` (which names it for screen
    /// readers and tests), `width` points wide. Returns what was committed this frame.
    pub fn field(
        &mut self,
        ui: &mut egui::Ui,
        id_salt: impl std::hash::Hash + std::fmt::Debug,
        label: &str,
        current: f64,
        width: f32,
    ) -> Typed {
        let id = ui.make_persistent_id(id_salt);
        let mut text = self
            .editing
            .get(&id)
            .cloned()
            .unwrap_or_else(|| shown(current));
        let label = ui.label(label);
        let response = ui
            .add(
                egui::TextEdit::singleline(&mut text)
                    .id(id)
                    .desired_width(width),
            )
            .labelled_by(label.id);
        if response.changed() {
            self.editing.insert(id, text.clone());
        }
        if !response.lost_focus() {
            return Typed::Unchanged;
        }
        let Some(typed) = self.editing.remove(&id) else {
            return Typed::Unchanged;
        };
        parse(&typed)
    }
}

/// What a committed text means.
pub fn parse(text: &str) -> Typed {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => Typed::Value(value),
        _ => Typed::Refused(text.trim().to_string()),
    }
}

/// A value as a field shows it: short, and exact enough to type back.
pub fn shown(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-3..1e6).contains(&magnitude) {
        // Up to six significant digits, without trailing zeros.
        let text = format!("{value:.6}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        text.to_string()
    } else {
        format!("{value:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numbers_and_refuses_the_rest() {
        assert_eq!(parse(" 2e6 "), Typed::Value(2e6));
        assert_eq!(parse("-12.5"), Typed::Value(-12.5));
        assert_eq!(parse("abc"), Typed::Refused("abc".into()));
        assert_eq!(parse("inf"), Typed::Refused("inf".into()));
        assert_eq!(parse(""), Typed::Refused(String::new()));
    }

    #[test]
    fn shows_values_short_and_readable_back() {
        assert_eq!(shown(50.0), "50");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(12.25), "12.25");
        assert_eq!(shown(2e6), "2e6");
        assert_eq!(shown(1.5e-5), "1.5e-5");
        for value in [50.0, 12.25, 2e6, 1.5e-5, -3.75] {
            assert_eq!(parse(&shown(value)), Typed::Value(value));
        }
    }
}
