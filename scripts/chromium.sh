#!/usr/bin/env bash
# Prints the path of a Chromium for the web console's browser tests (tests/console), installing
# Debian's `chromium` package with apt where it is missing and this runs as root on Debian.
# Playwright's own browser download is never used: playwright-core drives this one.
#
#   ROTO_CHROMIUM="$(scripts/chromium.sh)"
#
# Prints nothing where no Chromium can be had (the tests then skip, saying why), except
# under CI=true, where that is a failure.
set -Eeuo pipefail

say() { echo "chromium: $*" >&2; }

found() { command -v chromium || command -v chromium-browser || true; }

path="${ROTO_CHROMIUM:-$(found)}"
if [ -z "$path" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing Debian's chromium"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2 ||
    { apt-get update -q >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2; } ||
    true
  path="$(found)"
fi
if [ -z "$path" ]; then
  if [ "${CI:-}" = true ]; then
    say "no chromium could be installed; CI runs the console's browser tests"
    exit 1
  fi
  say "no chromium (not root, or not Debian); the console's browser tests will skip"
  exit 0
fi
echo "$path"
