#!/usr/bin/env bash
# Build Rev's fstalign (the scorer behind the Earnings-21/22 tables) into .cache/tools/fstalign/,
# against Debian's OpenFST and Debian's copies of its third-party libraries (make apt installs
# them): its git submodules are not needed. strtk, the one without a Debian package, is replaced
# by a shim of the single call fstalign makes (scripts/fstalign_shim/strtk.hpp).
#
#   scripts/build_fstalign.sh [SOURCE_DIR]
#
# SOURCE_DIR: an fstalign checkout (its third-party/ may be empty). Without it, the source is
# cloned from FSTALIGN_GIT at FSTALIGN_REF (online). Idempotent: a binary built from the same
# source (its git commit, else the hash of its src/ and CMakeLists.txt) by the same script and
# stand-ins is kept as it is.
# Prints the binary's path on success; on failure one line saying what is missing, status 2.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHIM=$ROOT/scripts/fstalign_shim
DEST=${FSTALIGN_HOME:-$ROOT/.cache/tools/fstalign}
GIT_URL=${FSTALIGN_GIT:-https://github.com/revdotcom/fstalign.git}
# The commit the platform's comparisons were made with (docs/MEASUREMENTS.md).
GIT_REF=${FSTALIGN_REF:-dcf265569ec0f5a62d5941c923a2ecdbe17f681c}
JOBS=${JOBS:-$(nproc)}

fail() {
	echo "build_fstalign: $*" >&2
	exit 2
}

# Every build input from Debian: the header that proves the package is there, and its package.
check_deps() {
	local missing=""
	command -v cmake >/dev/null || missing="$missing cmake"
	command -v g++ >/dev/null || missing="$missing g++"
	local pair
	for pair in fst/fstlib.h:libfst-dev spdlog/spdlog.h:libspdlog-dev CLI/CLI.hpp:libcli11-dev \
		jsoncpp/json/json.h:libjsoncpp-dev libfccp/csv.h:libfccp-dev INIReader.h:libinih-dev \
		unicode/unistr.h:libicu-dev fmt/format.h:libfmt-dev; do
		[ -e "/usr/include/${pair%%:*}" ] || missing="$missing ${pair#*:}"
	done
	[ -z "$missing" ] || fail "missing packages:$missing; run 'make apt' as root (or apt-get install$missing)"
}

# The source's identity: its commit when it is a git checkout, else the hash of what is built.
source_id() {
	local src=$1
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
		[ "$(git -C "$src" rev-parse --show-toplevel)" = "$(cd "$src" && pwd -P)" ]; then
		git -C "$src" rev-parse HEAD
	else
		(cd "$src" && find CMakeLists.txt src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-40)
	fi
}

# The submodules' stand-ins, in the copied source's third-party/ (the CMakeLists.txt's include
# paths and add_subdirectory calls find these). Only what is missing or changed is written, so
# that a rebuild recompiles nothing for them.
put() { # put FILE CONTENT_FROM: copy when different
	cmp -s "$2" "$1" || cp "$2" "$1"
}
link() { # link TARGET NAME: a symbolic link, unless there is one
	[ -L "$2" ] || ln -s "$1" "$2"
}
overlay() {
	local tp=$1/third-party
	mkdir -p "$tp"/{spdlog,CLI11,strtk,csv,inih/cpp,jsoncpp,catch2} "$1/openfst/lib"
	link /usr/include "$tp/spdlog/include"
	link /usr/include "$tp/CLI11/include"
	put "$tp/strtk/strtk.hpp" "$SHIM/strtk.hpp"
	link /usr/include/libfccp/csv.h "$tp/csv/csv.h"
	put "$tp/inih/ini.c" /dev/null
	put "$tp/inih/cpp/INIReader.cpp" /dev/null
	put "$tp/jsoncpp/CMakeLists.txt" "$SHIM/jsoncpp.cmake"
	put "$tp/catch2/CMakeLists.txt" /dev/null
	# OPENFST_ROOT/{include,lib/libfst.so}, as the CMakeLists expects them, from Debian's paths
	link /usr/include "$1/openfst/include"
	link "$(find /usr/lib -name libfst.so -print -quit)" "$1/openfst/lib/libfst.so"
}

# The source as built: fstalign's CMakeLists.txt, src/ and test/, with three lines changed: two for
# Debian's OpenFST (1.7.9, built as C++17: its headers key symbol tables by std::string_view from
# C++17 on, so fstalign's C++14 would call functions the library does not have) and for C++17's
# rule that a std::set comparator be callable as const (src/PathHeap.h), one an upstream bug.
stage() {
	rm -rf "$2" && mkdir -p "$2"
	cp -r "$1/CMakeLists.txt" "$1/src" "$1/test" "$2/"
	sed -i 's/set(CMAKE_CXX_STANDARD 14)/set(CMAKE_CXX_STANDARD 17)/' "$2/CMakeLists.txt"
	sed -i 's/\(bool operator()(const shared_ptr<ShortlistEntry>& a, const shared_ptr<ShortlistEntry>& b)\) {/\1 const {/' \
		"$2/src/PathHeap.h"
	# an upstream bug: `bool version;` is never initialised, so a run may print the version
	# and exit 0 without scoring (seen here on one file in two)
	sed -i 's/^  bool version;$/  bool version = false;/' "$2/src/main.cpp"
}

main() {
	check_deps
	local src=${1:-} tmp=""
	if [ -z "$src" ]; then
		command -v git >/dev/null || fail "git is needed to fetch the source; or give SOURCE_DIR"
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		git init -q "$tmp/src"
		git -C "$tmp/src" fetch -q --depth 1 "$GIT_URL" "$GIT_REF" ||
			fail "could not fetch $GIT_REF from $GIT_URL (offline? give a SOURCE_DIR)"
		git -C "$tmp/src" checkout -q FETCH_HEAD
		src=$tmp/src
	fi
	[ -f "$src/CMakeLists.txt" ] && [ -f "$src/src/main.cpp" ] ||
		fail "$src: not an fstalign source tree (no CMakeLists.txt and src/main.cpp)"
	local id
	# the source and how it is built (this script, its stand-ins): a change to either rebuilds
	id="$(source_id "$src") $(cat "$0" "$SHIM"/* | sha256sum | cut -c1-16)"
	if [ -x "$DEST/bin/fstalign" ] && [ "$(cat "$DEST/source" 2>/dev/null)" = "$id" ]; then
		echo "$DEST/bin/fstalign"
		return
	fi
	local work=$DEST/build
	stage "$src" "$work/stage"
	# Into the build's tree only the files whose content changed: a build stopped half-way (or
	# a newer commit) recompiles only what it must (a whole build is 20+ minutes on 2 cores).
	mkdir -p "$work/src"
	(cd "$work/stage" && find . -type f) | while read -r f; do
		cmp -s "$work/stage/$f" "$work/src/$f" || { mkdir -p "$(dirname "$work/src/$f")" && cp "$work/stage/$f" "$work/src/$f"; }
	done
	overlay "$work/src"
	local log=$work/build.log
	if ! (cmake -S "$work/src" -B "$work/out" -DCMAKE_BUILD_TYPE=Release \
		-DOPENFST_ROOT="$work/src/openfst" -DDYNAMIC_OPENFST=ON &&
		cmake --build "$work/out" --target fstalign -j "$JOBS") >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		fail "the build failed; the whole log is $log"
	fi
	mkdir -p "$DEST/bin"
	cp "$work/out/fstalign" "$DEST/bin/fstalign"
	echo "$id" >"$DEST/source"
	# its own sample: a b c d e f against a a d d f is 2 substitutions and 1 deletion (3/6)
	if [ -d "$src/sample_data" ]; then
		rm -f "$work/sample.json"
		"$DEST/bin/fstalign" wer --ref "$src/sample_data/abcdef.txt" --hyp "$src/sample_data/aaddf.txt" \
			--json-log "$work/sample.json" >"$work/sample.log" 2>&1 && [ -f "$work/sample.json" ] ||
			fail "the built binary did not run on its sample_data; see $work/sample.log"
	fi
	echo "$DEST/bin/fstalign"
}

main "$@"
