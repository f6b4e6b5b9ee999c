//! Naming tests from where they are, and running one test body on each backend.
//!
//! A skip message names the test it skips, taken from the test's own path: no hand-typed name
//! that drifts when the test is renamed or moved.

/// The test (or helper) function this is expanded in, as `cargo test` names it:
/// `module::name`, without the test binary's name.
macro_rules! test_name {
    () => {{
        fn here() {}
        $crate::common::backend::strip_test_path(::std::any::type_name_of_val(&here))
    }};
}
pub(crate) use test_name;

/// What opening a GPU (`opened`, a `Result`) gave, or `None` after saying that the test it is
/// expanded in is skipped; under `HEATLAB_REQUIRE_CUDA=1` a GPU that cannot be opened fails it.
macro_rules! gpu_or_skip {
    ($opened:expr) => {
        $crate::common::gpu_or_skip($crate::common::backend::test_name!(), $opened)
    };
}
pub(crate) use gpu_or_skip;

/// The CUDA backend, or `None` after saying that the test it is expanded in is skipped (a
/// failure under `HEATLAB_REQUIRE_CUDA=1`).
macro_rules! cuda_or_skip {
    () => {
        $crate::common::backend::gpu_or_skip!(::heatlab_engine::compute::CudaBackend::new())
    };
}
pub(crate) use cuda_or_skip;

/// One test body for every backend: `fn name(backend, label) { .. }` becomes the function
/// `name(backend: &mut dyn Backend, label: &str)` and the module `name` beside it (functions
/// and modules do not share names) with the tests `name::cpu`, on the CPU reference, and
/// `name::cuda`, skipped and said so without CUDA, a failure under `HEATLAB_REQUIRE_CUDA=1`.
/// `label` is the backend's name (`"cpu"` or `"cuda"`) for the body's messages; a body that
/// expects something of one backend alone asks `backend.kind()`. The function stays callable:
/// another test of the module can run the body on a backend set up otherwise (a CPU method
/// fixed, say), with its own label.
macro_rules! on_each_backend {
    ($(#[$doc:meta])* fn $name:ident($backend:ident, $label:ident) $body:block) => {
        $(#[$doc])*
        // cfg(test), as the tests' own functions: clippy lets tests unwrap.
        #[cfg(test)]
        fn $name($backend: &mut dyn ::heatlab_engine::compute::Backend, $label: &str) $body

        mod $name {
            #[test]
            fn cpu() {
                super::$name(&mut ::heatlab_engine::compute::CpuBackend::new(), "cpu");
            }

            #[test]
            fn cuda() {
                if let Some(mut cuda) = $crate::common::backend::cuda_or_skip!() {
                    super::$name(&mut cuda, "cuda");
                }
            }
        }
    };
}
pub(crate) use on_each_backend;

/// `binary::module::name::here` as `module::name`: what `type_name_of_val` says of the function
/// `here` defined inside a test, as cargo test names that test.
pub fn strip_test_path(path: &'static str) -> &'static str {
    let inside = path.strip_suffix("::here").unwrap_or(path);
    inside.split_once("::").map_or(inside, |(_, rest)| rest)
}
