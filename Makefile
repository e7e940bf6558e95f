# Quorum: `make demo` runs the main job on the embedded default and serves the UI;
# `make test` sets everything up and runs the test suite. Both need only Python 3.11.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements.lock | cksum | cut -d' ' -f1)
export QUORUM_ENV ?= development

.PHONY: help venv migrate demo test lint bench serve worker clean

help:
	@echo "make demo   - set up, run the demo rewrite job end to end, serve the UI on 127.0.0.1:8000"
	@echo "make test   - set up, lint (ruff, mypy) and run the test suite on every core (PostgreSQL/Redis/Chromium used when present; ARGS= passes pytest options)"
	@echo "make lint   - ruff (style, imports, complexity) and mypy (services and selectors)"
	@echo "make bench  - run the performance harness in perf/"
	@echo "make serve  - serve the UI on 127.0.0.1:8000 with a background worker (no Redis needed)"

$(STAMP): requirements.txt requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c requirements.lock
	rm -f $(VENV)/.installed-*
	touch $@

venv: $(STAMP)

migrate: venv
	$(PY) manage.py migrate --noinput

demo: venv
	scripts/ensure_speech.sh
	$(PY) manage.py migrate --noinput
	QUORUM_LOCAL_WORKER=true QUORUM_SYSTEM_ALLOWED_HOSTS=$${QUORUM_SYSTEM_ALLOWED_HOSTS:-127.0.0.1} $(PY) manage.py demo

test: venv lint
	scripts/ensure_chromium.sh
	scripts/ensure_speech.sh
	scripts/ensure_wordnet.sh
	QUORUM_ENV=test scripts/run_tests.sh $(ARGS)

lint: venv
	$(VENV)/bin/ruff check .
	QUORUM_ENV=test $(VENV)/bin/mypy

bench: venv
	scripts/ensure_services.sh || true
	QUORUM_ENV=test $(PY) -m perf $(ARGS)

serve: migrate
	PY=$(PY) scripts/serve.sh

worker: venv
	$(VENV)/bin/celery -A quorum worker -B --loglevel=info

clean:
	rm -rf $(VENV) var .pytest_cache
