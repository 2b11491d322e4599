# Sourced by the README's two commands: installs what they need on a fresh machine, then puts .venv first on PATH.
# - apt packages (chromium clang-22 lld-22 llvm-22 qemu-user) when running as root and they are missing; without root
#   the tests that need them skip, saying so (chromium: the browser test of `hexlint splits --format svg`).
# - a virtualenv in .venv with hexlint and its dev extras.
set -euo pipefail

HEXLINT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APT_PACKAGES=(chromium clang-22 lld-22 llvm-22 qemu-user)
APT_TOOLS=(chromium clang-22 ld.lld-22 llvm-objdump-22 qemu-hexagon)

install_toolchain() {
    local missing=0 tool
    for tool in "${APT_TOOLS[@]}"; do
        command -v "$tool" >/dev/null 2>&1 || missing=1
    done
    [ "$missing" = 0 ] && return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "hexlint setup: ${APT_PACKAGES[*]} missing and not root (or no apt-get): tests that build or run Hexagon code will skip" >&2
        return 0
    fi
    echo "hexlint setup: installing ${APT_PACKAGES[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PACKAGES[@]}" >/dev/null
}

install_venv() {
    local python="${PYTHON:-python3}"
    if [ ! -x "$HEXLINT_ROOT/.venv/bin/python" ]; then
        "$python" -m venv "$HEXLINT_ROOT/.venv"
    fi
    # Some machines' pip configuration names local package mirrors that do not exist; pip warns once per package.
    "$HEXLINT_ROOT/.venv/bin/python" -m pip install -q --upgrade pip 2> >(grep -v "^WARNING: Location" >&2) >/dev/null
    "$HEXLINT_ROOT/.venv/bin/python" -m pip install -q -e "$HEXLINT_ROOT[dev]" 2> >(grep -v "^WARNING: Location" >&2)
}

install_toolchain
install_venv
export PATH="$HEXLINT_ROOT/.venv/bin:$PATH"
cd "$HEXLINT_ROOT"
