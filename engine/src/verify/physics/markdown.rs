//! Markdown for `docs/physics.md`, generated from the code so that the page cannot drift from
//! it (a test checks that the page holds what these return).

use std::fmt::Write as _;

use crate::problem::material::library;

/// The material library as a Markdown table: name, k, ρ, c_p, diffusivity and source.
pub fn material_table() -> String {
    let mut table = String::from(
        "| material | k (W/m/K) | ρ (kg/m³) | c_p (J/kg/K) | α = k/(ρ c_p) (m²/s) | source |\n\
         |---|---:|---:|---:|---:|---|\n",
    );
    for material in library() {
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {:.3e} | {} |",
            material.name,
            material.conductivity,
            material.density,
            material.specific_heat,
            material.diffusivity(),
            material.source
        );
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_material_has_a_row() {
        let table = material_table();
        assert_eq!(table.lines().count(), library().len() + 2);
        assert!(
            table.contains("| copper | 401 | 8933 | 385 | 1.166e-4 |"),
            "{table}"
        );
    }
}
