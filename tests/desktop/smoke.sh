#!/usr/bin/env bash
# Desktop smoke test: the real desktop build under Xvfb with a D-Bus session.
# Starts the app, screenshots the window, checks that the tray registered, that
# a health change swaps the tray icon, that a second launch hands over to the
# first (single instance), and that SIGTERM quits cleanly.
set -euo pipefail
BIN=${1:?usage: smoke.sh path/to/omniroute-desktop}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ART="$ROOT/tests/e2e/artifacts"
mkdir -p "$ART"
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${DBUS_SESSION_BUS_PID:-}" ] && kill "$DBUS_SESSION_BUS_PID" 2>/dev/null || true
  [ -n "${KEEP_SMOKE_LOG:-}" ] && cp "$TMP/desktop.log" "$KEEP_SMOKE_LOG"
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "desktop smoke: FAIL: $*"; echo "--- app stderr"; tail -40 "$TMP/err.log" || true; exit 1; }

for n in $(seq 90 120); do [ -e /tmp/.X11-unix/X$n ] || { DISPLAY_NUM=$n; break; }; done
Xvfb ":$DISPLAY_NUM" -screen 0 1280x900x24 -nolisten tcp >"$TMP/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
eval "$(dbus-launch --sh-syntax)"
export DBUS_SESSION_BUS_ADDRESS
# The desktop's side of the bus: a notification server and a StatusNotifier
# watcher with a host (tests/cmd/fakedesktop), so the tray exports itself as a
# StatusNotifierItem and its notifications have somewhere to go; both are read
# back below.
(cd "$ROOT" && go build -o "$TMP/fakedesktop" ./tests/cmd/fakedesktop)
"$TMP/fakedesktop" >"$TMP/desktop.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q 'fakedesktop ready' "$TMP/desktop.log" && break; sleep 0.1; done
grep -q 'fakedesktop ready' "$TMP/desktop.log" || { cat "$TMP/desktop.log"; echo "desktop smoke: FAIL: fakedesktop did not start"; exit 1; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export OMNIROUTE_DATA_DIR="$TMP/data" OMNIROUTE_PORT="$PORT" XDG_CONFIG_HOME="$TMP/config" HOME="$TMP/home"
mkdir -p "$HOME"
"$BIN" >"$TMP/out.log" 2>"$TMP/err.log" &
APP=$!
PIDS+=($APP)
BASE="http://127.0.0.1:$PORT"

wait_for() { # wait_for <seconds> <command...>
  local t=$1; shift
  for _ in $(seq $((t * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
wait_for 60 curl -fsS "$BASE/api/monitoring/health" || fail "gateway did not answer"
wait_for 60 grep -q 'window ready' "$TMP/err.log" || fail "window did not start"
wait_for 30 grep -q 'tray ready' "$TMP/err.log" || fail "tray did not register"
echo "desktop smoke: gateway, window and tray are up"
# Read over D-Bus as a desktop's panel reads it: the item, its title, the icon
# it shows (the setup icon's pixels), the icon's description for screen
# readers, the tooltip (headline / status line) and the menu's status line.
sha() { "$TMP/fakedesktop" -argb-sha256 "$ROOT/build/icons/tray-$1.png"; }
wait_for 30 grep -q "^sni: title=\"OmniRoute\" status=\"Active\" icon-sha256=$(sha setup) desc=\"OmniRoute — set up needed\" tooltip=\"OmniRoute — set up needed / Set up: add a provider connection\" menu=\"Set up: add a provider connection\"" "$TMP/desktop.log" \
  || { cat "$TMP/desktop.log"; fail "the tray's StatusNotifierItem does not show the setup icon, description, tooltip and status line"; }
echo "desktop smoke: the tray's StatusNotifierItem shows the setup icon, its description, the tooltip and the status line"

wait_for 30 sh -c "xwininfo -root -tree | grep -q '\"OmniRoute\"'" || fail "no OmniRoute window on the display"
# The menu entry's StartupWMClass must be the window's class, or desktops
# show the running app as a second, unnamed icon.
WID=$(xwininfo -root -tree | grep '"OmniRoute"' | head -n 1 | awk '{print $1}')
CLASS=$(xprop -id "$WID" WM_CLASS)
WANT=$(sed -n 's/^StartupWMClass=//p' "$ROOT/build/linux/omniroute.desktop")
echo "$CLASS" | grep -q "\"$WANT\"" || fail "window class ($CLASS) is not the menu entry's StartupWMClass=$WANT"
echo "desktop smoke: window class $CLASS matches the menu entry"
sleep 3 # let WebKit paint the dashboard
import -window root "$ART/desktop-window.png"
SD=$(convert "$ART/desktop-window.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
python3 -c "import sys; sys.exit(0 if float('$SD') > 0.02 else 1)" || fail "screenshot is blank (stddev $SD)"
echo "desktop smoke: window screenshot $ART/desktop-window.png (stddev $SD)"

# A connection to a closed port fails with transport errors; a streak of them
# (failover.failureStreak, 3) cools it down, and health leaves "healthy": the
# tray icon must follow.
TOKEN=$(sed -n 's/.*#token=\(omt_[A-Za-z0-9_-]*\).*/\1/p' "$TMP/out.log")
KEY=$(sed -n 's/.*API key: *\(sk-omni-[A-Za-z0-9_-]*\).*/\1/p' "$TMP/out.log")
[ -n "$TOKEN" ] && [ -n "$KEY" ] || fail "banner did not show the token and key"
curl -fsS "$BASE/api/providers" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"provider":"openai-compatible","name":"dead","apiKey":"k","baseUrl":"http://127.0.0.1:9/v1","models":["m"]}' >/dev/null
for _ in 1 2 3 4; do
  curl -sS "$BASE/v1/chat/completions" -H "Authorization: Bearer $KEY" \
    -d '{"model":"openai-compatible/m","messages":[{"role":"user","content":"hi"}]}' >/dev/null
done
wait_for 15 grep -Eq 'tray icon.*health=(degraded|unhealthy)' "$TMP/err.log" || fail "tray icon did not follow health"
grep -Eq "tray icon.*status=\"?0 of 1 connections serving" "$TMP/err.log" || fail "tray status line did not follow health"
wait_for 15 grep -Eq "^sni: .*icon-sha256=($(sha degraded)|$(sha unhealthy)) desc=\"OmniRoute — (degraded|unhealthy)\" tooltip=\"OmniRoute — (degraded|unhealthy) / 0 of 1 connections serving.*menu=\"0 of 1 connections serving" "$TMP/desktop.log" \
  || { cat "$TMP/desktop.log"; fail "the StatusNotifierItem's icon and status line did not follow health"; }
echo "desktop smoke: tray icon follows health (log and StatusNotifierItem)"
# The failing connection is announced to the notification server.
wait_for 15 grep -q '^notify: OmniRoute: dead' "$TMP/desktop.log" \
  || { cat "$TMP/desktop.log"; fail "no notification for the failing connection"; }
echo "desktop smoke: the outage was announced over org.freedesktop.Notifications: $(grep -m1 '^notify: OmniRoute: dead' "$TMP/desktop.log")"

# A click in the panel's menu reaches the app: Pause Gateway pauses it (clients
# get 503) and the item says so; Resume Gateway undoes it.
"$TMP/fakedesktop" -click "Pause Gateway" || fail "could not click Pause Gateway over D-Bus"
wait_for 10 sh -c "curl -fsS -H 'Authorization: Bearer $TOKEN' '$BASE/api/monitoring/health' | grep -q '\"status\":\"paused\"'" || fail "Pause Gateway from the menu did not pause"
wait_for 10 grep -q "^sni: .*desc=\"OmniRoute — paused\" tooltip=\"OmniRoute — paused / Paused" "$TMP/desktop.log" || fail "the item does not say paused"
wait_for 10 sh -c "'$TMP/fakedesktop' -click 'Resume Gateway'" || fail "the menu does not offer Resume Gateway"
wait_for 10 sh -c "! curl -fsS -H 'Authorization: Bearer $TOKEN' '$BASE/api/monitoring/health' | grep -q '\"status\":\"paused\"'" || fail "Resume Gateway did not resume"
echo "desktop smoke: Pause and Resume Gateway clicked in the menu over D-Bus"

# Single instance: a second launch hands over to the first and exits.
"$BIN" >"$TMP/second.log" 2>&1 &
SECOND=$!
PIDS+=($SECOND)
wait_for 20 sh -c "! kill -0 $SECOND" || fail "a second instance kept running"
kill -0 "$APP" || fail "the first instance died when a second was launched"
echo "desktop smoke: single instance"

kill -TERM "$APP"
wait_for 15 sh -c "! kill -0 $APP" || fail "did not quit on SIGTERM"
wait "$APP" && RC=0 || RC=$?
[ "$RC" = 0 ] || fail "exit code $RC after SIGTERM"
echo "desktop smoke: 8 passed, 0 failed"
