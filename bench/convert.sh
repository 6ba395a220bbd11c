#!/usr/bin/env bash
# bench/convert.sh: what --convert costs on a large folded file, per format.
#
#   bash bench/convert.sh                 # 1,000,000 unique stacks (~750 MB of
#                                         # folded text in /tmp), REPS=3
#   STACKS=100000 bash bench/convert.sh   # fewer
#   BASELINE=/old/cprof-attach bash bench/convert.sh   # the same runs with
#                                         # another build, in turn with ours
#   SORTED=1 bash bench/convert.sh        # the file sorted, as folded files
#                                         # written by tools usually are
#
# The input is bench/bigfolded.c's (depths 10-40, 3000 function names, 8
# thread roots, stacks sharing prefixes).  Each repetition converts it to
# each format (folded, pprof, svg, speedscope), ours then BASELINE's; every
# figure is the median over repetitions of the wall time and of the peak
# RSS (/usr/bin/time).  On a shared machine compare the two builds' figures
# from one call, never absolute times from different calls.
set -euo pipefail
export LC_ALL=C

STACKS=${STACKS:-1000000}
REPS=${REPS:-3}
SORTED=${SORTED:-0}
BASELINE=${BASELINE:-}
CC=${CC:-cc}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CPROF=${CPROF:-$ROOT/cprof-attach}
TMP=$(mktemp -d /tmp/cprof-convert.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

die() { echo "bench/convert: $*" >&2; exit 1; }
[ -x "$CPROF" ] || die "$CPROF not built (make)"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
$CC -O2 -Wall -Wextra -o "$TMP/bigfolded" "$ROOT/bench/bigfolded.c" || die "cannot build bench/bigfolded.c"
"$TMP/bigfolded" "$STACKS" >"$TMP/in.folded"
if [ "$SORTED" = 1 ]; then
	sort -S 256M -T "$TMP" -o "$TMP/in.folded" "$TMP/in.folded"
fi
echo "input: $STACKS unique stacks, $(($(stat -c %s "$TMP/in.folded") / 1048576)) MiB$([ "$SORTED" = 1 ] && echo ', sorted')"

builds=(ours)
[ -n "$BASELINE" ] && builds+=(base)
for ((rep = 1; rep <= REPS; rep++)); do
	for ext in folded pprof svg json; do
		for b in "${builds[@]}"; do
			bin=$CPROF
			[ "$b" = base ] && bin=$BASELINE
			/usr/bin/time -f "%e %M" -o "$TMP/time" "$bin" --convert "$TMP/in.folded" \
				-o "$TMP/out.$ext" 2>"$TMP/err" || die "$b, $ext: $(cat "$TMP/err")"
			echo "$b $ext $(cat "$TMP/time")" >>"$TMP/data"
			rm -f "$TMP/out.$ext"
		done
	done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-10s %-6s %10s %12s\n' format build "wall s" "peak MiB"
for ext in folded pprof svg json; do
	for b in "${builds[@]}"; do
		wall=$(awk -v b="$b" -v e="$ext" '$1 == b && $2 == e { print $3 }' "$TMP/data" | median)
		rss=$(awk -v b="$b" -v e="$ext" '$1 == b && $2 == e { print $4 / 1024 }' "$TMP/data" | median)
		printf '%-10s %-6s %10.2f %12.0f\n' "$([ $ext = json ] && echo speedscope || echo $ext)" "$b" "$wall" "$rss"
	done
done
