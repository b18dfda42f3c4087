#!/usr/bin/env bash
# make test: sets the machine up (build/test-setup.sh), starts a throw-away
# PostgreSQL cluster when OMNIROUTE_TEST_PG_URL is not set, runs the test
# stages in order and stops the cluster at the end, failed or not.
#
# Progress: "[stage N/M name]" at each stage's start and end, and a line at
# least every OMNIROUTE_TEST_HEARTBEAT seconds (30) while a stage runs, with
# the stage's time and the total so far; a table of the stages' times at the
# end.
#
# Side by side: after the CPU-bound race stage, the stages that use about one
# core each (the browser specs wait on pages, the package and desktop stages
# on single-threaded tools, the clients on node CLIs; the pins and the
# fuzzers are short) run as two lanes at once, each lane's stages in turn. Each of those stages' output
# goes to its own log, printed whole when the stage ends (never interleaved);
# its start, heartbeat and end lines, wall time and CPU stay its own.
#
#   OMNIROUTE_TEST_STAGES="vet race"   run only these stages (names below,
#                                      comma- or space-separated; setup always)
#   OMNIROUTE_TEST_KEEP_GOING=1        run the remaining stages after a failure
#   OMNIROUTE_TEST_SKIP_SETUP=1        skip the system package check
#   OMNIROUTE_TEST_LANES="a b|c d"     the stages run side by side: lanes split
#                                      by |, each lane's stages in turn (default
#                                      below; "" runs every stage in turn)
#   build/test.sh --list               print the stages and exit
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
MAKE=${MAKE:-make}

# name|what it runs (one make target each; see the Makefile).
all_stages=(
  "build|make build: the dashboard and the headless gateway, shared by every suite below (OMNIROUTE_BIN)"
  "vet|make vet: go vet (reusing build's compiled packages) and gofmt"
  "race|make test-race: every Go test with the race detector (unit, integration, e2e, hostile)"
  "pins|make test-pins: allocation and stack measurements, without the race detector"
  "fuzz|make test-fuzz: every Go fuzz target"
  "clients|make test-clients: the real agents and SDKs against the built gateway"
  "frontend|make test-frontend: the dashboard's unit tests"
  "browser|make test-browser: the dashboard in Chromium against the gateway"
  "desktop|make test-desktop: the desktop window under Xvfb"
  "package|make test-package: .deb, .rpm, tarball and the Windows installer"
  "soak|make test-soak: 10,000 streams, 30 % cancelled"
)
target_of() {
  case "$1" in
    build) echo build ;; vet) echo vet ;; *) echo "test-$1" ;;
  esac
}

if [ "${1:-}" = --list ]; then
  for s in "${all_stages[@]}"; do printf '  %-9s %s\n' "${s%%|*}" "${s#*|}"; done
  exit 0
fi

selected=()
if [ -n "${OMNIROUTE_TEST_STAGES:-}" ]; then
  for want in ${OMNIROUTE_TEST_STAGES//,/ }; do
    found=
    for s in "${all_stages[@]}"; do [ "${s%%|*}" = "$want" ] && found=1; done
    if [ -z "$found" ]; then
      echo "OMNIROUTE_TEST_STAGES: unknown stage $want; the stages are:" >&2
      for s in "${all_stages[@]}"; do echo "  ${s%%|*}" >&2; done
      exit 2
    fi
  done
  # In the suite's order, whatever order they were named in.
  for s in "${all_stages[@]}"; do
    [[ " ${OMNIROUTE_TEST_STAGES//,/ } " == *" ${s%%|*} "* ]] && selected+=("${s%%|*}")
  done
else
  for s in "${all_stages[@]}"; do selected+=("${s%%|*}"); done
fi

start_all=$(date +%s)
total=$((${#selected[@]} + 1)) # + setup
heartbeat=${OMNIROUTE_TEST_HEARTBEAT:-30}
dur() { local s=$1; printf '%dm%02ds' $((s / 60)) $((s % 60)); }
since() { echo $(($(date +%s) - $1)); }

hb_pid= cmd_pid= pgdir= pg_as=() pgbin= lane_pids=() run_dir=
cleanup() {
  # Lanes still running (an interrupt): each stops its stage (lane_stop).
  for p in "${lane_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${lane_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$cpu_file" "$cpu_file.c0" "$cpu_file.c1"
  rm -rf "$run_dir"
  # A stage still running (the run was interrupted): its whole process group.
  if [ -n "$cmd_pid" ]; then
    kill -TERM -- "-$cmd_pid" 2>/dev/null || kill -TERM "$cmd_pid" 2>/dev/null || true
    wait "$cmd_pid" 2>/dev/null || true
  fi
  [ -n "$hb_pid" ] && { kill "$hb_pid" 2>/dev/null || true; wait "$hb_pid" 2>/dev/null || true; }
  [ -n "${clients_npm_pid:-}" ] && { kill -TERM -- "-$clients_npm_pid" 2>/dev/null || kill "$clients_npm_pid" 2>/dev/null || true; }
  if [ -n "$pgdir" ]; then
    "${pg_as[@]}" "$pgbin/pg_ctl" stop -w -m immediate -D "$pgdir/data" >/dev/null 2>&1 || true
    rm -rf "$pgdir"
    echo "test: the throw-away PostgreSQL cluster is stopped and removed"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The stages' table lines (one file per stage, so lanes write theirs too),
# the lanes' logs, and the mark a failed lane leaves for the other.
run_dir=$(mktemp -d)
# children_cpu prints the user+sys seconds of this shell's waited children
# (bash's times builtin, second line; run in this shell, not a subshell, so
# it reads through a file), so each stage reports the CPU it used: a stage
# far under 2 cores' worth of its wall time waits rather than works.
cpu_file=$(mktemp)
children_cpu() {
  times >"$cpu_file"
  sed -n 2p "$cpu_file" | awk '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
    printf "%d\n", t
  }'
}

# run_stage N NAME CMD... runs one stage with its start and end lines and a
# heartbeat meanwhile; it returns the command's status. With stage_log set
# (a lane), the command's output goes there and is printed whole at the end.
stage_log= beside=
run_stage() {
  local n=$1 name=$2; shift 2
  local t0 rc c0
  t0=$(date +%s)
  children_cpu >"$cpu_file.c0"
  c0=$(cat "$cpu_file.c0")
  echo "[stage $n/$total $name] start (total $(dur "$(since "$start_all")"))${beside:+, beside $beside}: $*"
  # The heartbeat computes its line without command substitutions: a TERM
  # arriving inside one made bash print a parse error.
  (
    trap 'kill $s 2>/dev/null; exit 0' TERM
    local now
    while :; do
      sleep "$heartbeat" & s=$!
      wait $s
      printf -v now '%(%s)T' -1
      printf '[stage %s/%s %s] running %dm%02ds (total %dm%02ds)\n' "$n" "$total" "$name" \
        $(((now - t0) / 60)) $(((now - t0) % 60)) $(((now - start_all) / 60)) $(((now - start_all) % 60))
    done
  ) &
  hb_pid=$!
  set +e
  if [ "$(type -t "$1")" = function ]; then
    "$@" # set-up: in this shell (it exports the PostgreSQL URL)
  else
    # In its own process group, waited for (a signal to this script then
    # runs cleanup at once, which stops the whole stage).
    if [ -n "$stage_log" ]; then
      setsid "$@" >"$stage_log" 2>&1 </dev/null &
    else
      setsid "$@" &
    fi
    cmd_pid=$!
    wait "$cmd_pid"
  fi
  rc=$?
  cmd_pid=
  set -e
  kill "$hb_pid" 2>/dev/null || true
  wait "$hb_pid" 2>/dev/null || true
  hb_pid=
  local took cpu state=ok
  took=$(since "$t0")
  children_cpu >"$cpu_file.c1"
  cpu=$(( $(cat "$cpu_file.c1") - c0 ))
  [ "$rc" = 0 ] || state=FAILED
  if [ -n "$stage_log" ]; then
    # One lane's log at a time.
    {
      flock 9
      echo "[stage $n/$total $name] output:"
      cat "$stage_log"
      [ "$rc" = 0 ] || echo "[stage $n/$total $name] FAILED (exit $rc): its output is above"
    } 9>"$run_dir/print.lock"
  fi
  if [ "$rc" = 0 ]; then
    echo "[stage $n/$total $name] ok in $(dur "$took") (total $(dur "$(since "$start_all")"))"
  else
    echo "[stage $n/$total $name] FAILED (exit $rc) after $(dur "$took") (total $(dur "$(since "$start_all")"))"
  fi
  printf '  %-9s %8s  cpu %8s  %s%s\n' "$name" "$(dur "$took")" "$(dur "$cpu")" "$state" "${beside:+  (beside $beside)}" \
    >"$run_dir/summary.$(printf %02d "$n")"
  return "$rc"
}

print_summary() {
  echo "test: stage times (total $(dur "$(since "$start_all")")):"
  cat "$run_dir"/summary.* 2>/dev/null || true
}

needs_pg() {
  for s in "${selected[@]}"; do
    case "$s" in race|pins|clients|soak) return 0 ;; esac
  done
  return 1
}

# A throw-away PostgreSQL cluster on a loopback port for the whole run, shared
# by every test package through OMNIROUTE_TEST_PG_URL (each test creates its
# own database in it); stopped and removed by cleanup.
start_pg() {
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$pgbin" ] || pgbin=$(dirname "$(command -v initdb)")
  pgdir=$(mktemp -d /tmp/omniroute-test-pg.XXXXXX)
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$pgdir" # initdb refuses to run as root
    pg_as=(runuser -u postgres --)
  fi
  "${pg_as[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >/dev/null
  local try port
  for try in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    if "${pg_as[@]}" "$pgbin/pg_ctl" start -w -t 60 -D "$pgdir/data" -l "$pgdir/server.log" \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$pgdir -c fsync=off -c max_connections=300" >/dev/null; then
      break
    fi
    [ "$try" = 5 ] && { cat "$pgdir/server.log"; return 1; }
  done
  export OMNIROUTE_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  echo "test: a throw-away PostgreSQL cluster on 127.0.0.1:$port ($("$pgbin/postgres" --version))"
}

setup() {
  build/test-setup.sh "${selected[@]}"
  go version
  if command -v node >/dev/null; then echo "node $(node --version)"; fi
  go mod download
  if needs_pg; then
    if [ -n "${OMNIROUTE_TEST_PG_URL:-}" ]; then
      echo "test: PostgreSQL from OMNIROUTE_TEST_PG_URL"
    else
      start_pg
    fi
  fi
}

# The real clients' npm install (about a minute, mostly unpacking) runs in
# the background from the start, beside the CPU-bound stages; the clients
# stage waits for it.
clients_npm_pid= clients_npm_log=
prefetch_clients() {
  [[ " ${selected[*]} " == *" clients "* ]] || return 0
  command -v npm >/dev/null || return 0
  clients_npm_log=$(mktemp)
  setsid "$MAKE" --no-print-directory tests/clients/node_modules/.package-lock.json >"$clients_npm_log" 2>&1 &
  clients_npm_pid=$!
  echo "test: the real clients' npm ci runs in the background (log: $clients_npm_log)"
}
await_clients() {
  [ -n "$clients_npm_pid" ] || return 0
  local rc=0
  wait "$clients_npm_pid" || rc=$?
  clients_npm_pid=
  if [ "$rc" != 0 ]; then
    echo "test: the real clients' npm ci failed (exit $rc):"
    cat "$clients_npm_log"
  fi
  rm -f "$clients_npm_log"
  return "$rc"
}

# The clients stage: the background install first (a failure is reported,
# and make then retries it), then the suite.
clients_stage() {
  await_clients || true
  "$MAKE" --no-print-directory test-clients
}

# The lanes: stages that each use about one core, run two at a time (see the
# top). The pins, the fuzzers and the browser specs beside the desktop
# stage, the package and the clients: no two of them build the same file (the
# build stage made the gateway and the dashboard; only the desktop and
# package stages link the desktop binary, so they share a lane; the pins and
# fuzzers build test binaries through Go's cache, safe to share), and each
# starts its gateways on free ports in its own temporary directories.
lanes_spec=${OMNIROUTE_TEST_LANES-pins fuzz frontend browser|desktop package clients}
lanes=()
in_lane() { [[ " ${lanes[*]//|/ } " == *" $1 "* ]]; }
IFS='|' read -r -a lane_specs <<<"$lanes_spec"
for spec in "${lane_specs[@]}"; do
  lane=
  for want in $spec; do
    [[ " ${selected[*]} " == *" $want "* ]] && lane+="${lane:+ }$want"
  done
  [ -n "$lane" ] && lanes+=("$lane")
done
# Side by side only after this run's build stage (the stages' make targets
# then find the gateway and the dashboard built and build nothing at once),
# and only with two lanes or more.
if [ "${#lanes[@]}" -lt 2 ] || [[ " ${selected[*]} " != *" build "* ]]; then lanes=(); fi

stage_no() { # stage_no NAME: its number in this run (setup is 1)
  local i=1 s
  for s in "${selected[@]}"; do
    i=$((i + 1))
    [ "$s" = "$1" ] && { echo "$i"; return; }
  done
}
cmd_of() { # cmd_of NAME: the stage's command, into cmd
  cmd=("$MAKE" --no-print-directory "$(target_of "$1")")
  return 0
}

# lane_run INDEX STAGES...: one lane, in a subshell; stops at its first
# failure (or, when the other lane failed, before its next stage) unless
# OMNIROUTE_TEST_KEEP_GOING=1.
lane_run() {
  local idx=$1; shift
  local others name rc=0
  cpu_file=$(mktemp)
  # A TERM (the run interrupted): stop this lane's stage and its heartbeat.
  trap 'lane_stop; exit 143' TERM
  for name in "$@"; do
    if [ "${OMNIROUTE_TEST_KEEP_GOING:-}" != 1 ] && { [ "$rc" != 0 ] || [ -e "$run_dir/failed" ]; }; then
      echo "[stage $(stage_no "$name")/$total $name] not run: a stage failed"
      continue
    fi
    # What runs beside it: the other lanes' stages running as it starts.
    echo "$name" >"$run_dir/lane.$idx.now"
    others=
    for l in "${!lanes[@]}"; do
      [ "$l" != "$idx" ] && [ -s "$run_dir/lane.$l.now" ] && others+="${others:+ }$(cat "$run_dir/lane.$l.now")"
    done
    beside=$others
    stage_log="$run_dir/$name.log"
    cmd_of "$name"
    if ! run_stage "$(stage_no "$name")" "$name" "${cmd[@]}"; then
      rc=1
      : >"$run_dir/failed"
    fi
  done
  rm -f "$cpu_file" "$cpu_file.c0" "$cpu_file.c1" "$run_dir/lane.$idx.now"
  return "$rc"
}
lane_stop() {
  if [ -n "$cmd_pid" ]; then
    kill -TERM -- "-$cmd_pid" 2>/dev/null || kill -TERM "$cmd_pid" 2>/dev/null || true
    wait "$cmd_pid" 2>/dev/null || true
  fi
  [ -n "$hb_pid" ] && { kill "$hb_pid" 2>/dev/null || true; wait "$hb_pid" 2>/dev/null || true; }
  rm -f "$cpu_file" "$cpu_file.c0" "$cpu_file.c1"
}

# run_lanes: every lane at once; fails when any stage failed.
run_lanes() {
  local i rc=0
  # The real clients' npm ci was started by this shell: waited for here.
  if in_lane clients; then await_clients || true; fi
  local desc=
  for i in "${lanes[@]}"; do desc+=" [$i]"; done
  echo "test: side by side, each lane's stages in turn:$desc"
  lane_pids=()
  # Each lane's first stage, before any starts (what the others run beside).
  for i in "${!lanes[@]}"; do echo "${lanes[i]%% *}" >"$run_dir/lane.$i.now"; done
  for i in "${!lanes[@]}"; do
    # shellcheck disable=SC2086 # the lane's stage names
    lane_run "$i" ${lanes[i]} &
    lane_pids+=($!)
  done
  for i in "${!lane_pids[@]}"; do
    wait "${lane_pids[i]}" || rc=1
  done
  lane_pids=()
  return "$rc"
}

echo "test: stages ${selected[*]} (OMNIROUTE_TEST_STAGES selects; build/test.sh --list)"
failed=0
run_stage 1 setup setup || { print_summary; exit 1; }
prefetch_clients
lanes_done=
for name in "${selected[@]}"; do
  if [ "${#lanes[@]}" -gt 0 ] && in_lane "$name"; then
    # The lanes start where their first stage comes in the suite's order.
    [ -n "$lanes_done" ] && continue
    lanes_done=1
    if ! run_lanes; then
      failed=1
      [ "${OMNIROUTE_TEST_KEEP_GOING:-}" = 1 ] || break
    fi
    continue
  fi
  cmd_of "$name"
  [ "$name" = clients ] && cmd=(clients_stage)
  if ! run_stage "$(stage_no "$name")" "$name" "${cmd[@]}"; then
    failed=1
    [ "${OMNIROUTE_TEST_KEEP_GOING:-}" = 1 ] || break
  fi
  # Every later suite runs the gateway build just made instead of its own.
  [ "$name" = build ] && export OMNIROUTE_BIN="$PWD/bin/omniroute"
done
print_summary
exit "$failed"
