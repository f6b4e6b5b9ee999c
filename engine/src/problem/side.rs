//! The four sides of the plate, each with its own condition.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{HeatlabError, Result};

/// One side of the grid. Row 0 is the top, column 0 the left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Column 0.
    Left,
    /// The last column.
    Right,
    /// Row 0.
    Top,
    /// The last row.
    Bottom,
}

impl Side {
    /// Every side, in the order the step adds their faces (left, right, top, bottom).
    pub const ALL: [Self; 4] = [Self::Left, Self::Right, Self::Top, Self::Bottom];

    /// The index of the side in tables (the order of [`Side::ALL`]).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The side across the grid (a periodic side's partner).
    pub fn opposite(self) -> Self {
        match self {
            Self::Left => Self::Right,
            Self::Right => Self::Left,
            Self::Top => Self::Bottom,
            Self::Bottom => Self::Top,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Left => "left",
            Self::Right => "right",
            Self::Top => "top",
            Self::Bottom => "bottom",
        })
    }
}

/// What happens at one side: a kind of condition with its values. Its kind without the values
/// is [`SideKind`], which names it; serde's `type` names here (saved states) are the same
/// lowercase names, which a test checks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SideCondition {
    /// No heat crosses it.
    Insulated,
    /// Held at a temperature (°C) at the outer face of the edge cells.
    Fixed {
        /// The side's temperature, °C.
        temperature: f64,
    },
    /// A fixed heat flux into the plate, W/m² (negative: out of it).
    Flux {
        /// Heat flux into the plate, W/m².
        flux: f64,
    },
    /// Convection to a fluid: heat transfer coefficient h (W/m²/K) and the fluid's temperature.
    Convective {
        /// Heat transfer coefficient, W/(m²·K).
        h: f64,
        /// The fluid's temperature far from the plate, °C.
        ambient: f64,
    },
    /// Wraps to the opposite side, which must be periodic too.
    Periodic,
}

impl SideCondition {
    /// Its kind, without the values.
    pub fn kind(self) -> SideKind {
        match self {
            Self::Insulated => SideKind::Insulated,
            Self::Fixed { .. } => SideKind::Fixed,
            Self::Flux { .. } => SideKind::Flux,
            Self::Convective { .. } => SideKind::Convective,
            Self::Periodic => SideKind::Periodic,
        }
    }

    /// Checks the values of one side.
    pub fn check(&self, side: Side) -> Result<()> {
        let bad = |what: String| Err(HeatlabError::InvalidInput(format!("{side} side: {what}")));
        let physical = super::temperature::is_physical;
        match *self {
            Self::Insulated | Self::Periodic => Ok(()),
            Self::Fixed { temperature } if !physical(temperature) => bad(format!(
                "temperature {temperature} °C is below absolute zero or not finite"
            )),
            Self::Fixed { .. } => Ok(()),
            Self::Flux { flux } if !flux.is_finite() => bad("the heat flux must be finite".into()),
            Self::Flux { .. } => Ok(()),
            Self::Convective { h, .. } if !(h.is_finite() && h > 0.0) => bad(format!(
                "the heat transfer coefficient h must be positive (W/m²/K), got {h}"
            )),
            Self::Convective { ambient, .. } if !physical(ambient) => bad(format!(
                "ambient temperature {ambient} °C is below absolute zero or not finite"
            )),
            Self::Convective { .. } => Ok(()),
        }
    }
}

impl fmt::Display for SideCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Insulated | Self::Periodic => f.write_str(self.kind().name()),
            Self::Fixed { temperature } => write!(f, "fixed at {temperature} °C"),
            Self::Flux { flux } => write!(f, "heat flux {flux} W/m² in"),
            Self::Convective { h, ambient } => {
                write!(f, "convective, h = {h} W/m²/K to {ambient} °C")
            }
        }
    }
}

/// The kinds of side condition without their values: what a scenario file's `type` names and
/// what the app's selector lists. The one list of them is [`SideKind::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SideKind {
    /// [`SideCondition::Insulated`].
    Insulated,
    /// [`SideCondition::Fixed`].
    Fixed,
    /// [`SideCondition::Flux`].
    Flux,
    /// [`SideCondition::Convective`].
    Convective,
    /// [`SideCondition::Periodic`].
    Periodic,
}

impl SideKind {
    /// Every kind, in the order lists show them (the app's selector, the names in an error).
    /// The compiler cannot see a kind missing here; the problem tests compare this list with
    /// serde's list of [`SideCondition`]'s variants.
    pub const ALL: [Self; 5] = [
        Self::Insulated,
        Self::Fixed,
        Self::Flux,
        Self::Convective,
        Self::Periodic,
    ];

    /// Its name, as scenario files and saved states write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Insulated => "insulated",
            Self::Fixed => "fixed",
            Self::Flux => "flux",
            Self::Convective => "convective",
            Self::Periodic => "periodic",
        }
    }

    /// The kind named `text` (case and surrounding space ignored), or an error listing the
    /// names.
    pub fn parse(text: &str) -> Result<Self> {
        crate::choice::parse_choice(&Self::ALL, text, "side type")
    }

    /// A condition of this kind, keeping what `from` has of its values (a fixed temperature or
    /// a fluid's temperature), else room temperature (20 °C), with a still-air h (10 W/m²/K)
    /// and no flux: what a side becomes when its kind is changed in the app.
    pub fn condition(self, from: SideCondition) -> SideCondition {
        const ROOM: f64 = 20.0;
        const STILL_AIR_H: f64 = 10.0;
        let temperature = match from {
            SideCondition::Fixed { temperature } => temperature,
            SideCondition::Convective { ambient, .. } => ambient,
            SideCondition::Insulated | SideCondition::Flux { .. } | SideCondition::Periodic => ROOM,
        };
        match self {
            Self::Insulated => SideCondition::Insulated,
            Self::Fixed => SideCondition::Fixed { temperature },
            Self::Flux => SideCondition::Flux { flux: 0.0 },
            Self::Convective => SideCondition::Convective {
                h: STILL_AIR_H,
                ambient: temperature,
            },
            Self::Periodic => SideCondition::Periodic,
        }
    }
}

impl fmt::Display for SideKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The four sides' conditions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sides {
    /// Column 0.
    pub left: SideCondition,
    /// The last column.
    pub right: SideCondition,
    /// Row 0.
    pub top: SideCondition,
    /// The last row.
    pub bottom: SideCondition,
}

impl Default for Sides {
    fn default() -> Self {
        Self::all(SideCondition::Insulated)
    }
}

impl Sides {
    /// The same condition on every side.
    pub fn all(condition: SideCondition) -> Self {
        Self {
            left: condition,
            right: condition,
            top: condition,
            bottom: condition,
        }
    }

    /// The condition of `side`.
    pub fn get(&self, side: Side) -> SideCondition {
        match side {
            Side::Left => self.left,
            Side::Right => self.right,
            Side::Top => self.top,
            Side::Bottom => self.bottom,
        }
    }

    /// Sets the condition of `side`.
    pub fn set(&mut self, side: Side, condition: SideCondition) {
        match side {
            Side::Left => self.left = condition,
            Side::Right => self.right = condition,
            Side::Top => self.top = condition,
            Side::Bottom => self.bottom = condition,
        }
    }

    /// Whether left and right wrap.
    pub fn periodic_columns(&self) -> bool {
        self.left == SideCondition::Periodic
    }

    /// Whether top and bottom wrap.
    pub fn periodic_rows(&self) -> bool {
        self.top == SideCondition::Periodic
    }

    /// Checks every side, and that periodic sides come in pairs.
    pub fn check(&self) -> Result<()> {
        for side in Side::ALL {
            let condition = self.get(side);
            condition.check(side)?;
            let opposite = self.get(side.opposite());
            if (condition == SideCondition::Periodic) != (opposite == SideCondition::Periodic) {
                return Err(HeatlabError::InvalidInput(format!(
                    "the {side} side is {condition} but the {} side is {opposite}: periodic \
                     sides come in pairs (left with right, top with bottom)",
                    side.opposite()
                )));
            }
        }
        Ok(())
    }
}
