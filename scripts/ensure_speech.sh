#!/usr/bin/env bash
# The speech engine (annotation/speech/) speaks with Debian's espeak-ng or flite and uses sox for
# audio tools; the recogniser's model ships in the pocketsphinx wheel. Install the programs when
# missing and we are allowed to; otherwise the speech tests say they were skipped (they fail under CI=true).
set -u
missing=""
for program in espeak-ng flite sox; do
  command -v "$program" >/dev/null 2>&1 || missing="$missing $program"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's$missing for the speech engine..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/tmp/quorum-speech.log 2>&1 \
    || echo "$missing could not be installed (see /tmp/quorum-speech.log); speech tests will be skipped." >&2
else
  echo "$missing not installed and cannot be installed here; speech tests will be skipped." >&2
fi
exit 0
