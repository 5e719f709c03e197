#!/usr/bin/env bash
# integration_off.sh -- the integration tests (tests/suites/integration.sh: the
# differential tests against MariaDB included) once more with server-side
# prepared statements off, so `make check` runs them in both modes: the
# configurations these tests write leave [dal] server_prepare unset, and
# then DAL_SERVER_PREPARE decides (tests/live/test_sprep.c sets both modes
# itself, whatever the variable says).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
DAL_SERVER_PREPARE=off exec "$here/integration.sh"
