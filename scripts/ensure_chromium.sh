#!/usr/bin/env bash
# Browser tests drive Debian's chromium through Playwright (no browser download).
# Install it when missing and we are allowed to; otherwise the browser tests say they were skipped.
set -u
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/tmp/quorum-chromium.log 2>&1 \
    || echo "chromium could not be installed (see /tmp/quorum-chromium.log); browser tests will be skipped." >&2
else
  echo "chromium is not installed and cannot be installed here; browser tests will be skipped." >&2
fi
exit 0
