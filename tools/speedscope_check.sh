#!/usr/bin/env bash
# Loads a trace into speedscope (a real viewer, from npm) in headless
# Chromium and counts the nesting errors speedscope reports while importing
# it (docs/statistics.md "Checking and viewing").
#
#   tools/speedscope_check.sh TRACE.json
#
# Needs chromium (apt-get install chromium) and npm; speedscope is installed
# once into $SPEEDSCOPE_DIR (default ~/.cache/npusim-speedscope). The page is
# served from 127.0.0.1 by python3's http.server, since Chromium does not
# fetch file:// URLs. Exit 0 when the trace imported with no nesting errors,
# 1 when speedscope reported some (the first few are printed), 2 when a tool
# is missing or the trace did not import.
set -euo pipefail
trace=${1:?usage: tools/speedscope_check.sh TRACE.json}
[ -r "$trace" ] || { echo "$trace: cannot read" >&2; exit 2; }
command -v chromium >/dev/null || { echo "speedscope_check: needs chromium (apt-get install chromium)" >&2; exit 2; }
command -v npm >/dev/null || { echo "speedscope_check: needs npm (apt-get install npm)" >&2; exit 2; }
dir=${SPEEDSCOPE_DIR:-$HOME/.cache/npusim-speedscope}
version=1.25.0
app=$dir/node_modules/speedscope/dist/release
if [ ! -f "$app/index.html" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-save --silent "speedscope@$version" >/dev/null)
fi
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cp -r "$app/." "$work/"
cp "$trace" "$work/trace.json"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
server=$!
sleep 1
url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/trace.json"
timeout 300 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
  --virtual-time-budget=120000 --dump-dom "$url" >"$work/dom.html" 2>"$work/console.txt" || true
if ! grep -q "Importing as Trace Event Format" "$work/console.txt"; then
  echo "$trace: speedscope did not import the trace" >&2
  exit 2
fi
errors=$(grep -c "Tried to end\|was still open at end" "$work/console.txt" || true)
echo "$trace: speedscope $version imported it; nesting errors: $errors"
if [ "$errors" -gt 0 ]; then
  grep -o '"ts=[^"]*\|"Tried to end[^"]*\|"Frame [^"]*' "$work/console.txt" | head -5 >&2 || true
  exit 1
fi
