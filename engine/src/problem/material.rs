//! Materials: conductivity, density and specific heat, and the library heatlab ships.

use serde::{Deserialize, Serialize};

use crate::error::{HeatlabError, Result};

/// A material's thermal properties, in SI units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Material {
    /// The name users pick it by (lower case, as in scenario files).
    pub name: String,
    /// Thermal conductivity k, W/(m·K).
    pub conductivity: f64,
    /// Density rho, kg/m³.
    pub density: f64,
    /// Specific heat c_p, J/(kg·K).
    pub specific_heat: f64,
    /// Where the values come from.
    #[serde(default)]
    pub source: String,
    /// The colour its maker chose for the palette and material maps (`None`: the library's
    /// table, or one made from the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<[u8; 3]>,
}

impl Material {
    /// A material from its values, checked: conductivity may be 0 (a perfect insulator),
    /// density and specific heat must be positive, all finite.
    pub fn new(name: &str, conductivity: f64, density: f64, specific_heat: f64) -> Result<Self> {
        let material = Self {
            name: name.to_string(),
            conductivity,
            density,
            specific_heat,
            source: "user".to_string(),
            colour: None,
        };
        material.check()?;
        Ok(material)
    }

    /// Checks the values (see [`Material::new`]).
    pub fn check(&self) -> Result<()> {
        let bad = |what: &str, value: f64, rule: &str| {
            Err(HeatlabError::InvalidInput(format!(
                "material \"{}\": {what} must be {rule}, got {value}",
                self.name
            )))
        };
        if !(self.conductivity.is_finite() && self.conductivity >= 0.0) {
            return bad("conductivity (W/m/K)", self.conductivity, "0 or more");
        }
        if !(self.density.is_finite() && self.density > 0.0) {
            return bad("density (kg/m³)", self.density, "positive");
        }
        if !(self.specific_heat.is_finite() && self.specific_heat > 0.0) {
            return bad("specific heat (J/kg/K)", self.specific_heat, "positive");
        }
        Ok(())
    }

    /// Volumetric heat capacity rho·c_p, J/(m³·K).
    pub fn volumetric_heat_capacity(&self) -> f64 {
        self.density * self.specific_heat
    }

    /// Thermal diffusivity k / (rho·c_p), m²/s.
    pub fn diffusivity(&self) -> f64 {
        self.conductivity / self.volumetric_heat_capacity()
    }
}

/// Incropera, DeWitt, Bergman & Lavine, *Fundamentals of Heat and Mass Transfer*, 6th ed.
const INCROPERA_A1: &str = "Incropera et al., Fundamentals of Heat and Mass Transfer, 6th ed., Table A.1 (metallic solids, 300 K)";
const INCROPERA_A2: &str = "Incropera et al., Fundamentals of Heat and Mass Transfer, 6th ed., Table A.2 (nonmetallic solids, 300 K)";
const INCROPERA_A3: &str = "Incropera et al., Fundamentals of Heat and Mass Transfer, 6th ed., Table A.3 (building and insulating materials, 300 K)";
const INCROPERA_A4: &str = "Incropera et al., Fundamentals of Heat and Mass Transfer, 6th ed., Table A.4 (air at 1 atm, 300 K; still air, conduction only)";
const INCROPERA_A6: &str = "Incropera et al., Fundamentals of Heat and Mass Transfer, 6th ed., Table A.6 (saturated water, 300 K; still water, conduction only)";
const ENGINEERING_TOOLBOX: &str =
    "The Engineering ToolBox, thermal conductivity / specific heat of common materials (typical values)";

/// (name, k, rho, c_p, source) of every library material.
const LIBRARY: [(&str, f64, f64, f64, &str); 22] = [
    ("copper", 401.0, 8933.0, 385.0, INCROPERA_A1),
    ("silver", 429.0, 10500.0, 235.0, INCROPERA_A1),
    ("gold", 317.0, 19300.0, 129.0, INCROPERA_A1),
    ("aluminium", 237.0, 2702.0, 903.0, INCROPERA_A1),
    ("aluminium-2024", 177.0, 2770.0, 875.0, INCROPERA_A1),
    ("brass", 110.0, 8530.0, 380.0, INCROPERA_A1),
    ("iron", 80.2, 7870.0, 447.0, INCROPERA_A1),
    ("carbon-steel", 60.5, 7854.0, 434.0, INCROPERA_A1),
    ("stainless-steel", 14.9, 7900.0, 477.0, INCROPERA_A1),
    ("titanium", 21.9, 4500.0, 522.0, INCROPERA_A1),
    ("silicon", 148.0, 2330.0, 712.0, INCROPERA_A1),
    ("glass", 1.4, 2500.0, 750.0, INCROPERA_A3),
    ("pyrex", 1.4, 2225.0, 835.0, INCROPERA_A2),
    ("brick", 0.72, 1920.0, 835.0, INCROPERA_A3),
    ("concrete", 1.4, 2300.0, 880.0, INCROPERA_A3),
    ("granite", 2.79, 2630.0, 775.0, INCROPERA_A2),
    ("hardwood", 0.16, 720.0, 1255.0, INCROPERA_A3),
    ("softwood", 0.12, 510.0, 1380.0, INCROPERA_A3),
    ("polystyrene-foam", 0.027, 55.0, 1210.0, INCROPERA_A3),
    ("glass-fibre", 0.046, 16.0, 835.0, INCROPERA_A3),
    ("water", 0.613, 996.5, 4179.0, INCROPERA_A6),
    ("air", 0.0263, 1.1614, 1007.0, INCROPERA_A4),
];

/// Typical values of materials the textbook tables do not list.
const TOOLBOX: [(&str, f64, f64, f64); 2] =
    [("fr4", 0.3, 1850.0, 1100.0), ("ice", 2.22, 917.0, 2050.0)];

/// Every material heatlab knows by name, in the order a palette lists them.
pub fn library() -> Vec<Material> {
    LIBRARY
        .iter()
        .map(|&(name, k, rho, cp, source)| (name, k, rho, cp, source))
        .chain(
            TOOLBOX
                .iter()
                .map(|&(name, k, rho, cp)| (name, k, rho, cp, ENGINEERING_TOOLBOX)),
        )
        .map(
            |(name, conductivity, density, specific_heat, source)| Material {
                name: name.to_string(),
                conductivity,
                density,
                specific_heat,
                source: source.to_string(),
                colour: None,
            },
        )
        .collect()
}

/// The library material called `name` (case and `_`/space for `-` ignored; "aluminum" too).
pub fn find(name: &str) -> Option<Material> {
    let wanted = normalise(name);
    let wanted = match wanted.as_str() {
        "aluminum" => "aluminium".to_string(),
        "aluminum-2024" => "aluminium-2024".to_string(),
        "steel" => "carbon-steel".to_string(),
        "glass-fiber" => "glass-fibre".to_string(),
        _ => wanted,
    };
    library().into_iter().find(|m| m.name == wanted)
}

/// A name folded for comparison.
pub fn normalise(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == '_' || c == ' ' { '-' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_has_at_least_fifteen_checked_materials_with_sources() {
        let all = library();
        assert!(all.len() >= 15);
        for material in &all {
            material.check().unwrap();
            assert!(
                !material.source.is_empty(),
                "{} has no source",
                material.name
            );
        }
        let mut names: Vec<_> = all.iter().map(|m| m.name.clone()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "names are unique");
    }

    #[test]
    fn find_folds_case_and_spelling() {
        assert_eq!(find("Copper").unwrap().conductivity, 401.0);
        assert_eq!(find("aluminum").unwrap().name, "aluminium");
        assert_eq!(find("Stainless Steel").unwrap().conductivity, 14.9);
        assert!(find("unobtainium").is_none());
    }

    #[test]
    fn copper_diffusivity_matches_the_textbook() {
        // Incropera lists alpha = 117e-6 m²/s for pure copper at 300 K.
        let alpha = find("copper").unwrap().diffusivity();
        assert!((alpha - 117e-6).abs() < 1e-6, "{alpha}");
    }

    #[test]
    fn bad_values_are_named() {
        let error = Material::new("x", -1.0, 1.0, 1.0).unwrap_err().to_string();
        assert!(error.contains("conductivity"), "{error}");
        assert!(Material::new("x", 1.0, 0.0, 1.0).is_err());
        assert!(Material::new("x", 1.0, 1.0, f64::NAN).is_err());
    }
}
