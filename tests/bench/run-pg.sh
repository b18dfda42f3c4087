#!/usr/bin/env bash
# The gateway benchmark (run.sh) with the gateway on PostgreSQL: a team
# server's request path, request-log writer, change feed and heartbeats.
#
# Starts a throw-away PostgreSQL cluster on a free loopback port (as .ci/run
# does; as the postgres user when run as root), pinned with taskset to CPU 1 —
# the core run.sh gives the fake upstream and loadgen, away from the gateway's
# CPU 0 — so the server's work does not land on the gateway's core; then runs
# run.sh with OMNIROUTE_DATABASE_URL pointing at a fresh database in it, and
# stops and removes the cluster on exit. Every run.sh variable applies
# (BENCH_RATES, BENCH_ROUNDS, …); BENCH_NO_PIN=1 leaves the server unpinned too.
#   BENCH_PG_OPTS="-c …"   extra server options (e.g. -c log_statement=all)
#   BENCH_PG_LOG=FILE      keep the server log there
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/pg_ctl" ] || { echo "run-pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 2; }
pgdir=$(mktemp -d "${TMPDIR:-/tmp}/omniroute-bench-pg.XXXXXX")
as_pg=()
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$pgdir" # initdb refuses to run as root
	as_pg=(runuser -u postgres --)
fi
pin=()
if [ -z "${BENCH_NO_PIN:-}" ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin=(taskset -c 1)
fi
stop_pg() {
	"${as_pg[@]}" "$pgbin/pg_ctl" stop -w -m fast -D "$pgdir/data" >/dev/null 2>&1 || true
	[ -n "${BENCH_PG_LOG:-}" ] && cp "$pgdir/server.log" "$BENCH_PG_LOG" 2>/dev/null || true
	rm -rf "$pgdir"
}
trap stop_pg EXIT
"${as_pg[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >/dev/null
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 30000))
	# pg_ctl forks the postmaster from the pinned shell: it and every backend
	# it forks keep the affinity.
	if "${pin[@]}" "${as_pg[@]}" "$pgbin/pg_ctl" start -w -t 60 -D "$pgdir/data" -l "$pgdir/server.log" \
		-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$pgdir -c fsync=off ${BENCH_PG_OPTS:-}" >/dev/null; then
		break
	fi
	[ "$try" = 5 ] && { cat "$pgdir/server.log" >&2; exit 1; }
done
"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U postgres omniroute_bench
echo "PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port${pin:+, pinned to CPU 1}" >&2
export OMNIROUTE_DATABASE_URL="postgres://postgres@127.0.0.1:$port/omniroute_bench?sslmode=disable"
"$ROOT/tests/bench/run.sh" "$@"
