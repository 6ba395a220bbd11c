#!/usr/bin/env bash
# Installs the Debian 12 packages cprof-attach needs to build and test.
# As root: apt-get installs what is missing.  Otherwise: names the missing
# packages and exits 1.
set -euo pipefail

packages=(
	gcc g++ make pkg-config            # build
	libunwind-dev libdw-dev libelf-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libjansson-dev
	libseccomp-dev                     # system call names (--dump, labels)
	libiberty-dev                      # demangling of C++ and Rust names
	libmicrohttpd-dev                  # --listen: the HTTP server
	libcurl4-openssl-dev               # --push: the HTTP client
	golang-1.19-go                     # go tool pprof: the tests read our pprof with it
	elfutils                           # eu-stack: reference stacks in the tests
	strace util-linux procps           # tests: a second tracer, setpriv, pgrep
	gawk mawk                          # tests: the awk pass runs under both (tests/run.sh)
	python3.11-dev python3-numpy gunicorn curl  # tests/t_python.sh: CPython's headers, numpy, a WSGI server
)
# tests/t_goshipped.sh: Go programs as Debian ships them (no DWARF), by thread and by goroutine
packages+=(prometheus restic rclone hugo)

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
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
