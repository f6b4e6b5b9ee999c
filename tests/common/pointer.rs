//! The pointer on the app's field picture, as a hand moves it: presses, drags and clicks at
//! screen positions, and where a cell's centre is on the picture; and typing into a field.

use eframe::egui::accesskit::Role;
use eframe::egui::{Event, Key, Modifiers, PointerButton, Pos2, Rect};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::HeatlabApp;

/// Where the field picture is on the screen.
pub fn picture_rect(harness: &Harness<'_, HeatlabApp>) -> Rect {
    harness.get_by_label("field picture").rect()
}

/// The screen position of the centre of cell (`row`, `col`) of a `rows` x `cols` field on the
/// picture at `rect` (zoom 1).
pub fn cell_centre(rect: Rect, (rows, cols): (usize, usize), row: usize, col: usize) -> Pos2 {
    Pos2::new(
        rect.left() + (col as f32 + 0.5) / cols as f32 * rect.width(),
        rect.top() + (row as f32 + 0.5) / rows as f32 * rect.height(),
    )
}

/// Presses (or releases) `which` at `pos`.
pub fn press(harness: &Harness<'_, HeatlabApp>, pos: Pos2, which: PointerButton, pressed: bool) {
    harness.event(Event::PointerButton {
        pos,
        button: which,
        pressed,
        modifiers: Modifiers::default(),
    });
}

/// Presses `which` at `from`, moves to `to` over 8 frames, releases.
pub fn drag(harness: &mut Harness<'_, HeatlabApp>, from: Pos2, to: Pos2, which: PointerButton) {
    let moves = 8;
    harness.event(Event::PointerMoved(from));
    harness.step();
    press(harness, from, which, true);
    harness.step();
    for i in 1..=moves {
        let t = i as f32 / moves as f32;
        harness.event(Event::PointerMoved(from + (to - from) * t));
        harness.step();
    }
    press(harness, to, which, false);
    harness.step();
}

/// A click (press and release in one frame) of `which` at `pos`.
pub fn click_at(harness: &mut Harness<'_, HeatlabApp>, pos: Pos2, which: PointerButton) {
    harness.event(Event::PointerMoved(pos));
    harness.step();
    press(harness, pos, which, true);
    press(harness, pos, which, false);
    harness.step();
}

/// Types `text` into the text field labelled `label` as a hand would: click it, select what
/// it holds, type, press Enter.
pub fn type_into(harness: &mut Harness<'_, HeatlabApp>, label: &str, text: &str) {
    harness
        .get_by_role_and_label(Role::TextInput, label)
        .scroll_to_me();
    // A scroll animates over a few frames: wait until the field stands still.
    let mut last = None;
    for _ in 0..60 {
        harness.run_steps(1);
        let rect = harness.get_by_role_and_label(Role::TextInput, label).rect();
        if last == Some(rect) {
            break;
        }
        last = Some(rect);
    }
    // Over the field first: a tooltip left by the widget hovered before would take the press.
    harness
        .get_by_role_and_label(Role::TextInput, label)
        .hover();
    harness.run_steps(2);
    harness
        .get_by_role_and_label(Role::TextInput, label)
        .click();
    harness.run_steps(2);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run_steps(1);
    harness
        .get_by_role_and_label(Role::TextInput, label)
        .type_text(text);
    harness.run_steps(1);
    harness.key_press(Key::Enter);
    harness.run_steps(2);
}
