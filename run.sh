#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two README commands:  ./run.sh bench   (set-up + the default benchmark, ends in a report)
#                           ./run.sh test    (set-up + the test suite)
# Extra arguments go to hdbbench (bench) or to pytest (test).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
what=${1:-}
[ $# -gt 0 ] && shift
case "$what" in
  setup) exec bash "$top/scripts/setup.sh" ;;
  test)
    bash "$top/scripts/setup.sh"
    # C++ unit tests first (seconds), then the pytest suite against real servers.
    if [ -f "$top/build/CTestTestfile.cmake" ]; then
      ctest --test-dir "$top/build" --output-on-failure --no-tests=error
    fi
    cd "$top" && exec "$top/.venv/bin/python" -m pytest "$@" ;;
  bench)
    bash "$top/scripts/setup.sh"
    cd "$top" && exec "$top/.venv/bin/hdbbench" run "$top/scenarios/default.toml" "$@" ;;
  *) echo "usage: ./run.sh bench|test|setup [args...]" >&2; exit 2 ;;
esac
