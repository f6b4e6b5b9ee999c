//! What a run books as it goes: a heat problem's energy, window by window and as one budget
//! since it (re)started, and the heaters its thermostats switched. The energy comes from the
//! backend (the stored energy summed where the field is, the exchange booked step by step), so
//! no field crosses to the host for it, and every front end reads the same figures.

use serde::Serialize;

use crate::problem::energy::EnergyBalance;
use crate::problem::EnergyExchange;
use crate::sim::thermostat::{HeaterSwitch, SWITCHES_KEPT};

/// Switches a ledger lists at most (a long run of a fast thermostat switches often); the rest
/// are counted.
pub const RECORDED_SWITCHES: usize = 1000;

/// One booked window of a heat problem's energy (J per metre of depth).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnergyWindow {
    /// The step the window starts at.
    pub from_step: u64,
    /// The step it ends at.
    pub to_step: u64,
    /// Simulated seconds at `to_step`.
    pub seconds: f64,
    /// Stored energy at `from_step`.
    pub stored_before: f64,
    /// Stored energy at `to_step`.
    pub stored_after: f64,
    /// Put in by heaters, through the sides (left, right, top, bottom) and by held cells.
    pub exchange: EnergyExchange,
    /// The heat that crossed sides, came from heaters or from held cells, in or out.
    pub heat_crossed: f64,
    /// What the `f32` field's rounding may account for over the window's steps (see
    /// [`crate::problem::RoundOff`]).
    pub round_off_bound: f64,
    /// The change of stored energy less what came in.
    pub closing_error: f64,
    /// The closing error against the heat that crossed plus the round-off bound (see
    /// [`EnergyBalance::relative_closing_error`]).
    pub relative_closing_error: f64,
    /// Whether the closing error is within the round-off bound.
    pub within_round_off: bool,
}

impl EnergyWindow {
    /// The window of `balance` from `from_step` to `to_step`.
    pub fn new(from_step: u64, to_step: u64, seconds: f64, balance: &EnergyBalance) -> Self {
        Self {
            from_step,
            to_step,
            seconds,
            stored_before: balance.stored_before,
            stored_after: balance.stored_after,
            exchange: balance.exchange,
            heat_crossed: balance.heat_crossed,
            round_off_bound: balance.round_off_bound,
            closing_error: balance.closing_error(),
            relative_closing_error: balance.relative_closing_error(),
            within_round_off: balance.within_round_off(),
        }
    }

    /// How the balance closes, in words: the closing error, its share of the heat that crossed
    /// plus the `f32` round-off bound, and whether it is within the bound (what `heatlab run`
    /// prints at the end and the app shows under its budget).
    pub fn closing_summary(&self) -> String {
        format!(
            "the balance closes to {:.2e} J/m over steps {}..{}, {:.1e} of the heat that \
             crossed ({:.3e} J/m) and the float32 bound ({:.2e} J/m): {}",
            self.closing_error,
            self.from_step,
            self.to_step,
            self.relative_closing_error,
            self.heat_crossed,
            self.round_off_bound,
            if self.within_round_off {
                "within the bound"
            } else {
                "beyond the bound"
            }
        )
    }

    /// The window as a balance.
    pub fn balance(&self) -> EnergyBalance {
        EnergyBalance {
            stored_before: self.stored_before,
            stored_after: self.stored_after,
            exchange: self.exchange,
            heat_crossed: self.heat_crossed,
            round_off_bound: self.round_off_bound,
        }
    }
}

/// The energy budget since it (re)started: the windows booked one after another added up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnergyBudget {
    /// The step it starts at.
    pub from_step: u64,
    /// Simulated seconds where it starts.
    pub from_seconds: f64,
    /// Everything from there to the last window: the stored energy at both ends and what came
    /// in, with its closing error.
    pub window: EnergyWindow,
}

/// What a run booked so far.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunLedger {
    /// Every window booked, oldest first, when the ledger keeps them (a run's record does; a
    /// session that plays for hours keeps only the budget).
    #[serde(rename = "energy")]
    pub windows: Vec<EnergyWindow>,
    /// The windows since the budget last started, added up.
    pub budget: Option<EnergyBudget>,
    /// Times the budget started over (the field or the map changed other than by stepping,
    /// so what came in between is not known).
    pub budget_restarts: u64,
    /// The heaters thermostats switched, oldest first (the first [`RECORDED_SWITCHES`]).
    pub switches: Vec<HeaterSwitch>,
    /// Switches beyond those listed.
    pub switches_left_out: u64,
    /// Whether `windows` keeps every window.
    #[serde(skip)]
    keep_windows: bool,
    /// Switches not yet taken by the driver (the newest [`SWITCHES_KEPT`]).
    #[serde(skip)]
    fresh_switches: Vec<HeaterSwitch>,
}

impl RunLedger {
    /// An empty ledger; `keep_windows`: whether it lists every window.
    pub fn new(keep_windows: bool) -> Self {
        Self {
            keep_windows,
            ..Self::default()
        }
    }

    /// Books a window that starts at `from_seconds` of simulated time: onto the budget when it
    /// starts where the budget ends, else as the start of a new budget.
    pub(super) fn book(&mut self, window: EnergyWindow, from_seconds: f64) {
        if self.keep_windows {
            self.windows.push(window);
        }
        let budget = match self.budget {
            Some(budget) if budget.window.to_step == window.from_step => {
                let balance = budget.window.balance().then(&window.balance());
                EnergyBudget {
                    from_step: budget.from_step,
                    from_seconds: budget.from_seconds,
                    window: EnergyWindow::new(
                        budget.from_step,
                        window.to_step,
                        window.seconds,
                        &balance,
                    ),
                }
            }
            _ => EnergyBudget {
                from_step: window.from_step,
                from_seconds,
                window,
            },
        };
        self.budget = Some(budget);
    }

    /// The field or the map changed other than by stepping: the next window starts a new budget.
    pub(super) fn restart_budget(&mut self) {
        if self.budget.take().is_some() {
            self.budget_restarts += 1;
        }
    }

    /// Keeps switches made by thermostats.
    pub(super) fn switched(&mut self, switches: Vec<HeaterSwitch>) {
        let room = RECORDED_SWITCHES.saturating_sub(self.switches.len());
        let listed = switches.len().min(room);
        self.switches_left_out += (switches.len() - listed) as u64;
        self.switches.extend(&switches[..listed]);
        self.fresh_switches.extend(switches);
        let excess = self.fresh_switches.len().saturating_sub(SWITCHES_KEPT);
        self.fresh_switches.drain(..excess);
    }

    /// The switches made since the last call, oldest first.
    pub fn take_fresh_switches(&mut self) -> Vec<HeaterSwitch> {
        std::mem::take(&mut self.fresh_switches)
    }

    /// All the switches, listed or not.
    pub fn switch_count(&self) -> u64 {
        self.switches.len() as u64 + self.switches_left_out
    }

    /// The worst relative closing error of the windows listed (0 without any).
    pub fn worst_relative_closing_error(&self) -> f64 {
        self.windows
            .iter()
            .map(|w| w.relative_closing_error)
            .fold(0.0, f64::max)
    }
}
