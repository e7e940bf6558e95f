#!/usr/bin/env bash
# METEOR (evaluation/stats/objective.py) reads the WordNet 3.0 database, which no PyPI package ships;
# Debian's wordnet-base puts it in /usr/share/wordnet (QUORUM_WORDNET_DIR). Install it when missing and
# we are allowed to; otherwise METEOR is taken from the uploaded score.csv and its test says so.
set -u
[ -f "${QUORUM_WORDNET_DIR:-/usr/share/wordnet}/data.noun" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's wordnet-base for METEOR..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base) >/tmp/quorum-wordnet.log 2>&1 \
    || echo "wordnet-base could not be installed (see /tmp/quorum-wordnet.log); METEOR will come from score.csv." >&2
else
  echo "wordnet-base not installed and cannot be installed here; METEOR will come from score.csv." >&2
fi
exit 0
