//! The one-line summaries the screenshot mode prints when it saves a shot (and the GUI
//! measurement prints): the diffusion tab's live timings, or what a tutorial tab shows.

use super::HeatlabApp;
use heatlab_engine::tutorial::TutorialKernel;

impl HeatlabApp {
    /// A one-line summary of the live timings, as the screenshot mode prints it.
    pub fn timing_summary(&self) -> String {
        let state = self.diffusion.state();
        let timings = self.diffusion.timings();
        let mut text = format!(
            "{} field on {}: {:.1} frames/s, {:.0} steps/s wall",
            state
                .field_size
                .map_or_else(|| "no".to_string(), |s| s.to_string()),
            state
                .backend
                .as_ref()
                .map_or_else(|| "?".to_string(), |b| b.device.clone()),
            timings.frames_per_second(),
            timings.wall_steps_per_second(),
        );
        if let Some((us, gb_s)) = timings.latest_step_timing() {
            let per_step = heatlab_engine::measure::format_seconds(us * 1e-6);
            text += &format!(", {per_step} per step, {gb_s:.1} GB/s effective");
        }
        if let Some(summary) = timings.timeit() {
            text += &format!("; {summary}");
        }
        let split: Vec<String> = timings
            .mean_split()
            .iter()
            .map(|(part, ms)| format!("{part} {ms:.2} ms"))
            .collect();
        if !split.is_empty() {
            text += &format!("; per frame: {}", split.join(", "));
        }
        text
    }

    /// A one-line summary of what a tutorial tab shows, as the screenshot mode prints it.
    pub fn tutorial_summary(&self, kernel: TutorialKernel) -> String {
        let panel = self.tutorial.panel(kernel);
        let mut text = format!("{} tab", kernel.title());
        if let Some(outcome) = &panel.outcome {
            text += &format!(", n = {}", crate::ui::tutorial::format_count(outcome.run.n));
            if let Some(path) = &outcome.recorded {
                text += &format!(" recorded in {}", path.display());
            }
        }
        if !panel.sweep.is_empty() {
            text += &format!(", a sweep of {} sizes", panel.sweep.len());
        }
        if let Some(notice) = &panel.notice {
            text += &format!("; {}", notice.text);
        }
        text
    }
}
