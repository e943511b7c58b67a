#!/usr/bin/env bash
# Does a fresh Debian machine get every package that a configured build uses?
#   scripts/check-debian-deps.sh [--without PACKAGE]... BUILD_DIR
# Collects what the build found and uses: the CMake package folders (*_DIR in CMakeCache.txt) and every
# library under /usr that a link line of the build names (absolute paths in build.ninja, and the *_LIBRARY
# cache entries that appear there), finds the Debian package that owns each, and checks that it is in
# scripts/debian-packages.txt or among the dependencies of that list (Depends and Pre-Depends,
# recursively: `apt-get install --no-install-recommends` installs nothing else). Names every package that
# would be missing and exits 1; exits 0 when none is. --without drops a package from the list (to see the
# check catch it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
without=()
while [ $# -gt 0 ] && [ "$1" = "--without" ]; do without+=("$2"); shift 2; done
build=${1:?usage: check-debian-deps.sh [--without PACKAGE]... BUILD_DIR}
cache=$build/CMakeCache.txt
[ -f "$cache" ] || { echo "check-debian-deps: $cache not found; configure the build first" >&2; exit 2; }
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null ||
  { echo "check-debian-deps: needs dpkg-query and apt-cache (a Debian system)" >&2; exit 2; }

mapfile -t listed < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$here/debian-packages.txt")
list=()
for p in "${listed[@]}"; do
  keep=1
  for w in "${without[@]}"; do [ "$p" = "$w" ] && keep=0; done
  [ $keep -eq 1 ] && list+=("$p")
done

link_files=("$build/build.ninja")
# CMake package folders outside the generic prefixes (those are owned by no package in particular)
folders=$(sed -n 's/^[A-Za-z0-9_]*_DIR:PATH=\(\/usr\/.*\)$/\1/p' "$cache" |
  grep -vxE '/usr/(include|lib|lib/x86_64-linux-gnu|share|lib/cmake|lib/x86_64-linux-gnu/cmake)/?' || true)
# libraries that link lines really use (CMake also caches optional finds that are never linked)
cached_libs=$(sed -n 's/^[A-Za-z0-9_]*_LIBRARY[A-Z_]*:FILEPATH=\(\/usr\/.*\)$/\1/p' "$cache" |
  while read -r f; do grep -qsF -- "$f" "${link_files[@]}" && echo "$f"; done || true)
linked_libs=$(grep -hE '^ *LINK_LIBRARIES = ' "${link_files[@]}" 2>/dev/null | tr ' ' '\n' |
  grep -E '^/usr/.*\.(so|a)(\.[0-9.]+)?$' | sort -u || true)

owners=$(for path in $folders $cached_libs $linked_libs; do
    real=$(readlink -f "$path" 2>/dev/null || echo "$path")
    dpkg-query -S "$real" 2>/dev/null || dpkg-query -S "$path" 2>/dev/null || true
  done | sed 's/: .*//; s/, /\n/g; s/:amd64//g' | sort -u)

closure=$( { printf '%s\n' "${list[@]}"
             apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
               --no-enhances "${list[@]}" 2>/dev/null | sed -n 's/^ *|\?\(Pre\)\?Depends: //p'; } |
           sed 's/[<>]//g; s/:amd64$//' | sort -u)

missing=$(comm -23 <(printf '%s\n' $owners | sort -u) <(printf '%s\n' "$closure"))
count=$(printf '%s\n' $owners | grep -c . || true)
if [ -n "$missing" ]; then
  echo "check-debian-deps: a fresh machine would lack packages that this build uses; add them to scripts/debian-packages.txt:"
  printf '  %s\n' $missing
  exit 1
fi
echo "check-debian-deps: every package this build uses ($count) comes with scripts/debian-packages.txt"
