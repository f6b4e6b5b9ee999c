//! Embeds the engine's sources for `tests/layering.rs`, which checks every import against the
//! rooms of ARCHITECTURE.md and must pass from any directory, on a machine without the source
//! tree.
//!
//! Writes `$OUT_DIR/engine_sources.rs`: `pub const SOURCES: &[(&str, &str)]`, one
//! `(path under src/, include_str!(absolute path))` per `.rs` file, sorted by path. The library
//! itself never includes it. `include_str!` makes the test rebuild when a file changes;
//! `rerun-if-changed=src` (a folder: Cargo scans it all) reruns this script when files come or
//! go.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

fn main() -> io::Result<()> {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src");
    let manifest = PathBuf::from(env_var("CARGO_MANIFEST_DIR")?);
    let src = manifest.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files)?;
    files.sort();
    let mut out = String::from("pub const SOURCES: &[(&str, &str)] = &[\n");
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .map_err(io::Error::other)?
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let absolute = file.to_string_lossy();
        // `{:?}` quotes and escapes both (backslashes of Windows paths included).
        writeln!(out, "    ({relative:?}, include_str!({absolute:?})),")
            .map_err(io::Error::other)?;
    }
    out.push_str("];\n");
    fs::write(
        PathBuf::from(env_var("OUT_DIR")?).join("engine_sources.rs"),
        out,
    )
}

fn env_var(name: &str) -> io::Result<String> {
    std::env::var(name).map_err(|error| io::Error::other(format!("{name}: {error}")))
}

/// Every `.rs` file under `folder`, at any depth.
fn rust_files(folder: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(folder)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, files)?;
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    Ok(())
}
