use super::preprocess::{expand_source, kernel_names};
use super::*;
use crate::compute::cuda::{DIFFUSION_SOURCE, DISPLAY_SOURCE};

/// The `extern "C"` kernels a source defines, its macros expanded.
fn kernels_of(source: &str) -> Vec<String> {
    kernel_names(&expand_source(source))
}

/// Each embedded source with the bases the backend loads from it.
fn sources() -> [(&'static str, &'static str, &'static [&'static str]); 2] {
    [
        ("diffusion", DIFFUSION_SOURCE, &base::IN_DIFFUSION),
        ("display", DISPLAY_SOURCE, &base::IN_DISPLAY),
    ]
}

#[test]
fn every_kernel_the_tables_load_is_defined_once_for_every_boundary() {
    for (file, source, bases) in sources() {
        let defined = kernels_of(source);
        for base in bases {
            for boundary in Boundary::ALL {
                let name = kernel_name(base, boundary);
                let count = defined.iter().filter(|kernel| **kernel == name).count();
                assert_eq!(count, 1, "{name} is defined {count} times in {file}");
            }
        }
    }
}

#[test]
fn every_per_boundary_kernel_defined_is_loaded() {
    for (file, source, bases) in sources() {
        for kernel in kernels_of(source) {
            for boundary in Boundary::ALL {
                if let Some(base) = kernel.strip_suffix(&format!("_{}", boundary.name())) {
                    assert!(
                        bases.contains(&base),
                        "{kernel} in {file}: add {base} to per_boundary::base"
                    );
                }
            }
        }
    }
}

#[test]
fn the_sources_list_every_boundary_once_with_its_kernel_index() {
    let probe = format!(
        "{DIFFUSION_SOURCE}\n#define HEATLAB_PROBE(NAME, BC, ...) NAME = BC ;\n\
         HEATLAB_PROBE_FROM_HERE HEATLAB_FOR_EACH_BOUNDARY(HEATLAB_PROBE, )\n"
    );
    let tokens = expand_source(&probe);
    let start = tokens
        .iter()
        .position(|token| token == "HEATLAB_PROBE_FROM_HERE")
        .unwrap();
    let expected: Vec<String> = Boundary::ALL
        .iter()
        .flat_map(|boundary| {
            let index = boundary.kernel_index().to_string();
            [boundary.name().to_string(), "=".into(), index, ";".into()]
        })
        .collect();
    assert_eq!(tokens[start + 1..], expected);
}

#[test]
fn the_template_arguments_that_are_not_boundaries_take_no_boundarys_value() {
    // BC_INSIDE and LAYER_FIELD share the BC template parameter with the boundaries.
    for name in ["BC_INSIDE", "LAYER_FIELD"] {
        let probe = format!("{DISPLAY_SOURCE}\nHEATLAB_PROBE_FROM_HERE {name}\n");
        let tokens = expand_source(&probe);
        let start = tokens
            .iter()
            .position(|token| token == "HEATLAB_PROBE_FROM_HERE")
            .unwrap();
        let value: i64 = tokens[start + 1..].concat().parse().unwrap();
        for boundary in Boundary::ALL {
            assert_ne!(
                value,
                boundary.kernel_index() as i64,
                "{name} is {boundary}'s"
            );
        }
    }
}

#[test]
fn the_kernels_of_the_sources_are_the_known_ones() {
    let diffusion = kernels_of(DIFFUSION_SOURCE);
    assert_eq!(
        diffusion.len(),
        1 + 11 * Boundary::ALL.len(),
        "{diffusion:?}"
    );
    assert!(diffusion.contains(&"seed_diffusion_inplace".to_string()));
    assert!(diffusion.contains(&"jacobi_step_vec4r16_periodic".to_string()));
    assert!(diffusion.contains(&"jacobi_temporal_packed2_k8w4_neumann".to_string()));
    assert!(diffusion.contains(&"jacobi_resident_h8_dirichlet".to_string()));
    let display = kernels_of(DISPLAY_SOURCE);
    assert_eq!(display.len(), 2 + Boundary::ALL.len(), "{display:?}");
    for kernel in [
        "block_mean_field",
        "field_stats",
        "block_mean_laplacian_periodic",
    ] {
        assert!(display.contains(&kernel.to_string()), "{display:?}");
    }
}

#[test]
fn the_preprocessor_pastes_and_passes_the_rest_of_the_arguments_on() {
    let source = "// a comment's \"quote\"\n\
                  #define LIST(X, ...) \\\n X(a, ONE, __VA_ARGS__) X(b, 2, __VA_ARGS__)\n\
                  #define ONE 1 /* one */\n\
                  #define K(NAME, N, BASE, R) extern \"C\" __global__ void \\\n\
                  __launch_bounds__(R, N) BASE##r##R##_##NAME(int x) { f<N>(x); }\n\
                  #define E(NAME, N, ...) extern \"C\" __global__ void e##__VA_ARGS__##NAME() {}\n\
                  LIST(K, step, 8)\nLIST(E, )\n";
    assert_eq!(
        kernels_of(source),
        ["stepr8_a", "stepr8_b", "ea", "eb"].map(String::from)
    );
    let tokens = expand_source(source).join(" ");
    assert!(
        tokens.contains("__launch_bounds__ ( 8 , 1 ) stepr8_a"),
        "{tokens}"
    );
    assert!(tokens.contains("f < 1 > ( x )"), "{tokens}");
}

#[test]
fn a_table_holds_each_boundarys_value_and_stops_at_the_first_error() {
    let table = PerBoundary::try_new(|boundary| Ok(boundary.name())).unwrap();
    for boundary in Boundary::ALL {
        assert_eq!(table[boundary], boundary.name());
        assert_eq!(*table.get(boundary), boundary.name());
    }
    let mut asked = Vec::new();
    let failed = PerBoundary::try_new(|boundary| {
        asked.push(boundary);
        if boundary == Boundary::Neumann {
            Err(HeatlabError::Internal("no neumann".into()))
        } else {
            Ok(())
        }
    });
    assert!(matches!(failed, Err(HeatlabError::Internal(message)) if message == "no neumann"));
    assert_eq!(asked, [Boundary::Dirichlet, Boundary::Neumann]);
    assert_eq!(
        kernel_name(base::JACOBI_STEP, Boundary::Periodic),
        "jacobi_step_periodic"
    );
}
