#!/usr/bin/env bash
# Installs the Debian 12 packages cprof-attach needs.
#     contrib/install-deps.sh [build|all]
# build: what it builds with (make, make demo); all (the default): that and
# everything a test uses (make deps, make check, .ci/run), so that no test
# installs anything in its own time.  As root: apt-get installs what is
# missing, with no service started (policy-rc.d).  Otherwise: names the
# missing packages and exits 1.
set -euo pipefail

group=${1:-all}
case $group in
build | all) ;;
*) echo "install-deps.sh: unknown group '$group' (build or all)" >&2; exit 2 ;;
esac

build=(
	gcc g++ make pkg-config            # build
	libunwind-dev libdw-dev libelf-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libjansson-dev
	libseccomp-dev                     # system call names (--dump, labels)
	libiberty-dev                      # demangling of C++ and Rust names
	libmicrohttpd-dev                  # --listen: the HTTP server
	libcurl4-openssl-dev               # --push: the HTTP client
	golang-1.19-go                     # go tool pprof: the demo's top, the tests' reader
)
tests=(
	elfutils                           # eu-stack: reference stacks
	strace util-linux procps           # a second tracer, setpriv, pgrep
	gawk mawk                          # the awk pass runs under both (tests/run.sh)
	python3.11-dev python3-numpy gunicorn curl  # t_python: CPython's headers, numpy, a WSGI server
	sqlite3 gzip nginx wrk             # t_programs: programs no one here wrote
	prometheus restic rclone hugo      # t_goshipped (and t_serve: a real scraper)
	redis-server                       # t_always: a service that restarts
	postgresql postgresql-contrib      # t_postgres
	debuginfod                         # t_debuginfod: a real server
	libc6-dbg                          # t_names, t_programs: Debian's debug files
	chromium                           # t_flamegraph, t_hostile: the svg in a browser
	bash-completion                    # t_install: completion as bash loads it
	musl-tools                         # t_static: musl-gcc
	tmux                               # t_terminal: the status line
	valgrind                           # t_valgrind
	ruby                               # t_bigframe: threads with VM stacks on their native stacks
	uwsgi-core uwsgi-plugin-python3    # t_python: Python embedded, workers forked
)
packages=("${build[@]}")
[ "$group" = all ] && packages+=("${tests[@]}")

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "cprof-attach: missing Debian packages: ${missing[*]}" >&2
	echo "cprof-attach: install them with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# No service may start while we install (nginx would take port 80, postgres
# and redis their ports): invoke-rc.d asks policy-rc.d, 101 is "no".
made_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	made_policy=1
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ "$made_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d
trap - EXIT
