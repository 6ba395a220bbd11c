#!/usr/bin/env bash
# make demo: starts the bundled demo service, profiles it for 3 seconds into
# demo.pprof (and, from the same kind of run, demo.svg, a flame graph, and
# demo.folded), prints the top functions, and stops the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

ready=$(mktemp -u /tmp/cprof-demo.XXXXXX)
build/demo "$ready" &
demo=$!
trap 'kill $demo 2>/dev/null || true; rm -f "$ready"' EXIT
for _ in $(seq 100); do [ -s "$ready" ] && break; sleep 0.05; done
[ -s "$ready" ] || { echo "demo: the demo program did not start" >&2; exit 1; }

./cprof-attach "$demo" --duration 3 -o demo.pprof
./cprof-attach "$demo" --duration 3 -o demo.svg
./cprof-attach "$demo" --duration 3 --threads -o demo.folded

echo
echo "Top of the wall-clock profile (go tool pprof -top demo.pprof):"
go=/usr/lib/go-1.19/bin/go
if [ -x "$go" ]; then
	"$go" tool pprof -top -nodecount=12 demo.pprof 2>/dev/null | sed -n '1,20p'
fi
echo
echo "Wrote demo.pprof (go tool pprof -http :8080 demo.pprof), demo.svg (open in a"
echo "browser: hover, click to zoom, Ctrl-F to search) and demo.folded (flamegraph.pl input)."
