//! Parsing the names of the small enums users pick from (boundaries, backends, colormaps, ...).

use std::fmt::Display;

use crate::error::{HeatlabError, Result};

/// The entry of `all` whose `Display` name equals `text` (case and surrounding space ignored),
/// or an error naming `what` was unknown and listing the names.
pub fn parse_choice<T: Copy + Display>(all: &[T], text: &str, what: &str) -> Result<T> {
    let wanted = text.trim();
    all.iter()
        .copied()
        .find(|choice| choice.to_string().eq_ignore_ascii_case(wanted))
        .ok_or_else(|| {
            let names: Vec<String> = all.iter().map(ToString::to_string).collect();
            let expected = match names.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            HeatlabError::InvalidInput(format!("unknown {what} '{text}' (expected {expected})"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A choice like the boundaries (the module sits below `grid`, so it does not import them).
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Boundary {
        Dirichlet,
        Neumann,
        Periodic,
    }

    impl Boundary {
        const ALL: [Self; 3] = [Self::Dirichlet, Self::Neumann, Self::Periodic];
    }

    impl std::fmt::Display for Boundary {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(match self {
                Self::Dirichlet => "dirichlet",
                Self::Neumann => "neumann",
                Self::Periodic => "periodic",
            })
        }
    }

    #[test]
    fn finds_names_and_lists_them_when_unknown() {
        assert_eq!(
            parse_choice(&Boundary::ALL, " Neumann ", "boundary").unwrap(),
            Boundary::Neumann
        );
        let error = parse_choice(&Boundary::ALL, "sticky", "boundary")
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "unknown boundary 'sticky' (expected dirichlet, neumann or periodic)"
        );
    }
}
