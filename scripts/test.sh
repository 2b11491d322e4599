#!/usr/bin/env bash
# The whole test suite on a fresh machine: set-up, lint of the project's Python, then pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

ruff check .
ruff format --check .
python -m pytest "$@"
