//! Checks that a large allocation fits before it is attempted, so that the user gets the size
//! it needed instead of an abort from the allocator.

use crate::error::{HeatlabError, Result};

const MIB: f64 = 1024.0 * 1024.0;

/// Bytes of host memory available to new allocations (Linux `MemAvailable`), if known.
pub fn host_available_bytes() -> Option<usize> {
    let text = match std::fs::read_to_string("/proc/meminfo") {
        Ok(text) => text,
        Err(error) => {
            // Expected off Linux; said once, as this is asked every frame of some panels.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| log::debug!("free host memory unknown (/proc/meminfo: {error})"));
            return None;
        }
    };
    text.lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map(|kib| kib * 1024)
}

/// Fails with the needed and available sizes when `bytes` would not fit in host memory.
pub fn ensure_host_memory(what: &str, bytes: usize) -> Result<()> {
    match host_available_bytes() {
        Some(available) if bytes > available => Err(HeatlabError::OutOfMemory {
            what: what.to_string(),
            needed_mib: bytes as f64 / MIB,
            available_mib: available as f64 / MIB,
            place: "host",
        }),
        _ => Ok(()),
    }
}

/// Fails with the needed and available sizes when `bytes` would not fit in `free` GPU bytes.
pub fn ensure_gpu_memory(what: &str, bytes: usize, free: usize) -> Result<()> {
    if bytes > free {
        return Err(HeatlabError::OutOfMemory {
            what: what.to_string(),
            needed_mib: bytes as f64 / MIB,
            available_mib: free as f64 / MIB,
            place: "GPU",
        });
    }
    Ok(())
}
