//! Closing the app from outside its window. `heatlab gui` watches SIGTERM (and SIGINT when
//! started from a terminal) and turns the first one into a [`StopRequest`]; the app then closes
//! its window as the close button would: eframe saves the settings, and dropping the app stops
//! and joins the worker threads.

use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use eframe::egui;

/// A request, shared between a signal watcher and the app, to close the app.
#[derive(Clone, Default)]
pub struct StopRequest {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The number of the signal that asked first; 0 while none did.
    signal: AtomicI32,
    /// The app's context, to wake an idle window.
    ctx: Mutex<Option<egui::Context>>,
}

impl StopRequest {
    /// A request that nothing has made yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the app to close because of `signal` (its number, not 0); the first request is the
    /// one remembered. Wakes the window so that an idle app notices.
    pub fn request(&self, signal: i32) {
        // Only the first signal counts; a later one changes nothing here.
        let _ = self
            .inner
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        self.wake();
    }

    /// The number of the signal that asked the app to close, if one did.
    pub fn requested(&self) -> Option<i32> {
        match self.inner.signal.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }

    /// Lets a request wake `ctx`'s window (the app calls it when it starts).
    pub fn attach(&self, ctx: &egui::Context) {
        *self
            .inner
            .ctx
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(ctx.clone());
        // A request made before the window existed is seen by its first frame; waking it
        // does no harm.
        if self.requested().is_some() {
            self.wake();
        }
    }

    fn wake(&self) {
        let ctx = self
            .inner
            .ctx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(ctx) = ctx {
            ctx.request_repaint();
        }
    }
}

impl fmt::Debug for StopRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StopRequest")
            .field("signal", &self.requested())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_the_one_remembered() {
        let stop = StopRequest::new();
        assert_eq!(stop.requested(), None);
        let seen_by_app = stop.clone();
        stop.request(15);
        stop.request(2);
        assert_eq!(seen_by_app.requested(), Some(15));
        // Attaching a window after the request is harmless.
        seen_by_app.attach(&egui::Context::default());
        assert_eq!(stop.requested(), Some(15));
    }
}
