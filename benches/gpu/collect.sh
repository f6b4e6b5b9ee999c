# shellcheck shell=bash
# Part of benches/gpu.sh (sourced by it, never run alone): collect, on the build machine: build and copy the binaries into the binaries folder.

# collect [--pack]: on the build machine, the binaries into the binaries folder.
cmd_collect() {
  local pack=0 dest target source executable name example files=()
  [ "${1:-}" != --pack ] || pack=1
  command -v cargo >/dev/null 2>&1 || die_usage "collect runs on the build machine (it needs cargo)"
  dest=${HEATLAB_GPU_BINS:-$REPO/.gpu}
  target=${CARGO_TARGET_DIR:-$REPO/target}
  cd "$REPO" || exit
  cargo build --release
  cargo build --release --examples
  mkdir -p "$dest"
  find "$dest" -mindepth 1 -maxdepth 1 -type f -delete
  cp "$target/release/heatlab" "$dest/"
  for example in basics_screenshots lab_screenshots tutorial_variants; do
    cp "$target/release/examples/$example" "$dest/"
  done
  # Cargo names each test executable it built, as in
  # "Executable unittests src/lib.rs (target/release/deps/heatlab_engine-0123456789abcdef)".
  cargo test --release --no-run >"$dest/cargo-test.txt" 2>&1 || { cat "$dest/cargo-test.txt"; exit 1; }
  while IFS='|' read -r source executable; do
    [[ $executable == /* ]] || executable=$REPO/$executable
    name=$(basename "$executable")
    name=${name%-*}
    if [ "$name" = heatlab ]; then
      [[ $source != *main.rs ]] || continue # the binary's own unit tests: none
      name=heatlab_app
    fi
    cp "$executable" "$dest/$name"
  done < <(sed -n 's/^ *Executable \(.*\) (\(.*\))$/\1|\2/p' "$dest/cargo-test.txt")
  rm -f "$dest/cargo-test.txt"
  {
    echo "commit built: $(git rev-parse HEAD)"
    if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo "with uncommitted changes"; fi
  } >"$dest/COMMIT"
  mapfile -t files < <(cd "$dest" && ls)
  for name in "${files[@]}"; do
    [ "$name" = COMMIT ] || strip "$dest/$name" 2>/dev/null || true
  done
  if [ "$pack" = 1 ]; then
    tar -cJf "$dest/bins.tar.xz" -C "$dest" "${files[@]}" && (cd "$dest" && rm -f -- "${files[@]}")
  fi
  echo "collected into $dest: ${files[*]}"
  du -sh "$dest"
}
