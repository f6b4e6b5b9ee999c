# shellcheck shell=bash
# Part of benches/gpu.sh (sourced by it, never run alone): the test executables and heatlab verify (subcommands tests and verify).

# The test executables in the binaries folder.
test_names() {
  local file name
  for file in "$BINS"/*; do
    name=$(basename "$file")
    if [ -f "$file" ] && [ -x "$file" ] && [[ $TOOLS != *" $name "* ]]; then
      echo "$name"
    fi
  done
}

# test_log SPEC: the log's name for NAME[:FILTER,...].
test_label() {
  if [[ $1 == *:* ]]; then
    printf '%s-%s\n' "${1%%:*}" "$(printf '%s' "${1#*:}" | tr -c 'A-Za-z0-9_.-' '_')"
  else
    printf '%s\n' "$1"
  fi
}

# run_test SPEC [BINS]: one test executable (NAME or NAME:FILTER,FILTER) with its threads,
# logged in $DIR/LABEL.txt.
run_test() {
  local spec=$1 bins=${2:-$BINS} name label per threads default filters=() args=()
  name=${spec%%:*}
  label=$(test_label "$spec")
  if [[ $spec == *:* ]]; then
    IFS=, read -r -a filters <<<"${spec#*:}"
  fi
  per="HEATLAB_TEST_THREADS_$name"
  case $name in gpu | gui) default=1 ;; *) default= ;; esac
  threads=${!per:-${HEATLAB_TEST_THREADS:-$default}}
  [ -z "$threads" ] || args+=(--test-threads "$threads")
  if [ ! -x "$bins/$name" ]; then
    fail "${DIR#"$RESULTS"/}/$label" "$bins/$name is missing"
    return 0
  fi
  echo "$bins/$name ${filters[*]} ${args[*]} (HEATLAB_BIN=$HEATLAB_BIN)" >"$DIR/$label.txt"
  step "${DIR#"$RESULTS"/}/$label" "$DIR/$label.txt" "${HEATLAB_TEST_TIMEOUT:-540}" \
    "$bins/$name" "${filters[@]}" "${args[@]}"
}

test_summary() {
  local label
  for label in "$@"; do
    echo "=== $label"
    show "$DIR/$label.txt" '^test result|^rc=|FAILED|panicked|skipped'
  done
}

cmd_tests() {
  local verify=0 sanitize=0 specs=() labels=() spec label pids=() pid jobs_at_once rc sanitizer
  local beside=0
  while [ $# -gt 0 ]; do
    case $1 in
      --verify) verify=${2:?--verify N}; shift 2 ;;
      --sanitize) sanitize=1; shift ;;
      -*) die_usage "tests: unknown option $1" ;;
      *) specs+=("$1"); shift ;;
    esac
  done
  if [ ${#specs[@]} = 0 ]; then
    mapfile -t specs < <(test_names)
  fi
  if [ ${#specs[@]} = 0 ]; then
    fail tests "no test executables in $BINS"
    return 0
  fi
  if [ "$verify" != 0 ]; then
    verify_into "$DIR" --sequences "$verify" &
    pids+=($!)
    beside=1
  fi
  # The executables run side by side: separate processes, each with its own CUDA context.
  jobs_at_once=${HEATLAB_TEST_JOBS:-${#specs[@]}}
  for spec in "${specs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$((jobs_at_once + beside))" ]; do sleep 1; done
    labels+=("$(test_label "$spec")")
    run_test "$spec" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  if [ "$sanitize" = 1 ]; then
    for spec in "${specs[@]}"; do
      label=$(test_label "$spec")
      rc=$(sed -n 's/^rc=\([0-9]*\) .*/\1/p' "$DIR/$label.txt" | tail -n 1)
      [ "${rc:-0}" != 0 ] || continue
      if ! sanitizer=$(cuda_tool compute-sanitizer); then
        fail "tests/$label-memcheck" "compute-sanitizer not found"
        continue
      fi
      local filters=()
      [[ $spec != *:* ]] || IFS=, read -r -a filters <<<"${spec#*:}"
      step "tests/$label-memcheck" "$DIR/$label-memcheck.txt" 500 \
        "$sanitizer" --tool memcheck --print-limit 10 "$BINS/${spec%%:*}" "${filters[@]}" --test-threads 4
      show "$DIR/$label-memcheck.txt" 'Invalid|ERROR SUMMARY|kernel|Address' | head -40
    done
  fi
  test_summary "${labels[@]}" >"$DIR/tests.txt"
  cat "$DIR/tests.txt"
  [ "$verify" = 0 ] || show "$DIR/verify.txt" 'sequences|^rc='
}

# verify_into FOLDER [ARGS...]: heatlab verify on CUDA into FOLDER/verify.txt (physics.txt with
# --physics) and its JSON beside.
verify_into() {
  local folder=$1 name=verify args=()
  shift
  args=("$@")
  [[ " ${args[*]} " == *" --physics "* ]] && name=physics
  [[ " ${args[*]} " == *" --backend "* ]] || args+=(--backend cuda)
  [[ " ${args[*]} " == *" --sequences "* || $name == physics ]] || args+=(--sequences 500)
  [[ " ${args[*]} " == *" --json "* ]] || args+=(--json "$folder/$name.json")
  step "${folder#"$RESULTS"/}/$name" "$folder/$name.txt" 400 "$HL" verify "${args[@]}"
}

cmd_verify() {
  require verify heatlab || return 0
  verify_into "$DIR" "$@"
  show "$DIR/verify.txt" 'sequences|^rc='
  show "$DIR/physics.txt" 'passed|failed|^rc='
}
