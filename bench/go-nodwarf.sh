#!/usr/bin/env bash
# bench/go-nodwarf.sh CPROF TAG: Debian's Go programs (no DWARF), each
# profiled by goroutine and compared with its own goroutine dump.  As root,
# with prometheus, restic, rclone, hugo, etcd-server, caddy,
# prometheus-alertmanager, containerd, influxdb, git-lfs and podman
# installed (a program that is not is left out).
# Steps, per program:
#   1. start it (servers: until they say they are ready) with GOTRACEBACK=all;
#   2. CPROF PID --go-system --threads --period 1s (a file a second);
#   3. after the second file, SIGSTOP it; after a file written while it was
#      stopped, SIGQUIT (caddy, which handles SIGQUIT itself: SIGABRT) and
#      SIGCONT: Go prints every goroutine and exits, the profiler ends;
#   4. print the summary's goroutine count, how many of the dump's goroutines
#      (but goroutine 0) the profile holds, how many of the dump's own
#      functions (the program's package prefix), and a few of them.
# Run it with the main branch's build and this one's (TAG: before, after).
CPROF=$(realpath "$1") TAG=$2
W=$(mktemp -d); cd "$W" || exit 1
wait_file() { for i in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
own_of() { case $1 in prometheus) echo 'github\.com/prometheus/';; restic) echo 'github\.com/restic/';;
	rclone) echo 'github\.com/rclone/';; hugo) echo 'github\.com/gohugoio/';; etcd) echo 'go\.etcd\.io/';;
	caddy) echo 'github\.com/caddyserver/';; alertmanager) echo 'github\.com/prometheus/';;
	containerd) echo 'github\.com/containerd/';; influxd) echo 'github\.com/influxdata/';;
	git-lfs) echo 'github\.com/git-lfs/';; podman) echo 'github\.com/containers/';; esac; }
run() {
	local name=$1 pid=$2 dump=$3 sig=${4:-QUIT} own; own=$(own_of "$name")
	"$CPROF" "$pid" --go-system --threads --period 1s -o "$name.%n.folded" 2>"$name.err" & local cp=$!
	wait_file "$name.1.folded"
	kill -STOP "$pid"; local n; n=$(ls $name.*.folded | wc -l); wait_file "$name.$((n + 1)).folded"
	kill -$sig "$pid"; kill -CONT "$pid"; wait $cp
	cat $name.*.folded > "$name.all"
	local summ; summ=$(grep -oE '[0-9]+ samples, [^,]*(, [0-9]+ goroutines on [0-9]+ threads)?' "$name.err" | tail -1)
	local g; g=$(grep -oE '[0-9]+ goroutines' "$name.err" | tail -1 | cut -d' ' -f1)
	grep -oE '\(goroutine [0-9]+\);' "$name.all" | grep -oE '[0-9]+' | sort -u > "$name.ids"
	grep -oE '^goroutine [0-9]+ \[' "$dump" | grep -oE '[0-9]+' | grep -vx 0 | sort -u > "$name.dumpids"
	local seen; seen=$(comm -12 "$name.dumpids" "$name.ids" | wc -l)
	grep -E '^[^[:space:]].*\)$' "$dump" | grep -vE '^(goroutine|created by) ' | sed -E 's/\([^()]*\)$//' | grep -E "^$own" | sort -u > "$name.dumpfuncs"
	cut -d';' -f2- "$name.all" | tr ';' '\n' | sed -E 's/ [0-9]+$//' | sort -u > "$name.funcs"
	local of; of=$(comm -12 "$name.dumpfuncs" "$name.funcs" | wc -l)
	local ownp; ownp=$(grep -cE "^$own" "$name.funcs")
	echo "$TAG $name | goroutines ${g:-none} | dump goroutines $(wc -l < $name.dumpids), seen $seen | dump's own functions $(wc -l < $name.dumpfuncs), seen $of | own functions in profile $ownp | $(grep -c 'no DWARF' $name.err) no-DWARF note"
	comm -12 "$name.dumpfuncs" "$name.funcs" | head -4 | sed "s/^/    $TAG $name own: /"
	grep -oE "^[^;]+ \\(goroutine [0-9]+\\)" "$name.all" | sort -u | sed -E "s/ \\(goroutine [0-9]+\\)//" | grep -E "^$own" | sort | uniq -c | sort -rn | head -3 | sed "s/^/    $TAG $name goroutine fn: /"
}
port=$((30000 + RANDOM % 10000))
printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: self\n    static_configs:\n      - targets: [\x27127.0.0.1:%s\x27]\n' $port > prom.yml
GOTRACEBACK=all prometheus --config.file=prom.yml --web.listen-address=127.0.0.1:$port --storage.tsdb.path=pd > prom.log 2>&1 & p=$!
for i in $(seq 200); do grep -q 'Server is ready' prom.log && break; sleep 0.1; done; run prometheus $p prom.log
export RESTIC_PASSWORD=x; restic init --repo repo -q >/dev/null 2>&1
GOTRACEBACK=all restic --repo repo backup /usr/share -q 2>restic.dump >/dev/null & p=$!; run restic $p restic.dump
GOTRACEBACK=all rclone --config /dev/null md5sum /usr/share 2>rclone.dump >/dev/null & p=$!; run rclone $p rclone.dump
mkdir -p site/content/posts site/layouts/_default; printf 'baseURL = "http://127.0.0.1/"\ntitle = "t"\n' > site/config.toml
printf '<html>{{ .Content }}</html>\n' > site/layouts/_default/single.html; printf '<html>{{ range .Pages }}{{ .Title }}{{ end }}</html>\n' > site/layouts/_default/list.html
for i in $(seq 50); do printf -- '---\ntitle: "p%d"\n---\nhi\n' $i > site/content/posts/p$i.md; done
GOTRACEBACK=all hugo server -s site -d pub --bind 127.0.0.1 --port $((port+1)) --disableLiveReload > hugo.dump 2>&1 & p=$!
for i in $(seq 300); do grep -q 'Web Server is available' hugo.dump && break; sleep 0.1; done; run hugo $p hugo.dump
GOTRACEBACK=all etcd --data-dir etcd.d --listen-client-urls http://127.0.0.1:$((port+2)) --advertise-client-urls http://127.0.0.1:$((port+2)) --listen-peer-urls http://127.0.0.1:$((port+3)) --initial-advertise-peer-urls http://127.0.0.1:$((port+3)) --initial-cluster default=http://127.0.0.1:$((port+3)) > etcd.dump 2>&1 & p=$!
for i in $(seq 300); do grep -q 'ready to serve client requests' etcd.dump && break; sleep 0.1; done; run etcd $p etcd.dump
GOTRACEBACK=all HOME=$W XDG_DATA_HOME=$W XDG_CONFIG_HOME=$W caddy file-server --listen 127.0.0.1:$((port+4)) --root $W > caddy.dump 2>&1 & p=$!
for i in $(seq 300); do grep -qi 'server running\|serving' caddy.dump && break; sleep 0.1; done; run caddy $p caddy.dump ABRT
# Servers that Debian ships too, each on its own ports and directories.
if command -v prometheus-alertmanager >/dev/null; then
	GOTRACEBACK=all prometheus-alertmanager --config.file=/etc/prometheus/alertmanager.yml --storage.path=am \
		--web.listen-address=127.0.0.1:$((port+5)) --cluster.listen-address= > am.dump 2>&1 & p=$!
	for i in $(seq 300); do grep -q 'Listening on' am.dump && break; sleep 0.1; done; run alertmanager $p am.dump
fi
if command -v containerd >/dev/null; then
	containerd config default | sed "s#^root = .*#root = \"$W/ctd/root\"#; s#^state = .*#state = \"$W/ctd/state\"#" > ctd.toml
	GOTRACEBACK=all containerd --config ctd.toml --address "$W/ctd.sock" > ctd.dump 2>&1 & p=$!
	for i in $(seq 300); do grep -q 'containerd successfully booted' ctd.dump && break; sleep 0.1; done; run containerd $p ctd.dump
fi
if command -v influxd >/dev/null; then
	influxd config 2>/dev/null | sed "s#/var/lib/influxdb#$W/influx#g; s#\"127.0.0.1:8088\"#\"127.0.0.1:$((port+6))\"#;
		s#\":8086\"#\"127.0.0.1:$((port+7))\"#; s#\":8082\"#\"127.0.0.1:$((port+8))\"#" > influx.toml
	GOTRACEBACK=all influxd run -config influx.toml > influx.dump 2>&1 & p=$!
	for i in $(seq 300); do grep -q 'Listening on HTTP' influx.dump && break; sleep 0.1; done; run influxd $p influx.dump
fi
if command -v git-lfs >/dev/null; then
	# no server: the long-running filter git starts, waiting for git's
	# handshake on its stdin (a FIFO held open)
	git init -q lfsrepo; mkfifo lfs.in; exec 8<>lfs.in
	(cd lfsrepo && GOTRACEBACK=all exec git-lfs filter-process) < lfs.in > /dev/null 2> lfs.dump & p=$!
	for i in $(seq 300); do [ "$(ls /proc/$p/task 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.1; done; run git-lfs $p lfs.dump
	exec 8>&-
fi
if command -v podman >/dev/null; then
	GOTRACEBACK=all podman --root "$W/pod/root" --runroot "$W/pod/run" system service --time=0 "unix://$W/pod.sock" \
		> /dev/null 2> pod.dump & p=$!
	for i in $(seq 300); do [ -S pod.sock ] && break; sleep 0.1; done; run podman $p pod.dump
fi
