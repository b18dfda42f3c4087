#!/usr/bin/env bash
# Speed and memory benchmark of the real gateway binary (make bench).
#
# Builds bin/omniroute and the fakeupstream and loadgen tools, starts the fake
# upstream and the gateway on loopback, and measures:
#   - idle RSS of the gateway (VmRSS, 2 s after startup);
#   - for each rate, a fixed-rate (open-loop) loadgen run straight to the fake
#     and one through the gateway: latency percentiles (from each request's
#     scheduled send time), the gateway's CPU time per request (utime+stime from
#     /proc/PID/stat), its RSS under load, and errors;
#   - one streaming run at 500 req/s.
#   - the same runs through a bare httputil.ReverseProxy (tests/cmd/bareproxy),
#     interleaved with the gateway's (direct, proxy, gateway at each rate, for
#     BENCH_ROUNDS rounds), so the gateway's CPU per request and per stream can
#     be read as a ratio to the proxy's on the same machine at the same moment;
#   - memory per open stream, last: BENCH_SLOW_STREAMS (1,000) streams that
#     drip an event every BENCH_SLOW_DRIP_MS, held open at once through the
#     bare proxy, then through the gateway: the peak RSS of each, RSS per
#     stream, open descriptors, OS threads, the fake's count of answers in
#     flight, and the gateway's goroutines (its /metrics gauge);
#   - the CPU ratio again from alternating slices: the proxy and the gateway
#     take turns in short runs (ABBA order) at one rate, so that the machine's
#     drift between runs falls on both alike;
#   - allocations per request from the in-process Go benchmarks (direct, proxy
#     and gateway in one process, tests/bench/*_test.go).
# It prints markdown tables. Figures are reported, never asserted.
#
# Environment:
#   BENCH_RATES="200 500 1000"  JSON rates (req/s)
#   BENCH_STREAM_RATE=500       rate of the streaming run (empty: none)
#   BENCH_DURATION=10s          measured phase of each run
#   BENCH_WARMUP=1s             unmeasured phase before each run
#   BENCH_RESULTS_DIR=dir       keep each run's loadgen JSON there
#   BENCH_NO_PIN=1              do not pin processes to cores with taskset
#   BENCH_SETTLE=2              seconds to wait before the after-load RSS reading
#   BENCH_ROUNDS=1              rounds of the interleaved direct/proxy/gateway runs
#   BENCH_GO=1                  also run the in-process Go benchmarks (0: skip)
#   BENCH_ALT_SLICES=12         slices per process of the alternating CPU phase (0: skip)
#   BENCH_ALT_SLICE=2s          length of one slice
#   BENCH_ALT_RATES=500         JSON rates of the alternating phase (streams: BENCH_STREAM_RATE)
#   BENCH_SLOW_STREAMS=1000     slow streams held open at once (0: skip that phase)
#   BENCH_SLOW_CHUNKS=50        content events per slow stream
#   BENCH_SLOW_DRIP_MS=200      pause before each event of a slow stream
#   BENCH_SLOW_RAMP=2           seconds over which the slow streams are opened
#
# Only loopback addresses are used. Every process started here is stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RATES=${BENCH_RATES:-200 500 1000}
STREAM_RATE=${BENCH_STREAM_RATE-500}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-1s}
SETTLE=${BENCH_SETTLE:-2}
ROUNDS=${BENCH_ROUNDS:-1}
GO_BENCH=${BENCH_GO:-1}
ALT_SLICES=${BENCH_ALT_SLICES:-12}
ALT_SLICE=${BENCH_ALT_SLICE:-2s}
ALT_RATES=${BENCH_ALT_RATES:-500}
SLOW_STREAMS=${BENCH_SLOW_STREAMS:-1000}
SLOW_CHUNKS=${BENCH_SLOW_CHUNKS:-50}
SLOW_DRIP_MS=${BENCH_SLOW_DRIP_MS:-200}
SLOW_RAMP=${BENCH_SLOW_RAMP:-2}
MODEL_DIRECT=gpt-4o-mini
MODEL_GATEWAY=openai-compatible/gpt-4o-mini
UPSTREAM_KEY=bench-upstream-key

# Loopback only: never route anything through a proxy from the environment.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

for tool in go jq curl awk; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 2; }
done
[ -r /proc/self/stat ] || { echo "run.sh: needs Linux /proc" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/omniroute-bench.XXXXXX")
PIDS=()

cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { printf '%s\n' "$*" >&2; }

# forget PID: drops a process that has been waited for from the cleanup list.
forget() {
	local keep=() p
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# reap_loadgen NAME PID: waits for loadgen run NAME; on its failure prints its
# errors and stops the whole run.
reap_loadgen() {
	if ! wait "$2"; then
		log "run.sh: loadgen $1 failed:"
		cat "$TMP/$1.err" >&2
		exit 1
	fi
	forget "$2"
}

# --- build -------------------------------------------------------------------
cd "$ROOT"
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
log "building bin/omniroute, fakeupstream and loadgen (CGO_ENABLED=0)…"
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o bin/omniroute .
CGO_ENABLED=0 go build -o "$TMP/fakeupstream" ./tests/cmd/fakeupstream
CGO_ENABLED=0 go build -o "$TMP/loadgen" ./tests/cmd/loadgen
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TMP/bareproxy" ./tests/cmd/bareproxy

# --- pinning -----------------------------------------------------------------
GW_PIN=()
AUX_PIN=()
PINNED=no
if [ -z "${BENCH_NO_PIN:-}" ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	GW_PIN=(taskset -c 0)
	AUX_PIN=(taskset -c 1)
	PINNED="yes (gateway on CPU 0, fake upstream and loadgen on CPU 1)"
fi

# --- helpers -----------------------------------------------------------------
CLK_TCK=$(getconf CLK_TCK)

# wait_line FILE REGEX PID: waits (20 s at most) for a line of FILE matching
# REGEX while PID is alive, and prints it.
wait_line() {
	local file=$1 re=$2 pid=$3 line
	for _ in $(seq 200); do
		if line=$(grep -m1 -E "$re" "$file" 2>/dev/null); then
			printf '%s\n' "$line"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	log "run.sh: no line matching /$re/ in $file; its output:"
	cat "$file" >&2 || true
	return 1
}

# rss_kib PID: the process's resident set (VmRSS) in KiB.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# hwm_kib PID: the process's peak resident set (VmHWM) in KiB.
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

# cpu_ticks PID: utime+stime in clock ticks (fields 14 and 15 of
# /proc/PID/stat, counted after the ")" that ends the command name).
cpu_ticks() {
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	# After ") " the fields start at field 3 (state): utime is the 12th, stime the 13th.
	awk '{print $12 + $13}' <<<"$stat"
}

mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# count DURATION RATE: requests a loadgen schedule sends in DURATION (like loadgen).
count() {
	local d=$1 rate=$2 secs
	case $d in
	*ms) secs=$(awk -v x="${d%ms}" 'BEGIN {print x / 1000}') ;;
	*s) secs=${d%s} ;;
	*m) secs=$(awk -v x="${d%m}" 'BEGIN {print x * 60}') ;;
	*) log "run.sh: durations must end in ms, s or m: $d"; exit 2 ;;
	esac
	awk -v s="$secs" -v r="$rate" 'BEGIN {printf "%d", int(s * r + 1e-9)}'
}

# loadgen NAME URL KEY MODEL RATE [STREAM]: one fixed-rate run; writes
# $TMP/NAME.json. While it runs, samples the RSS and CPU (before and after) of
# the process under test, $MEASURE_PID (the gateway unless set), into $TMP/NAME.gw.
loadgen() {
	local name=$1 url=$2 key=$3 model=$4 rate=$5 stream=${6:-}
	local pid=${MEASURE_PID:-$GW_PID}
	local args=(-url "$url" -key "$key" -model "$model" -rate "$rate" -duration "$DURATION" -warmup "$WARMUP" -timeout 10s -json)
	[ -n "$stream" ] && args+=(-stream)
	local cpu0 cpu1 rss max_rss=0 lg
	cpu0=$(cpu_ticks "$pid")
	"${AUX_PIN[@]}" "$TMP/loadgen" "${args[@]}" >"$TMP/$name.json" 2>"$TMP/$name.err" &
	lg=$!
	PIDS+=("$lg")
	while kill -0 "$lg" 2>/dev/null; do
		rss=$(rss_kib "$pid")
		[ "$rss" -gt "$max_rss" ] && max_rss=$rss
		sleep 0.2
	done
	reap_loadgen "$name" "$lg"
	cpu1=$(cpu_ticks "$pid")
	echo "$((cpu1 - cpu0)) $max_rss" >"$TMP/$name.gw"
	if [ -n "${BENCH_RESULTS_DIR:-}" ]; then
		mkdir -p "$BENCH_RESULTS_DIR"
		cp "$TMP/$name.json" "$BENCH_RESULTS_DIR/"
	fi
}

# --- fake upstream -----------------------------------------------------------
"${AUX_PIN[@]}" "$TMP/fakeupstream" -addr 127.0.0.1:0 >"$TMP/fake.out" 2>"$TMP/fake.err" &
FAKE_PID=$!
PIDS+=("$FAKE_PID")
FAKE_URL=$(wait_line "$TMP/fake.out" '^listening on http://127\.0\.0\.1:[0-9]+' "$FAKE_PID")
FAKE_URL=${FAKE_URL#listening on }
log "fake upstream: $FAKE_URL (pid $FAKE_PID)"

# --- bare reverse proxy (the yardstick), on the gateway's core -----------------
"${GW_PIN[@]}" "$TMP/bareproxy" -addr 127.0.0.1:0 -upstream "$FAKE_URL" >"$TMP/proxy.out" 2>"$TMP/proxy.err" &
PROXY_PID=$!
PIDS+=("$PROXY_PID")
PROXY_URL=$(wait_line "$TMP/proxy.out" '^listening on http://127\.0\.0\.1:[0-9]+' "$PROXY_PID")
PROXY_URL=${PROXY_URL#listening on }
log "bare proxy: $PROXY_URL (pid $PROXY_PID)"

# --- gateway -----------------------------------------------------------------
mkdir -p "$TMP/data"
OMNIROUTE_DATA_DIR="$TMP/data" OMNIROUTE_HOST=127.0.0.1 OMNIROUTE_PORT=0 \
	"${GW_PIN[@]}" "$ROOT/bin/omniroute" --headless >"$TMP/gw.out" 2>"$TMP/gw.err" &
GW_PID=$!
PIDS+=("$GW_PID")
GW_BASE=$(wait_line "$TMP/gw.out" 'Endpoint:' "$GW_PID" | awk '{print $2}')
GW_BASE=${GW_BASE%/v1}
CLIENT_KEY=$(wait_line "$TMP/gw.out" 'API key:' "$GW_PID" | awk '{print $3}')
TOKEN=$(OMNIROUTE_DATA_DIR="$TMP/data" "$ROOT/bin/omniroute" token)
case $GW_BASE in http://127.0.0.1:*) ;; *) log "run.sh: gateway not on loopback: $GW_BASE"; exit 1 ;; esac
log "gateway: $GW_BASE (pid $GW_PID)"

sleep 2
IDLE_RSS=$(rss_kib "$GW_PID")
PROXY_IDLE_RSS=$(rss_kib "$PROXY_PID")
log "idle RSS: $(mib "$IDLE_RSS") MiB"

code=$(curl --noproxy '*' -sS -o "$TMP/conn.json" -w '%{http_code}' -X POST "$GW_BASE/api/providers" \
	-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d "{\"provider\":\"openai-compatible\",\"name\":\"bench\",\"apiKey\":\"$UPSTREAM_KEY\",\"baseUrl\":\"$FAKE_URL/v1\",\"models\":[\"gpt-4o-mini\"]}")
if [ "$code" != 201 ]; then
	log "run.sh: create connection: HTTP $code: $(cat "$TMP/conn.json")"
	exit 1
fi

# --- warm-up -----------------------------------------------------------------
log "warming up…"
DURATION_SAVED=$DURATION WARMUP_SAVED=$WARMUP
DURATION=2s WARMUP=0s
loadgen warmup-direct "$FAKE_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" 200
loadgen warmup-gateway "$GW_BASE/v1/chat/completions" "$CLIENT_KEY" "$MODEL_GATEWAY" 200
loadgen warmup-gateway-stream "$GW_BASE/v1/chat/completions" "$CLIENT_KEY" "$MODEL_GATEWAY" 200 stream
MEASURE_PID=$PROXY_PID loadgen warmup-proxy "$PROXY_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" 200
MEASURE_PID=$PROXY_PID loadgen warmup-proxy-stream "$PROXY_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" 200 stream
DURATION=$DURATION_SAVED WARMUP=$WARMUP_SAVED
for w in warmup-direct warmup-gateway warmup-gateway-stream warmup-proxy warmup-proxy-stream; do
	if [ "$(jq '.ok' "$TMP/$w.json")" -eq 0 ]; then
		log "run.sh: $w: no request succeeded: $(cat "$TMP/$w.json")"
		exit 1
	fi
done

# --- measured runs -----------------------------------------------------------
ROWS=()
# run_rate RATE ROUND [stream]: direct, bare proxy and gateway runs back to
# back at one rate, and one table row comparing them.
run_rate() {
	local rate=$1 round=$2 stream=${3:-} mode=json suffix=""
	[ -n "$stream" ] && mode=stream && suffix=-stream
	suffix="$suffix-r$round"
	log "rate $rate req/s ($mode, round $round): direct…"
	loadgen "direct-$rate$suffix" "$FAKE_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" "$rate" $stream
	log "rate $rate req/s ($mode, round $round): through the bare proxy…"
	MEASURE_PID=$PROXY_PID loadgen "proxy-$rate$suffix" "$PROXY_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" "$rate" $stream
	log "rate $rate req/s ($mode, round $round): through the gateway…"
	loadgen "gateway-$rate$suffix" "$GW_BASE/v1/chat/completions" "$CLIENT_KEY" "$MODEL_GATEWAY" "$rate" $stream
	local d="$TMP/direct-$rate$suffix.json" p="$TMP/proxy-$rate$suffix.json" g="$TMP/gateway-$rate$suffix.json"
	local gticks grss pticks prss greq preq
	read -r gticks grss <"$TMP/gateway-$rate$suffix.gw"
	read -r pticks prss <"$TMP/proxy-$rate$suffix.gw"
	# Every request loadgen sent during the CPU window: the warmup phase's and
	# the measured phase's.
	greq=$(($(count "$WARMUP" "$rate") + $(jq '.sent' "$g")))
	preq=$(($(count "$WARMUP" "$rate") + $(jq '.sent' "$p")))
	local dp50 dp99 pp50 pp99 gp50 gp99 derr perr gerr grate
	dp50=$(jq '.latency_us.p50' "$d") dp99=$(jq '.latency_us.p99' "$d")
	pp50=$(jq '.latency_us.p50' "$p") pp99=$(jq '.latency_us.p99' "$p")
	gp50=$(jq '.latency_us.p50' "$g") gp99=$(jq '.latency_us.p99' "$g")
	derr=$(jq '[.errors[]] | add // 0' "$d") perr=$(jq '[.errors[]] | add // 0' "$p") gerr=$(jq '[.errors[]] | add // 0' "$g")
	grate=$(jq '.achieved_rate' "$g")
	ROWS+=("$(awk -v rate="$rate" -v mode="$mode" -v round="$round" -v grate="$grate" -v dp50="$dp50" -v dp99="$dp99" \
		-v pp50="$pp50" -v pp99="$pp99" -v gp50="$gp50" -v gp99="$gp99" -v gt="$gticks" -v pt="$pticks" -v tck="$CLK_TCK" \
		-v gn="$greq" -v pn="$preq" -v grss="$grss" -v prss="$prss" -v derr="$derr" -v perr="$perr" -v gerr="$gerr" 'BEGIN {
		gcpu = gn > 0 ? gt * 1e6 / tck / gn : 0
		pcpu = pn > 0 ? pt * 1e6 / tck / pn : 0
		ratio = pcpu > 0 ? sprintf("%.2f×", gcpu / pcpu) : "n/a"
		printf "| %d | %s | %d | %.0f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | +%.2f / +%.2f | %.0f / %.0f | **%s** | %.1f / %.1f | %d / %d / %d |",
			rate, mode, round, grate, dp50/1000, dp99/1000, pp50/1000, pp99/1000, gp50/1000, gp99/1000,
			(pp50-dp50)/1000, (gp50-dp50)/1000, pcpu, gcpu, ratio, prss/1024, grss/1024, derr, perr, gerr
	}')")
}

for round in $(seq "$ROUNDS"); do
	for rate in $RATES; do
		run_rate "$rate" "$round"
	done
	if [ -n "$STREAM_RATE" ]; then
		run_rate "$STREAM_RATE" "$round" stream
	fi
done

# --- alternating slices (the CPU ratio, drift cancelled) ------------------------
# A run's CPU per request drifts by ±10 % between runs a minute apart on a
# shared machine, and a row's ratio compares two runs 10 s apart. Here the
# proxy and the gateway take turns in short slices at one rate (in ABBA
# order, so a steady drift falls on both alike), and the ratio is of their
# summed CPU over their summed requests.
ALT_ROWS=()
# alt_ratio MODE RATE: ALT_SLICES slices of ALT_SLICE each for the proxy and
# the gateway in turn; one report row.
alt_ratio() {
	local mode=$1 rate=$2 stream="" i who pt=0 gt=0 pn=0 gn=0 c0 c1 n
	[ "$mode" = stream ] && stream=stream
	local DURATION=$ALT_SLICE WARMUP=0s
	for i in $(seq "$ALT_SLICES"); do
		for who in $([ $((i % 2)) = 1 ] && echo proxy gateway || echo gateway proxy); do
			local pid=$GW_PID url=$GW_BASE key=$CLIENT_KEY model=$MODEL_GATEWAY
			[ "$who" = proxy ] && pid=$PROXY_PID url=$PROXY_URL key=$UPSTREAM_KEY model=$MODEL_DIRECT
			c0=$(cpu_ticks "$pid")
			MEASURE_PID=$pid loadgen "alt-$mode-$who-$i" "$url/v1/chat/completions" "$key" "$model" "$rate" $stream
			c1=$(cpu_ticks "$pid")
			n=$(jq '.sent' "$TMP/alt-$mode-$who-$i.json")
			if [ "$who" = proxy ]; then
				pt=$((pt + c1 - c0)) pn=$((pn + n))
			else
				gt=$((gt + c1 - c0)) gn=$((gn + n))
			fi
		done
	done
	ALT_ROWS+=("$(awk -v mode="$mode" -v rate="$rate" -v k="$ALT_SLICES" -v d="$ALT_SLICE" -v pt="$pt" -v gt="$gt" -v pn="$pn" -v gn="$gn" -v tck="$CLK_TCK" 'BEGIN {
		pcpu = pn > 0 ? pt * 1e6 / tck / pn : 0
		gcpu = gn > 0 ? gt * 1e6 / tck / gn : 0
		printf "| %s | %d | %d × %s each | %d / %d | %.0f / %.0f | **%s** |", mode, rate, k, d, pn, gn, pcpu, gcpu,
			(pcpu > 0 ? sprintf("%.2f×", gcpu / pcpu) : "n/a")
	}')")
}
if [ "$ALT_SLICES" -gt 0 ]; then
	for rate in $ALT_RATES; do
		log "alternating slices at $rate req/s (json): $ALT_SLICES × $ALT_SLICE each…"
		alt_ratio json "$rate"
	done
	if [ -n "$STREAM_RATE" ]; then
		log "alternating slices at $STREAM_RATE req/s (stream): $ALT_SLICES × $ALT_SLICE each…"
		alt_ratio stream "$STREAM_RATE"
	fi
fi

sleep "$SETTLE"
IDLE_AFTER=$(rss_kib "$GW_PID")
PEAK=$(hwm_kib "$GW_PID")

# --- concurrent slow streams (memory per open stream) ---------------------------
# Last, because it changes the fake's stream shape for the rest of the run:
# every answer becomes SLOW_CHUNKS content events SLOW_DRIP_MS apart. loadgen
# opens SLOW_STREAMS streams over SLOW_RAMP seconds (open loop), so all of them
# are open at once for most of each stream's life; the proxy's run and then
# the gateway's, sampling the process's RSS, open descriptors and OS threads,
# the fake's count of answers in flight (the streams really open at once) and,
# for the gateway, its goroutines (omniroute_goroutines), every 0.2 s. The
# gateway's default limits admit them (maxInFlight 2048, no per-connection
# concurrency cap); nothing is configured for this phase.
SLOW_ROWS=()
# goroutines METRICS_URL: the gateway's omniroute_goroutines gauge.
goroutines() {
	curl --noproxy '*' -sS -H "Authorization: Bearer $TOKEN" "$1" | awk '$1 == "omniroute_goroutines" {print $2; exit}'
}
# slow_streams NAME URL KEY MODEL PID [METRICS_URL]: one slow-stream run
# against PID; with METRICS_URL (the gateway's /metrics) its goroutines too.
slow_streams() {
	local name=$1 url=$2 key=$3 model=$4 pid=$5 metrics=${6:-}
	local rate timeout lg rss fds thr inflight base_rss base_fds gor base_gor=""
	local max_rss=0 max_fds=0 max_thr=0 max_inflight=0 max_gor=0
	rate=$(awk -v n="$SLOW_STREAMS" -v r="$SLOW_RAMP" 'BEGIN {printf "%g", n / r}')
	timeout=$(((SLOW_CHUNKS + 1) * SLOW_DRIP_MS / 1000 + 60))
	base_rss=$(rss_kib "$pid")
	base_fds=$(ls "/proc/$pid/fd" | wc -l)
	[ -n "$metrics" ] && base_gor=$(goroutines "$metrics")
	"${AUX_PIN[@]}" "$TMP/loadgen" -url "$url" -key "$key" -model "$model" -rate "$rate" -duration "${SLOW_RAMP}s" \
		-stream -timeout "${timeout}s" -max-inflight "$((SLOW_STREAMS * 2))" -json >"$TMP/$name.json" 2>"$TMP/$name.err" &
	lg=$!
	PIDS+=("$lg")
	while kill -0 "$lg" 2>/dev/null; do
		rss=$(rss_kib "$pid")
		fds=$(ls "/proc/$pid/fd" | wc -l)
		thr=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
		inflight=$(curl --noproxy '*' -sS "$FAKE_URL/_fake/stats" | jq '.inFlight')
		[ "$rss" -gt "$max_rss" ] && max_rss=$rss
		[ "$fds" -gt "$max_fds" ] && max_fds=$fds
		[ "$thr" -gt "$max_thr" ] && max_thr=$thr
		[ "$inflight" -gt "$max_inflight" ] && max_inflight=$inflight
		if [ -n "$metrics" ]; then
			gor=$(goroutines "$metrics")
			[ "$gor" -gt "$max_gor" ] && max_gor=$gor
		fi
		sleep 0.2
	done
	reap_loadgen "$name" "$lg"
	sleep "$SETTLE"
	local after ok errs p50
	after=$(rss_kib "$pid")
	ok=$(jq '.ok' "$TMP/$name.json")
	errs=$(jq '[.errors[]] | add // 0' "$TMP/$name.json")
	p50=$(jq '.latency_us.p50' "$TMP/$name.json")
	SLOW_ROWS+=("$(awk -v who="$name" -v n="$SLOW_STREAMS" -v inf="$max_inflight" -v ok="$ok" -v errs="$errs" -v p50="$p50" \
		-v base="$base_rss" -v peak="$max_rss" -v after="$after" -v bfd="$base_fds" -v mfd="$max_fds" -v thr="$max_thr" \
		-v bgor="$base_gor" -v mgor="$max_gor" 'BEGIN {
		gors = bgor == "" ? "not visible" : sprintf("%d → %d (%.1f per stream)", bgor, mgor, (mgor - bgor) / n)
		printf "| %s | %d | %d | %d / %d | %.1f | %.1f | **%.1f** | %.1f | %.1f | %d → %d | %d | %s |",
			who, n, inf, ok, errs, p50 / 1e6, base / 1024, peak / 1024, after / 1024, (peak - base) / n, bfd, mfd, thr, gors
	}')")
	if [ -n "${BENCH_RESULTS_DIR:-}" ]; then
		cp "$TMP/$name.json" "$BENCH_RESULTS_DIR/slow-$name.json"
	fi
}

if [ "$SLOW_STREAMS" -gt 0 ]; then
	log "slow streams: $SLOW_STREAMS at once, $SLOW_CHUNKS events ${SLOW_DRIP_MS} ms apart…"
	curl --noproxy '*' -fsS -X POST "$FAKE_URL/_fake/config" -d "{\"streamChunks\":$SLOW_CHUNKS}" >/dev/null
	curl --noproxy '*' -fsS -X POST "$FAKE_URL/_fake/faults" \
		-d "{\"key\":\"*\",\"fault\":{\"mode\":\"slow_drip\",\"dripMs\":$SLOW_DRIP_MS}}" >/dev/null
	slow_streams proxy "$PROXY_URL/v1/chat/completions" "$UPSTREAM_KEY" "$MODEL_DIRECT" "$PROXY_PID"
	slow_streams gateway "$GW_BASE/v1/chat/completions" "$CLIENT_KEY" "$MODEL_GATEWAY" "$GW_PID" "$GW_BASE/metrics"
fi

# --- report ------------------------------------------------------------------
# median_ratio MODE: the median of the rows' CPU gateway ÷ proxy ratios of
# MODE (json or stream) and how many rows it is of; one row moves by ±0.1–0.2×
# on a shared machine, the median of many rounds much less.
median_ratio() {
	printf '%s\n' "${ROWS[@]}" | awk -F'|' -v want="$1" '{
		m = $3; gsub(/ /, "", m); r = $11; gsub(/[ *]/, "", r); sub(/×$/, "", r)
		if (m == want && r != "n/a") print r
	}' | sort -n | awk '{a[NR] = $1} END {
		if (NR == 0) { printf "none"; exit }
		printf "%.2f× (%d rows)", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), NR
	}'
}

# alt_report: the alternating phase's table, if it ran.
alt_report() {
	[ "${#ALT_ROWS[@]}" -gt 0 ] || return 0
	printf '\n### CPU gateway ÷ proxy from alternating slices\n\n'
	printf 'The proxy and the gateway take turns (ABBA), each slice a fresh loadgen run; CPU summed over the slices, divided by the requests summed.\n\n'
	printf '| mode | rate (req/s) | slices per process | requests proxy / gateway | CPU µs per request proxy / gateway | CPU gateway ÷ proxy |\n'
	printf '|---|---:|---|---:|---:|---:|\n'
	printf '%s\n' "${ALT_ROWS[@]}"
}

cat <<EOF

## OmniRoute gateway benchmark

- machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(go env GOVERSION), gateway $VERSION
- pinned with taskset: $PINNED
- each run: $WARMUP warmup + $DURATION measured at a fixed rate (open loop), latency from the scheduled send time
- stream latency is time to last byte

| rate (req/s) | mode | round | achieved (req/s) | direct p50 / p99 (ms) | proxy p50 / p99 (ms) | gateway p50 / p99 (ms) | added p50 proxy / gateway (ms) | CPU µs per request proxy / gateway | CPU gateway ÷ proxy | RSS under load proxy / gateway (MiB) | errors direct / proxy / gateway |
|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
printf '%s\n' "${ROWS[@]}"
cat <<EOF

- median CPU gateway ÷ proxy: JSON $(median_ratio json), stream $(median_ratio stream)
- gateway idle RSS (startup + 2 s): $(mib "$IDLE_RSS") MiB (bare proxy: $(mib "$PROXY_IDLE_RSS") MiB)
- gateway RSS idle again after the runs (+$SETTLE s): $(mib "$IDLE_AFTER") MiB; peak RSS (VmHWM): $(mib "$PEAK") MiB
- CPU: utime+stime from /proc/PID/stat (CLK_TCK=$CLK_TCK) of the gateway or the proxy over its run, divided by the requests sent in it (warmup included); a stream row's CPU is per stream
- the bare proxy is httputil.ReverseProxy (tests/bench/bareproxy) on the gateway's core; "added" is the p50 over the direct run at the same rate
EOF
alt_report
if [ "${#SLOW_ROWS[@]}" -gt 0 ]; then
	cat <<EOF

### $SLOW_STREAMS concurrent slow streams ($SLOW_CHUNKS events ${SLOW_DRIP_MS} ms apart, opened over $SLOW_RAMP s)

| process | streams | most open at once (fake's in-flight) | ok / errors | p50 stream length (s) | RSS before (MiB) | peak RSS (MiB) | RSS after (+$SETTLE s, MiB) | KiB per stream (peak − before) | open fds before → peak | OS threads (peak) | goroutines before → peak |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
	printf '%s\n' "${SLOW_ROWS[@]}"
	cat <<EOF

- peak RSS is the highest VmRSS sampled every 0.2 s during the run; each stream holds two sockets in the process (client and upstream)
EOF
fi

if [ "$GO_BENCH" != 0 ]; then
	log "in-process Go benchmarks (allocations per request)…"
	go test -run='^$' -bench='Benchmark(Direct|Proxy|Gateway)/(json|stream)$' -benchtime=2000x -benchmem ./tests/bench/ >"$TMP/gobench.txt" 2>&1 ||
		{ cat "$TMP/gobench.txt" >&2; exit 1; }
	cat <<EOF

### Allocations per request (in-process, client and fake upstream included)

| benchmark | cpu-µs/op | B/op | allocs/op | allocs added over direct |
|---|---:|---:|---:|---:|
EOF
	awk '/^Benchmark(Direct|Proxy|Gateway)\// {
		name = $1; sub(/-[0-9]+$/, "", name)
		for (i = 2; i <= NF; i++) {
			if ($i == "cpu-µs/op") cpu = $(i-1)
			if ($i == "B/op") bytes = $(i-1)
			if ($i == "allocs/op") allocs = $(i-1)
		}
		split(name, parts, "/"); mode = parts[2]
		if (name ~ /^BenchmarkDirect/) direct[mode] = allocs
		n++; names[n] = name; c[n] = cpu; b[n] = bytes; a[n] = allocs; m[n] = mode
	} END {
		for (i = 1; i <= n; i++)
			printf "| %s | %s | %s | %s | %s |\n", names[i], c[i], b[i], a[i], (m[i] in direct) ? a[i] - direct[m[i]] : "n/a"
	}' "$TMP/gobench.txt"
fi
