#!/usr/bin/env bash
# Installs the Debian 12 packages cprof-attach needs.
#     contrib/install-deps.sh [build|all]
# build: what it builds with (make, make demo); all (the default): that and
# everything a test uses (make deps, make check, .ci/run), so that no test
# installs anything in its own time.  As root: apt-get installs what is
# missing, with no service started (policy-rc.d).  Otherwise: names the
# missing packages and exits 1.
# all also fetches Go programs built by other Go releases than Debian's
# 1.19 (tests/t_goversions.sh): release binaries that npm packages carry
# (esbuild, lefthook), one per Go minor version, into GO_VERSIONS_DIR
# (default /var/cache/cprof-attach/go-versions), each as NAME-VERSION; npm
# checks each tarball against the registry's integrity hash.  What is there
# already is kept; nothing is printed unless something is fetched.
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
	php8.2-cli php8.2-fpm php8.2-dev libfcgi-bin  # t_php: PHP 8.2, its FastCGI server, its headers (nginx: below)
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
	binutils                           # t_ruby: nm finds ruby_current_vm_ptr for tests/bin/rbdump
	puma                               # t_ruby: a Rack app under a real Ruby server
	openjdk-17-jdk-headless            # t_jvm: HotSpot, javac, jcmd (the reference stacks)
	uwsgi-core uwsgi-plugin-python3    # t_python: Python embedded, workers forked
	php8.2-cli php8.2-opcache          # t_jitgrow: opcache's JIT code, named by its perf map
	erlang-base                        # t_jitgrow: BEAM's JIT (+JPperf), frame chains through it
)
# npm fetches t_goversions' Go programs; Debian's package only where no npm
# is (a nodejs from elsewhere brings its own, which Debian's would conflict with)
command -v npm >/dev/null || tests+=(npm)
packages=("${build[@]}")
[ "$group" = all ] && packages+=("${tests[@]}")

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

# The Go programs of other Go releases (tests/t_goversions.sh): npm
# package, its version, the binary in the tarball, and the Go it was
# built with (as its own build info or runtime.buildVersion says).
go_bins=(
	"esbuild-linux-64 0.11.23 package/bin/esbuild"        # go1.16.3
	"esbuild-linux-64 0.14.10 package/bin/esbuild"        # go1.17.5
	"esbuild-linux-64 0.14.39 package/bin/esbuild"        # go1.18.1
	"@esbuild/linux-x64 0.19.12 package/bin/esbuild"      # go1.20.12
	"lefthook-linux-x64 1.6.10 package/bin/lefthook"      # go1.21.9
	"@esbuild/linux-x64 0.23.1 package/bin/esbuild"       # go1.22.5
	"@esbuild/linux-x64 0.25.12 package/bin/esbuild"      # go1.23.12
	"lefthook-linux-x64 1.11.10 package/bin/lefthook"     # go1.24.2
	"@esbuild/linux-x64 0.27.7 package/bin/esbuild"       # go1.25.7
	"@esbuild/linux-x64 0.28.2 package/bin/esbuild"       # go1.26.5
)
go_dir=${GO_VERSIONS_DIR:-/var/cache/cprof-attach/go-versions}

# fetch_go_bins: the go_bins not in go_dir yet, with npm pack.
fetch_go_bins() {
	local spec pkg ver path name tmp fetched=()
	for spec in "${go_bins[@]}"; do
		read -r pkg ver path <<<"$spec"
		name=$(basename "$path")-$ver
		[ -x "$go_dir/$name" ] && continue
		if ! command -v npm >/dev/null; then
			echo "cprof-attach: no npm to fetch $pkg@$ver (tests/t_goversions.sh skips it)" >&2
			return 1
		fi
		if [ ! -w "$go_dir" ] && ! mkdir -p "$go_dir" 2>/dev/null; then
			echo "cprof-attach: $go_dir is not writable: run as root, or set GO_VERSIONS_DIR" >&2
			return 1
		fi
		tmp=$(mktemp -d)
		if (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null 2>&1) &&
			tar -xzf "$tmp"/*.tgz -C "$tmp" "$path" 2>/dev/null && [ -f "$tmp/$path" ]; then
			chmod 755 "$tmp/$path"
			mv "$tmp/$path" "$go_dir/$name"
			fetched+=("$name")
		else
			echo "cprof-attach: could not fetch $pkg@$ver with npm" >&2
		fi
		rm -rf "$tmp"
	done
	[ ${#fetched[@]} -eq 0 ] || echo "fetched into $go_dir: ${fetched[*]}"
}

go_rc=0
if [ "$group" = all ]; then
	fetch_go_bins || go_rc=1
fi

if [ ${#missing[@]} -eq 0 ]; then
	exit $go_rc
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
