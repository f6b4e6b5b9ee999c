//! The one worker abstraction of the app: a thread that owns slow work (the simulation, the
//! tutorial kernels), a channel of commands to it, a channel of events back, a one-frame slot
//! for the latest result (a frame the UI has not shown yet, or the progress of a job) and a
//! cancel flag that long jobs check. Dropping the [`Worker`] cancels, asks the thread to stop
//! and joins it, so no thread outlives the window.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Called by the worker whenever the UI has something new to draw (a repaint request).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

enum Message<C> {
    Command(C),
    /// The UI took the frame in the slot: a worker waiting for room for its next frame can
    /// go on at once instead of at its next poll.
    FrameTaken,
    Shutdown,
}

/// What the worker's thread got from the UI.
#[derive(Debug)]
pub enum Received<C> {
    /// A command.
    Command(C),
    /// Nothing arrived in time (or nothing was waiting).
    Nothing,
    /// The UI is gone or asked the thread to end.
    Shutdown,
}

/// The one-frame slot: at most one result waits for the UI; a newer one replaces it.
struct Slot<F>(Mutex<Option<F>>);

impl<F> Slot<F> {
    /// A panic on the other thread cannot leave a value half-written, so a poisoned lock is
    /// still usable.
    fn lock(&self) -> MutexGuard<'_, Option<F>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Writes the one-frame slot from any thread, without asking for a repaint.
pub struct SlotWriter<F>(Arc<Slot<F>>);

impl<F> SlotWriter<F> {
    /// Replaces what the slot holds (`None` empties it).
    pub fn store(&self, value: Option<F>) {
        *self.0.lock() = value;
    }
}

/// The UI's end of a worker thread with commands `C`, events `E` and latest results `F`.
pub struct Worker<C, E, F> {
    commands: Sender<Message<C>>,
    events: Receiver<E>,
    slot: Arc<Slot<F>>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The worker thread's end: what it reads its commands from and reports through.
pub struct WorkerContext<C, E, F> {
    commands: Receiver<Message<C>>,
    events: Sender<E>,
    slot: Arc<Slot<F>>,
    cancel: Arc<AtomicBool>,
    notify: Notify,
}

impl<C, E, F> Worker<C, E, F>
where
    C: Send + 'static,
    E: Send + 'static,
    F: Send + 'static,
{
    /// Starts a thread named `name` running `body`. `notify` is called whenever there is
    /// something new for the UI.
    pub fn spawn(
        name: &str,
        notify: Notify,
        body: impl FnOnce(WorkerContext<C, E, F>) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (commands, command_rx) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let slot = Arc::new(Slot(Mutex::new(None)));
        let cancel = Arc::new(AtomicBool::new(false));
        let context = WorkerContext {
            commands: command_rx,
            events: event_tx,
            slot: Arc::clone(&slot),
            cancel: Arc::clone(&cancel),
            notify,
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || body(context))?;
        Ok(Self {
            commands,
            events,
            slot,
            cancel,
            thread: Some(thread),
        })
    }
}

impl<C, E, F> Worker<C, E, F> {
    /// Sends a command; `false` when the thread has ended (then [`Self::is_alive`] says so).
    pub fn send(&self, command: C) -> bool {
        self.commands.send(Message::Command(command)).is_ok()
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<E> {
        self.events.try_recv().ok()
    }

    /// Takes the latest result, if one came since the last call, and wakes the worker (which
    /// may be waiting for the slot to empty).
    pub fn take_frame(&self) -> Option<F> {
        let taken = self.slot.lock().take();
        // The thread may have ended; then nobody waits for the slot.
        if taken.is_some() && self.commands.send(Message::FrameTaken).is_err() {
            log::debug!("the worker thread had already ended");
        }
        taken
    }

    /// A copy of the latest result, leaving it in the slot (for progress that is only read).
    pub fn peek_frame(&self) -> Option<F>
    where
        F: Clone,
    {
        self.slot.lock().clone()
    }

    /// Asks the running job to stop at its next check; cleared by [`Self::clear_cancel`].
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Lets the next job run (after a cancel).
    pub fn clear_cancel(&self) {
        self.cancel.store(false, Ordering::Relaxed);
    }

    /// Whether the thread is still running.
    pub fn is_alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl<C, E, F> Drop for Worker<C, E, F> {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        // The thread may have ended already; then there is nobody to tell.
        if self.commands.send(Message::Shutdown).is_err() {
            log::debug!("the worker thread had already ended");
        }
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                log::error!("a worker thread panicked");
            }
        }
    }
}

impl<C, E, F> WorkerContext<C, E, F> {
    /// Waits up to `timeout` for a command; returns [`Received::Nothing`] early when the UI
    /// takes the frame in the slot.
    pub fn recv_timeout(&self, timeout: Duration) -> Received<C> {
        match self.commands.recv_timeout(timeout) {
            Ok(Message::Command(command)) => Received::Command(command),
            Ok(Message::FrameTaken) => Received::Nothing,
            Ok(Message::Shutdown) | Err(RecvTimeoutError::Disconnected) => Received::Shutdown,
            Err(RecvTimeoutError::Timeout) => Received::Nothing,
        }
    }

    /// A command if one is waiting.
    pub fn try_recv(&self) -> Received<C> {
        match self.commands.try_recv() {
            Ok(Message::Command(command)) => Received::Command(command),
            Ok(Message::FrameTaken) => Received::Nothing,
            Ok(Message::Shutdown) | Err(TryRecvError::Disconnected) => Received::Shutdown,
            Err(TryRecvError::Empty) => Received::Nothing,
        }
    }

    /// Waits for the next command, however long (frames taken meanwhile are not news here).
    pub fn recv(&self) -> Received<C> {
        loop {
            match self.commands.recv() {
                Ok(Message::Command(command)) => return Received::Command(command),
                Ok(Message::FrameTaken) => continue,
                Ok(Message::Shutdown) | Err(_) => return Received::Shutdown,
            }
        }
    }

    /// Sends an event and asks for a repaint.
    pub fn emit(&self, event: E) {
        // The UI may already be gone while shutting down; nothing to tell then.
        self.post(event);
        (self.notify)();
    }

    /// Sends `event` without asking for a repaint: the UI reads it at its next frame. For events
    /// in the middle of timed work, which a redraw would share the cores with.
    pub fn post(&self, event: E) {
        if self.events.send(event).is_err() {
            log::debug!("an event was dropped: the window is closing");
        }
    }

    /// A sender of events for other threads (progress callbacks), with the repaint request.
    pub fn event_sender(&self) -> (Sender<E>, Notify) {
        (self.events.clone(), Arc::clone(&self.notify))
    }

    /// Puts the latest result in the slot (replacing one not taken yet) and asks for a repaint.
    pub fn put_frame(&self, frame: F) {
        *self.slot.lock() = Some(frame);
        (self.notify)();
    }

    /// Empties the slot: its result belongs to what was just replaced (a field opened or
    /// generated in its place), and the UI must not show it after hearing of the replacement.
    pub fn discard_frame(&self) {
        *self.slot.lock() = None;
    }

    /// A writer of the slot that other threads may share (progress callbacks on a pool);
    /// it does not ask for repaints, so frequent progress does not redraw the window.
    pub fn slot_writer(&self) -> SlotWriter<F> {
        SlotWriter(Arc::clone(&self.slot))
    }

    /// Changes the result waiting in the slot, if any.
    pub fn update_frame(&self, change: impl FnOnce(&mut F)) {
        if let Some(frame) = self.slot.lock().as_mut() {
            change(frame);
        }
    }

    /// Whether a result still waits for the UI.
    pub fn slot_is_full(&self) -> bool {
        self.slot.lock().is_some()
    }

    /// The cancel flag that long jobs check between chunks.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    /// Clears the cancel flag (a new job starts).
    pub fn clear_cancel(&self) {
        self.cancel.store(false, Ordering::Relaxed);
    }

    /// Asks the UI for a repaint.
    pub fn notify(&self) {
        (self.notify)();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_events_and_frames_travel_and_drop_joins() {
        let finished = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&finished);
        let worker: Worker<u32, u32, u32> = Worker::spawn("test", Arc::new(|| {}), move |ctx| {
            while let Received::Command(n) = ctx.recv() {
                ctx.emit(n * 2);
                ctx.put_frame(n + 1);
            }
            done.store(true, Ordering::Relaxed);
        })
        .unwrap();
        assert!(worker.send(20));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let event = loop {
            if let Some(event) = worker.try_event() {
                break event;
            }
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(event, 40);
        assert_eq!(worker.peek_frame(), Some(21));
        assert_eq!(worker.take_frame(), Some(21));
        assert_eq!(worker.take_frame(), None);
        drop(worker);
        assert!(finished.load(Ordering::Relaxed), "drop joins the thread");
    }

    #[test]
    fn a_posted_event_arrives_without_a_repaint_request() {
        let repaints = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&repaints);
        let notify: Notify = Arc::new(move || {
            counted.fetch_add(1, Ordering::Relaxed);
        });
        let worker: Worker<u32, u32, u32> = Worker::spawn("test", notify, move |ctx| {
            while let Received::Command(n) = ctx.recv() {
                ctx.post(n);
                ctx.emit(n + 1);
            }
        })
        .unwrap();
        assert!(worker.send(5));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut events = Vec::new();
        while events.len() < 2 {
            if let Some(event) = worker.try_event() {
                events.push(event);
            }
            assert!(std::time::Instant::now() < deadline, "no events came");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(events, [5, 6]);
        assert_eq!(
            repaints.load(Ordering::Relaxed),
            1,
            "only emit asks for a repaint"
        );
    }

    #[test]
    fn taking_the_frame_wakes_a_worker_waiting_for_room() {
        let worker: Worker<(), Duration, u32> =
            Worker::spawn("test", Arc::new(|| {}), move |ctx| {
                ctx.put_frame(7);
                let waiting = std::time::Instant::now();
                // Waits for room for the next frame, as the simulation thread does.
                if let Received::Nothing = ctx.recv_timeout(Duration::from_secs(30)) {
                    ctx.emit(waiting.elapsed());
                }
            })
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while worker.take_frame().is_none() {
            assert!(std::time::Instant::now() < deadline, "no frame came");
            std::thread::sleep(Duration::from_millis(1));
        }
        let waited = loop {
            if let Some(waited) = worker.try_event() {
                break waited;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the worker was not woken"
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(waited < Duration::from_secs(10), "woken after {waited:?}");
    }
}
