#!/usr/bin/env bash
# The terminal: in an 80-column terminal (tmux) the live
# status line fits (79 columns at most: a line that wraps leaves a copy
# behind at every redraw) and is redrawn in place, one line however many
# seconds go by, then erased for the summary; in a 200-column terminal it
# has room for the whole hint, output path included.  Singular where the
# count is 1 ("1 thread", "1 process": `-- sleep`, a one-thread command).
#
# tmux: Debian's package "tmux", which contrib/install-deps.sh (make deps)
# installs; when it is missing the file is skipped with the reason.  Each
# session runs on a server of its own (-S socket in $TMP), not the user's.
. "$(dirname "$0")/lib.sh"

if ! command -v tmux >/dev/null; then
	skip "status line in tmux" "tmux is not installed (Debian package tmux: make deps installs it)"
	done_testing
fi

SOCK=$TMP/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
cleanup_tmux() { tm kill-server 2>/dev/null; }
trap 'cleanup_tmux; cleanup' EXIT

# pane SESSION [-J]: what the pane shows (-J: wrapped lines joined)
pane() { tm capture-pane -p "${@:2}" -t "$1" 2>/dev/null; }
# pane_has SESSION ERE: the pane shows a line matching ERE; what it showed
# then is kept in $TMP/pane.SESSION (a busy machine can take longer to
# look again than the status line lasts).
pane_has() { pane "$1" >"$TMP/pane.$1"; grep -qE "$2" "$TMP/pane.$1"; }
STATUS_RE='^cprof-attach: [0-9]+ s, [0-9]+ samples?, [0-9]+ threads?, [0-9.]+ Hz'

# start SESSION COLUMNS COMMAND...: COMMAND in a new detached session of
# COLUMNS x 24; when it ends the pane says "EXITED <status>" and stays.
start() {
	local name=$1 cols=$2 cmd
	shift 2
	cmd="$(printf '%q ' "$@"); echo EXITED \$?; sleep 120"
	tm new-session -d -s "$name" -x "$cols" -y 24 "$cmd"
}

n80=$TMP/t80.folded
start narrow 80 "$CPROF" -o "$n80" -- sleep 3.3
if start_target cpuidle; then
	pid=$TARGET_PID
	# A long output path: it fits in 200 columns, not in 80.
	w200=$TMP/a-rather-long-directory-name/wide-terminal-profile.folded
	mkdir -p "$(dirname "$w200")"
	# Longer than the narrow run: its checks come after that one's.
	start wide 200 "$CPROF" "$pid" --duration 6 -o "$w200"
fi

# --- during the run ------------------------------------------------------------
check "80 columns: the status line shows 2 s (two redraws)" \
	wait_until 10 pane_has narrow '^cprof-attach: 2 s, '
p=$(cat "$TMP/pane.narrow")
status=$(grep -E '^cprof-attach:' <<<"$p")
n=$(grep -c . <<<"$status")
DETAIL="$(tr '\n' '|' <<<"$p" | head -c 400)" \
	check "80 columns: one status line (redrawn in place, not a new line a second)" "[ '$n' = 1 ]"
DETAIL="'$status' (${#status} columns)" \
	check "80 columns: the status line fits in 79 columns and says Ctrl-C stops" \
	"[ ${#status} -le 79 ] && grep -qE '$STATUS_RE \\(Ctrl-C to stop\\)\$' <<<\"\$status\""
# `sleep` prints nothing: a wrapped status would be a second line here.
DETAIL="$(tr '\n' '|' <<<"$p" | head -c 400)" \
	check "80 columns: the status line does not wrap (the only line in the pane)" \
	"[ \$(grep -c . <<<\"\$p\") = 1 ]"
DETAIL="'$status'" check "80 columns: a one-thread command's status says '1 thread'" \
	grep -qF ', 1 thread, ' <<<"$status"

if [ -n "${pid:-}" ]; then
	# (its "2 s" can be over by the time the narrow checks are done, on a
	# busy machine: any redraw from 2 s on)
	check "200 columns: the status line shows 2 s or more (redrawn)" \
		wait_until 10 pane_has wide '^cprof-attach: ([2-9]|[1-9][0-9]+) s, '
	p=$(cat "$TMP/pane.wide")
	status=$(grep -E '^cprof-attach:' <<<"$p")
	DETAIL="$(tr '\n' '|' <<<"$p" | head -c 400)" \
		check "200 columns: one status line, with the whole hint" \
		"[ \$(grep -c . <<<\"\$status\") = 1 ] && grep -qxF ' (Ctrl-C to stop and write $w200)' <<<\"\${status#*Hz}\""
fi

# --- at the end -------------------------------------------------------------------
for s in narrow ${pid:+wide}; do
	check "$s: the profiler exits 0" wait_until 15 pane_has "$s" '^EXITED 0$'
	p=$(pane "$s" -J)
	DETAIL="$(tr '\n' '|' <<<"$p" | head -c 400)" \
		check "$s: the status line is gone, the summary's two lines are left" \
		"! grep -qE '$STATUS_RE' <<<\"\$p\" && [ \$(grep -cE '$SUMMARY_RE' <<<\"\$p\") = 2 ]"
	printf '%s\n' "$p" >"$TMP/$s.err"
done
DETAIL="$(summary "$TMP/narrow.err")" \
	check "-- sleep: the summary says '1 thread, 1 process'" \
	"grep -qE '^cprof-attach: [0-9]+ samples, 1 thread, 1 process, ' '$TMP/narrow.err'"
check "-- sleep: profile written" "[ -s '$n80' ]"
for s in narrow ${pid:+wide}; do
	bad=$(grep -oE '(^|[^0-9])1 (samples|threads|processes|missed ticks)' "$TMP/$s.err")
	DETAIL="$bad" check "$s: no '1 threads' and the like" "[ -z '$bad' ]"
done
[ -n "${pid:-}" ] && stop_target "$pid"

done_testing
