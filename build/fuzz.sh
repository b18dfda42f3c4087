#!/usr/bin/env bash
# make test-fuzz: every Go fuzz target of the packages named (go list
# patterns), each for FUZZTIME executions after its seed corpus.
#
# One fuzz-instrumented test binary per package (go test -c -fuzz, the build
# go test -fuzz makes), each of its targets run from it the way go test runs
# it: in the package's directory, with the go command's fuzz cache
# ($GOCACHE/fuzz/<import path>), so the inputs found before are replayed.
# Before, a go test -fuzz per target linked that binary again each time, and
# a go test -list per package built a second, uninstrumented one: about 1 s
# of CPU per target of the 32.
#
#   FUZZTIME=10000x build/fuzz.sh ./backend/jsonv ./backend/translate/...
#
# A count, not a duration: go1.26's fuzz coordinator can fail a clean run
# with "context deadline exceeded" when a duration ends mid-execution (Go
# issue 75804).
set -euo pipefail

GO=${GO:-go}
fuzztime=${FUZZTIME:-10000x}
export CGO_ENABLED=0
cache=$("$GO" env GOCACHE)/fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0
while read -r pkg dir; do
  bin=$work/$n.test
  n=$((n + 1))
  out=$("$GO" test -trimpath -c -fuzz . -o "$bin" "$pkg" 2>&1) || { echo "$out"; exit 1; }
  [ -x "$bin" ] || continue # no test files
  targets=$(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz' || true)
  for f in $targets; do
    echo "fuzz $pkg $f ($fuzztime)"
    out=$(cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^$f\$" -test.fuzztime "$fuzztime" \
      -test.fuzzcachedir "$cache/$pkg" -test.paniconexit0 -test.timeout 10m 2>&1) ||
      { echo "$out" | tail -40; exit 1; }
  done
done < <("$GO" list -f '{{.ImportPath}} {{.Dir}}' "$@")
