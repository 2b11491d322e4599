#!/usr/bin/env bash
# The main job: hexlint on the bundled C core, its sources and its built libraries.
# With clang-22 present the libraries are rebuilt first (into build/htp-core) and those fresh builds are audited;
# otherwise the committed ones in fixtures/htp-core/lib are.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

libraries=(fixtures/htp-core/lib/libhtp-core-v7[359].so fixtures/htp-core/lib/libhtp-core-v81.so)
if command -v clang-22 >/dev/null 2>&1; then
    fixtures/htp-core/build.sh build/htp-core >/dev/null
    libraries=(build/htp-core/libhtp-core-v7[359].so build/htp-core/libhtp-core-v81.so)
fi

status=0
echo "== sources: fixtures/htp-core"
hexlint --statistics fixtures/htp-core || status=$?
echo "== binaries: ${libraries[*]}"
hexlint --spills --promotions --division --strict "${libraries[@]}" || status=$?
exit "$status"
