#!/usr/bin/env bash
# make test-race: every Go package's tests with the race detector.
#
# tests/e2e runs as its own `go test` beside one `go test` of every other
# package (OMNIROUTE_RACE_SHARDS="tests/e2e=1", the default). Its tests
# drive the built gateway (not race-instrumented), two PostgreSQL-backed
# instances, fake upstreams: most of its 3 minutes wait. Inside one go test
# it held one of the -p 2 slots (runs and compiles alike) while waiting, and
# as one of the last packages in ./... it ran nearly alone at the end. Beside,
# the other go test keeps both cores busy meanwhile; nothing is repeated
# (the package runs whole, once).
#
# Packages named in OMNIROUTE_RACE_SHARDS are split into shards by test name
# (=N, N > 1) and run beside the rest, each shard its own process (its own
# temporary directories, PostgreSQL databases and ports): on a machine with
# idle cores that shortens the longest packages. On 2 cores it barely does:
# measured, 7 m 32 s and 13 m 42 s of CPU with backend/server=3 tests/e2e=2
# backend/store=2, against 8 m 22 s and 11 m 04 s unsharded (each shard
# repeats its package's set-up), and the extra contention made a
# timing-sensitive test fail; so no package is split unless asked.
# OMNIROUTE_RACE_SHARDS="" runs every package in one go test ./....
#
#   OMNIROUTE_RACE_SHARDS="backend/server=3 tests/e2e=2"   the packages split, and into how many shards
#
# Each job's output is printed whole when it ends; the status is non-zero if
# any job failed.
# checkptr (the unsafe.Pointer checks -race turns on for every package) is
# off for modernc.org/sqlite only: the SQLite engine is C transpiled to Go,
# whose pointer arithmetic the checks spent about a third of the CPU of a
# SQLite-bound test on (measured: 5.4 s → 3.6 s of CPU for the 36 subtests
# of TestStreamFaultsNeverLie and TestFailoverJSONAndStream). The race
# detector still instruments it, and every package of this module and every
# other dependency keeps checkptr.
set -uo pipefail

GO=${GO:-go}
shards=${OMNIROUTE_RACE_SHARDS-tests/e2e=1}
flags=(-race -count=1 -timeout 15m -gcflags=modernc.org/sqlite/...=-d=checkptr=0)
if [ -z "$shards" ]; then
  exec env CGO_ENABLED=1 "$GO" test "${flags[@]}" ./...
fi
out=$(mktemp -d)
pids=() names=()
# On any exit: stop the jobs still running (a failed listing, an interrupt).
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$out"' EXIT

split=()
for s in $shards; do split+=("./${s%%=*}"); done

start_job() { # start_job NAME CMD...
  local name=$1; shift
  ("$@" >"$out/${#names[@]}.log" 2>&1) &
  pids+=($!) names+=("$name")
}
# The other packages' go test prints its lines as they come (one "ok" per
# package: the stage's progress); the jobs beside it print theirs at the end.
start_main() { # start_main NAME CMD...
  local name=$1; shift
  ("$@") &
  pids+=($!) names+=("$name")
  : >"$out/0.log"
}

# Everything else, as one go test, started first (it runs while the long
# packages are listed).
mapfile -t rest < <("$GO" list ./... | while read -r p; do
  keep=1
  for s in "${split[@]}"; do [ "$p" = "omniroute/${s#./}" ] && keep=0; done
  [ "$keep" = 1 ] && echo "$p"
done)
start_main "the other packages" env CGO_ENABLED=1 "$GO" test "${flags[@]}" "${rest[@]}"

# The long packages' shards: their test names (go test -list compiles the
# test binary once; the shards reuse it), dealt round-robin.
for s in $shards; do
  pkg=./${s%%=*} n=${s##*=}
  if [ "$n" = 1 ]; then # whole, beside the rest
    start_job "$pkg" env CGO_ENABLED=1 "$GO" test "${flags[@]}" "$pkg"
    continue
  fi
  mapfile -t tests < <(CGO_ENABLED=1 "$GO" test "${flags[@]}" -list '^(Test|Fuzz|Example)' "$pkg" | grep -E '^(Test|Fuzz|Example)')
  if [ "${#tests[@]}" = 0 ]; then
    echo "race: $pkg lists no tests" >&2
    exit 1
  fi
  for ((i = 0; i < n; i++)); do
    pattern=
    for ((j = i; j < ${#tests[@]}; j += n)); do pattern+="${pattern:+|}${tests[j]}"; done
    [ -n "$pattern" ] || continue
    start_job "$pkg shard $((i + 1))/$n" env CGO_ENABLED=1 "$GO" test "${flags[@]}" -run "^($pattern)\$" "$pkg"
  done
done

rc=0
for i in "${!pids[@]}"; do
  if wait "${pids[i]}"; then
    echo "race: ${names[i]}: ok"
  else
    echo "race: ${names[i]}: FAILED"
    rc=1
  fi
  cat "$out/$i.log"
done
exit "$rc"
