//! Tests of `export/atomic.rs`.
use super::*;

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn failed_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    write_atomically(&path, |w| w.write_all(b"first")).unwrap();
    let failed = write_atomically(&path, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("interrupted"))
    });
    assert!(failed.is_err());
    assert_eq!(fs::read(&path).unwrap(), b"first");
    assert_eq!(
        entries(dir.path()),
        ["out.bin"],
        "the temporary file must go"
    );
}

#[test]
fn a_panicking_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let result = std::panic::catch_unwind(|| {
        let _ = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            panic!("the encoder broke");
        });
    });
    assert!(result.is_err());
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn the_registry_deletes_the_temporary_files_of_writes_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let result = write_atomically(&path, |w| {
        w.write_all(b"half")?;
        w.flush()?;
        let live: Vec<String> = entries(dir.path());
        assert_eq!(live.len(), 1);
        assert!(live[0].starts_with(".heatlab-") && live[0].ends_with(".part"));
        // Only this test's folder: other tests of this process write at the same time, and
        // deleting their temporary files would fail them.
        assert_eq!(remove_listed(|path| path.starts_with(dir.path())), 1);
        assert!(entries(dir.path()).is_empty());
        Ok(())
    });
    assert!(result.is_err(), "the rename of a deleted file fails");
    assert!(entries(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_written_through_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("data").join("real.json");
    fs::create_dir(dir.path().join("data")).unwrap();
    fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("data/real.json", &link).unwrap();
    write_atomically(&link, |w| w.write_all(b"new")).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(&real).unwrap(), b"new");
    // A dangling link creates its target.
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink("data/new.json", &dangling).unwrap();
    write_atomically(&dangling, |w| w.write_all(b"made")).unwrap();
    assert_eq!(fs::read(dir.path().join("data/new.json")).unwrap(), b"made");
    assert_eq!(entries(&dir.path().join("data")), ["new.json", "real.json"]);
}

#[test]
fn special_targets_are_recognised() {
    assert_eq!(
        resolve_output(Path::new("/dev/stdout")).unwrap(),
        OutputTarget::Stdout
    );
    assert_eq!(
        resolve_output(Path::new("/proc/self/fd/2")).unwrap(),
        OutputTarget::Stderr
    );
    assert_eq!(
        resolve_output(Path::new("/dev/null")).unwrap(),
        OutputTarget::Direct(PathBuf::from("/dev/null"))
    );
    let dir = tempfile::tempdir().unwrap();
    let refused = resolve_output(dir.path()).unwrap_err().to_string();
    assert!(refused.contains("is a folder"), "{refused}");
}

#[test]
fn a_full_device_is_an_error_and_stays_a_device() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipping: no /dev/full here");
        return;
    }
    let error = write_atomically(full, |w| w.write_all(&[0u8; 1 << 16])).unwrap_err();
    assert!(error.to_string().contains("/dev/full"), "{error}");
    assert!(!fs::metadata(full).unwrap().is_file());
}
