//! The colormaps heatlab offers, with matplotlib's tables.

use std::fmt;

use super::colormap_tables as tables;
use crate::error::HeatlabError;

/// A colormap from matplotlib, as a 256-entry table.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Colormap {
    /// Perceptually uniform, matplotlib's default (the tutorial's field plot).
    #[default]
    Viridis,
    /// Black-red-yellow (the tutorial's Laplacian plot).
    Inferno,
    /// Black-purple-white.
    Magma,
    /// Blue-purple-yellow.
    Plasma,
    /// Google's improved rainbow.
    Turbo,
    /// Black to white.
    Grayscale,
    /// Diverging blue-white-red, for signed data such as the Laplacian.
    Coolwarm,
    /// Diverging red-white-blue reversed (blue negative, red positive).
    #[serde(rename = "rdbu_r")]
    RdBuR,
}

impl Colormap {
    /// Every colormap, in the order a selector lists them.
    pub const ALL: [Self; 8] = [
        Self::Viridis,
        Self::Inferno,
        Self::Magma,
        Self::Plasma,
        Self::Turbo,
        Self::Grayscale,
        Self::Coolwarm,
        Self::RdBuR,
    ];

    /// The 256 RGB entries.
    pub fn table(self) -> &'static [[u8; 3]; 256] {
        match self {
            Self::Viridis => &tables::VIRIDIS,
            Self::Inferno => &tables::INFERNO,
            Self::Magma => &tables::MAGMA,
            Self::Plasma => &tables::PLASMA,
            Self::Turbo => &tables::TURBO,
            Self::Grayscale => &tables::GRAY,
            Self::Coolwarm => &tables::COOLWARM,
            Self::RdBuR => &tables::RDBU_R,
        }
    }

    /// Whether the map is meant for data centred on zero.
    pub fn is_diverging(self) -> bool {
        matches!(self, Self::Coolwarm | Self::RdBuR)
    }
}

impl fmt::Display for Colormap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Viridis => "viridis",
            Self::Inferno => "inferno",
            Self::Magma => "magma",
            Self::Plasma => "plasma",
            Self::Turbo => "turbo",
            Self::Grayscale => "grayscale",
            Self::Coolwarm => "coolwarm",
            Self::RdBuR => "rdbu_r",
        })
    }
}

impl std::str::FromStr for Colormap {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let alias = text.trim().to_ascii_lowercase();
        let text = match alias.as_str() {
            "gray" | "grey" => "grayscale",
            _ => text,
        };
        crate::choice::parse_choice(&Self::ALL, text, "colormap")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for map in Colormap::ALL {
            assert_eq!(map.to_string().parse::<Colormap>().unwrap(), map);
        }
        assert!("jet".parse::<Colormap>().is_err());
    }

    #[test]
    fn tables_are_matplotlibs() {
        // matplotlib: viridis(0) = (68, 1, 84), gray(255) = white.
        assert_eq!(Colormap::Viridis.table()[0], [68, 1, 84]);
        assert_eq!(Colormap::Grayscale.table()[255], [255, 255, 255]);
        assert_eq!(Colormap::Grayscale.table()[0], [0, 0, 0]);
    }
}
