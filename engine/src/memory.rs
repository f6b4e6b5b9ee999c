//! Checks that a large allocation fits before it is attempted, and allocates large buffers
//! fallibly, so that the user gets the size it needed instead of an abort from the allocator.
//!
//! "Available" is the least of three limits: Linux's `MemAvailable`, the room left under the
//! process's cgroup memory limit (a container's or a `systemd-run -p MemoryMax=` limit), and the
//! room left under its address-space limit (`ulimit -v`, `RLIMIT_AS`).

use crate::error::{HeatlabError, Result};

const MIB: f64 = 1024.0 * 1024.0;

/// A cgroup limit at or above this is "no limit" (cgroup v1 writes a page-rounded `i64::MAX`).
const UNLIMITED: u64 = 1 << 62;

/// Caps glibc's malloc arenas: each reserves 64 MiB of address space, and with one per thread
/// (its default allows 8 per core) a many-core machine's threads alone fill an address-space
/// limit (`ulimit -v`) that the field fits in: on 64 cores under 1.5 GiB, starting the CPU's
/// threads failed. heatlab's threads allocate little. Called once, first thing, by the binary.
pub fn bound_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// Arenas at most (glibc's default is 8 per core).
        const MALLOC_ARENAS: libc::c_int = 8;
        // SAFETY: mallopt sets one of the allocator's parameters; no thread is started yet.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
        }
    }
}

/// Bytes of host memory available to new allocations, if any limit is known.
pub fn host_available_bytes() -> Option<usize> {
    [mem_available(), cgroup_room(), address_space_room()]
        .into_iter()
        .flatten()
        .min()
        .map(|bytes| usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// Fails with the needed and available sizes when `bytes` would not fit in host memory.
pub fn ensure_host_memory(what: &str, bytes: usize) -> Result<()> {
    match host_available_bytes() {
        Some(available) if bytes > available => Err(out_of_host_memory(what, bytes, available)),
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

/// `len` copies of `value`, or [`HeatlabError::OutOfMemory`] when the allocator refuses the
/// buffer (where `vec![value; len]` would abort the process).
pub fn try_filled_vec<T: Clone>(what: &str, len: usize, value: T) -> Result<Vec<T>> {
    let mut values = try_vec_with_capacity(what, len)?;
    values.resize(len, value);
    Ok(values)
}

/// An empty vector with room for `len` values, or [`HeatlabError::OutOfMemory`].
pub fn try_vec_with_capacity<T>(what: &str, len: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        out_of_host_memory(what, bytes, host_available_bytes().unwrap_or(0))
    })?;
    Ok(values)
}

fn out_of_host_memory(what: &str, bytes: usize, available: usize) -> HeatlabError {
    HeatlabError::OutOfMemory {
        what: what.to_string(),
        needed_mib: bytes as f64 / MIB,
        available_mib: available as f64 / MIB,
        place: "host",
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemAvailable` from `/proc/meminfo`.
fn mem_available() -> Option<u64> {
    kib_field(&read("/proc/meminfo")?, "MemAvailable:")
}

/// A `NAME:   1234 kB` line of `/proc/meminfo` or `/proc/self/status`, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib * 1024)
}

/// Room under the address-space limit: the soft limit of `/proc/self/limits` less `VmSize`.
fn address_space_room() -> Option<u64> {
    let limit = address_space_limit(&read("/proc/self/limits")?)?;
    let used = kib_field(&read("/proc/self/status")?, "VmSize:")?;
    Some(limit.saturating_sub(used))
}

/// The soft "Max address space" of a `/proc/PID/limits` text, `None` when unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Room under the cgroup memory limits of this process (v2, else v1), if any is set.
fn cgroup_room() -> Option<u64> {
    let membership = read("/proc/self/cgroup")?;
    cgroup_v2_room(&membership).or_else(|| cgroup_v1_room(&membership))
}

/// cgroup v2: the least `memory.max - (memory.current - inactive_file)` over this cgroup and
/// its ancestors (every one of them limits the process). Reclaimable page cache is not used.
fn cgroup_v2_room(membership: &str) -> Option<u64> {
    let relative = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    let mut dir = std::path::PathBuf::from("/sys/fs/cgroup");
    dir.push(relative.trim_start_matches('/'));
    let mut room: Option<u64> = None;
    for ancestor in dir
        .ancestors()
        .take_while(|d| d.starts_with("/sys/fs/cgroup"))
    {
        let read_in = |name: &str| std::fs::read_to_string(ancestor.join(name)).ok();
        let Some(max) = read_in("memory.max").and_then(|t| t.trim().parse::<u64>().ok()) else {
            continue;
        };
        let current = read_in("memory.current").and_then(|t| t.trim().parse::<u64>().ok());
        let inactive = read_in("memory.stat").and_then(|t| stat_field(&t, "inactive_file"));
        let used = current.unwrap_or(0).saturating_sub(inactive.unwrap_or(0));
        let here = max.saturating_sub(used);
        room = Some(room.map_or(here, |r| r.min(here)));
    }
    room
}

/// cgroup v1: `memory.limit_in_bytes - (usage - total_inactive_file)` of the memory controller,
/// at this process's cgroup path or (inside a container) at the controller's root.
fn cgroup_v1_room(membership: &str) -> Option<u64> {
    let relative = membership.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })?;
    let root = std::path::Path::new("/sys/fs/cgroup/memory");
    let own = root.join(relative.trim_start_matches('/'));
    let dir = if own.join("memory.limit_in_bytes").exists() {
        own
    } else {
        root.to_path_buf()
    };
    let read_in = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let limit: u64 = read_in("memory.limit_in_bytes")?.trim().parse().ok()?;
    if limit >= UNLIMITED {
        return None;
    }
    let usage = read_in("memory.usage_in_bytes").and_then(|t| t.trim().parse::<u64>().ok());
    let inactive = read_in("memory.stat").and_then(|t| stat_field(&t, "total_inactive_file"));
    Some(limit.saturating_sub(usage.unwrap_or(0).saturating_sub(inactive.unwrap_or(0))))
}

/// A `name value` line of a cgroup `memory.stat`.
fn stat_field(stat: &str, name: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        (key == name).then(|| value.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_limits_texts() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max stack size            8388608              unlimited            bytes     \n\
                      Max address space         1073741824           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), Some(1 << 30));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
        assert_eq!(
            kib_field("Name:\theatlab\nVmSize:\t  204800 kB\n", "VmSize:"),
            Some(200 << 20)
        );
        assert_eq!(
            stat_field("active_file 10\ninactive_file 4096\n", "inactive_file"),
            Some(4096)
        );
    }

    #[test]
    fn an_impossible_buffer_is_an_error_not_an_abort() {
        let error = try_filled_vec::<f64>("test buffer", usize::MAX / 4, 0.0).unwrap_err();
        assert!(matches!(error, HeatlabError::OutOfMemory { .. }), "{error}");
        assert!(error.to_string().contains("test buffer"));
        assert_eq!(try_filled_vec("small", 3, 1.5f32).unwrap(), vec![1.5; 3]);
    }

    #[test]
    fn available_memory_is_known_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(host_available_bytes().is_some_and(|b| b > 0));
        }
    }
}
