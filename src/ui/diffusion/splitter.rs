//! The height of the plots under the views: the layout's (what the views leave, within a
//! legible least and a most that leaves the views theirs), or the person's, set by dragging the
//! splitter on the plots' top edge and kept until the edge is double-clicked.

use std::ops::RangeInclusive;

use eframe::egui::{self, CursorIcon, Rect, Role, Sense, Stroke, WidgetInfo};

/// The least height of the timings area with its plots.
const MIN_PLOTS_HEIGHT: f32 = 210.0;

/// The least height of the plots' area while a heat problem runs: the line's flow, the error
/// against an exact answer and the profile each keep a legible height. It depends on the
/// problem, not on the tool, so that picking the Probe or Line tool moves nothing.
const MIN_PROBLEM_PLOTS_HEIGHT: f32 = 360.0;

/// The least height left to the views above the plots (the notices, the sides, the views'
/// controls, a picture and the tool row); below it the plots give up height and scroll.
const MIN_VIEWS_HEIGHT: f32 = 360.0;

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

/// The height of the plots' area under the views, in a tab `available` tall whose views would
/// like `views_height`: what the views leave, at least the plots' legible height, at most
/// what leaves the views theirs (in a short window both give way and both scroll).
pub fn plots_height(available: f32, views_height: f32, problem: bool) -> f32 {
    let least = if problem {
        MIN_PROBLEM_PLOTS_HEIGHT
    } else {
        MIN_PLOTS_HEIGHT
    };
    let most = (available * 0.6).min(available - MIN_VIEWS_HEIGHT);
    let least = least.min(most).max(120.0);
    (available - views_height).clamp(least, most.max(least))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plots_keep_a_legible_height_and_leave_the_views_theirs() {
        // 1440x900: a square field would take the whole height; a problem's plots keep theirs.
        assert_eq!(plots_height(840.0, 800.0, true), MIN_PROBLEM_PLOTS_HEIGHT);
        assert_eq!(plots_height(840.0, 800.0, false), MIN_PLOTS_HEIGHT);
        // A strip leaves room: the plots take it, up to 60 % of the height, leaving the views
        // their least.
        assert_eq!(
            plots_height(840.0, 200.0, true),
            (840.0 * 0.6_f32).min(840.0 - MIN_VIEWS_HEIGHT)
        );
        // 800x600: the views keep their least height; the plots scroll within the rest.
        let short = plots_height(540.0, 200.0, true);
        assert_eq!(short, 540.0 - MIN_VIEWS_HEIGHT);
        assert!(plots_height(540.0, 500.0, true) >= 120.0);
        // Tiny windows: never below 120 points.
        assert_eq!(plots_height(300.0, 500.0, true), 120.0);
    }

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
