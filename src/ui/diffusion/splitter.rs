//! The splitter between the views and the plots under them: dragging the plots' top edge gives
//! them more or less of the tab's height, kept until the edge is double-clicked (then the
//! height follows the views again, as the window and the field's shape ask).

use std::ops::RangeInclusive;

use eframe::egui::{self, CursorIcon, Rect, Role, Sense, Stroke, WidgetInfo};

/// Half the height of the edge that can be grabbed, in points.
const GRAB: f32 = 4.0;

/// The height the person chose for the plots, if they did.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlotsSplitter {
    chosen: Option<f32>,
}

impl PlotsSplitter {
    /// The plots' height: the one chosen (within `range`), else `automatic`.
    pub fn height(&self, automatic: f32, range: RangeInclusive<f32>) -> f32 {
        self.chosen
            .map_or(automatic, |h| h.clamp(*range.start(), *range.end()))
    }

    /// Whether the person chose the height.
    pub fn is_chosen(&self) -> bool {
        self.chosen.is_some()
    }

    /// The grabbable top edge of the plots' area `plots` (now `height` tall): a drag moves it
    /// within `range`, a double-click gives the height back to the layout.
    pub fn ui(&mut self, ui: &egui::Ui, plots: Rect, height: f32, range: RangeInclusive<f32>) {
        let edge = Rect::from_x_y_ranges(plots.x_range(), plots.top() - GRAB..=plots.top() + GRAB);
        let response = ui.interact(
            edge,
            ui.scope_id().with("plots splitter"),
            Sense::click_and_drag(),
        );
        response.widget_info(|| WidgetInfo::labeled(Role::Splitter, true, "plots splitter"));
        if response.hovered() || response.dragged() {
            ui.ctx().set_cursor_icon(CursorIcon::ResizeVertical);
            let stroke = Stroke::new(2.0, ui.visuals().widgets.hovered.fg_stroke.color);
            ui.painter().hline(plots.x_range(), plots.top(), stroke);
        }
        if response.dragged() && response.drag_delta().y != 0.0 {
            let wanted = height - response.drag_delta().y;
            self.chosen = Some(wanted.clamp(*range.start(), *range.end()));
        }
        if response.double_clicked() {
            self.chosen = None;
        }
        response.on_hover_text(
            "drag to give the plots more or less height; double-click: as the views ask",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_height_holds_within_the_range_until_given_back() {
        let mut splitter = PlotsSplitter::default();
        assert_eq!(splitter.height(300.0, 90.0..=500.0), 300.0);
        splitter.chosen = Some(700.0);
        assert_eq!(
            splitter.height(300.0, 90.0..=500.0),
            500.0,
            "a smaller window"
        );
        splitter.chosen = Some(200.0);
        assert_eq!(splitter.height(300.0, 90.0..=500.0), 200.0);
        assert!(splitter.is_chosen());
    }
}
