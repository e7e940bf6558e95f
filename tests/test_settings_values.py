"""A wrong value in the environment stops start-up with a message naming the variable and what it
must be (ImproperlyConfigured), not a ValueError or a KeyError from inside django-environ.

Settings are read once per process, so each case loads them in a process of its own with its own
environment, as gunicorn, `manage.py` and `celery` would (tests/fresh_python.py).
"""
import os

import pytest

from tests import fresh_python

LOAD = "import django; django.setup(); print('loaded')"


def _last_line(**values) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUORUM_", "CELERY_", "DATABASE_URL"))}
    env.update({"DJANGO_SETTINGS_MODULE": "quorum.settings", "QUORUM_ENV": "test", "SECRET_KEY": "not-a-real-secret", **values})
    done = fresh_python.run(LOAD, env)
    return (done.stdout + done.stderr).strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("QUORUM_CLAIM_SWEEP_SECONDS", "sixty", "a whole number"),
        ("QUORUM_LOGIN_FAILURE_LIMIT", "10.5", "a whole number"),
        ("QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS", "ten", "a number"),
    ],
)
def test_a_value_that_does_not_parse_names_its_variable(variable, value, expected):
    assert _last_line(**{variable: value}) == (
        f"django.core.exceptions.ImproperlyConfigured: {variable}={value!r} is not {expected}"
    )


@pytest.mark.parametrize("url", ["postgres//quorum@db/quorum", ""])
def test_a_database_url_that_does_not_parse_says_how_to_write_one_without_repeating_it(url):
    line = _last_line(DATABASE_URL=url)
    assert line.startswith("django.core.exceptions.ImproperlyConfigured: DATABASE_URL is not a database URL")
    assert "postgres://USER:PASSWORD@HOST:5432/NAME" in line
    assert "quorum@db" not in line


def test_a_broker_url_without_a_scheme_is_refused_rather_than_taken_for_an_amqp_host():
    line = _last_line(QUORUM_ENV="production", CELERY_BROKER_URL="redis//:s3cret@cache:6379/0")
    assert line.startswith("django.core.exceptions.ImproperlyConfigured: CELERY_BROKER_URL is not a broker URL")
    assert "redis://127.0.0.1:6379/0" in line and "s3cret" not in line


@pytest.mark.parametrize("level", ["verbose", ""])
def test_a_log_level_logging_does_not_know_names_the_variable_and_the_levels(level):
    assert _last_line(LOG_LEVEL=level) == (
        f"django.core.exceptions.ImproperlyConfigured: LOG_LEVEL={level!r} is not a level: DEBUG, INFO, WARNING, ERROR or CRITICAL"
    )


def test_a_url_in_allowed_hosts_is_refused_rather_than_answering_every_request_400():
    assert _last_line(ALLOWED_HOSTS="localhost,https://quorum.example.org/") == (
        "django.core.exceptions.ImproperlyConfigured: ALLOWED_HOSTS lists host names, not URLs: write quorum.example.org, "
        "not 'https://quorum.example.org/' (the full origin, https://quorum.example.org, goes in CSRF_TRUSTED_ORIGINS when one is needed)"
    )


def test_good_values_still_load():
    assert _last_line(
        QUORUM_CLAIM_SWEEP_SECONDS="60", QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS="2.5",
        DATABASE_URL="postgres://quorum@db:5432/quorum", CELERY_BROKER_URL="redis://127.0.0.1:6379/0", LOG_LEVEL="warning",
        ALLOWED_HOSTS="quorum.example.org,.example.org,127.0.0.1,[::1]",
    ) == "loaded"


@pytest.mark.parametrize(("variable", "value"), [("QUORUM_BEHIND_TLS_PROXY", "ture"), ("DEBUG", "maybe"), ("QUORUM_MTURK_LIVE", "")])
def test_a_switch_that_is_neither_true_nor_false_names_its_variable_and_the_spellings(variable, value):
    # django-environ took any unknown spelling for false: a typo silently turned the switch off.
    assert _last_line(**{variable: value}) == (
        f"django.core.exceptions.ImproperlyConfigured: {variable}={value!r} is not true or false: "
        "write true/false, 1/0, yes/no or on/off (any case)"
    )


SWITCH = (
    "import django; django.setup(); from django.conf import settings; "
    "print(settings.DEBUG, settings.SECURE_PROXY_SSL_HEADER is not None, settings.QUORUM_PREPARED_STATEMENTS)"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(v, True) for v in ("true", "TRUE", "1", "yes", "Yes", "on", " On ")] + [(v, False) for v in ("false", "False", "0", "no", "NO", "off")],
)
def test_the_usual_spellings_of_a_switch_are_read_in_any_case(value, expected):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUORUM_", "CELERY_", "DATABASE_URL"))}
    env.update({
        "DJANGO_SETTINGS_MODULE": "quorum.settings", "QUORUM_ENV": "test", "SECRET_KEY": "not-a-real-secret",
        "DEBUG": value, "QUORUM_BEHIND_TLS_PROXY": value, "QUORUM_PREPARED_STATEMENTS": value,
    })
    done = fresh_python.run(SWITCH, env)
    assert done.stdout.split() == [str(expected)] * 3, done.stderr


TASK_LOG = (
    "import django; django.setup(); from quorum.celery import app\n"
    "@app.task(name='quorum.tests.noop')\n"
    "def noop():\n    return 'done'\n"
    "noop.apply()\n"
)


@pytest.mark.parametrize(("level", "shown"), [("INFO", True), ("DEBUG", True), ("WARNING", False)])
def test_the_worker_log_shows_a_task_finishing_at_info(level, shown):
    # celery.app.trace was held at WARNING, so at LOG_LEVEL=INFO a worker logged "received" and never "succeeded".
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUORUM_", "CELERY_", "DATABASE_URL"))}
    env.update({"DJANGO_SETTINGS_MODULE": "quorum.settings", "QUORUM_ENV": "test", "SECRET_KEY": "not-a-real-secret", "LOG_LEVEL": level})
    done = fresh_python.run(TASK_LOG, env)
    assert done.returncode == 0, done.stderr
    assert ("Task quorum.tests.noop[" in done.stderr and "succeeded in" in done.stderr) is shown, done.stderr


@pytest.mark.parametrize(
    ("variable", "value", "known"),
    [("QUORUM_ASR_BACKEND", "bogus", "pocketsphinx, whisper, http"), ("QUORUM_TTS_ENGINE", "festival", "espeak-ng, flite")],
)
def test_an_unknown_speech_backend_stops_start_up_listing_the_known_ones(variable, value, known):
    # It was accepted until a recording was transcribed (or speech simulated), then failed there.
    assert _last_line(**{variable: value}) == (
        f"django.core.exceptions.ImproperlyConfigured: {variable}={value!r} is not one Quorum knows: {known}"
    )


def test_every_speech_backend_the_registries_know_loads():
    from annotation.speech import asr, tts

    for backend in asr.BACKENDS:
        assert _last_line(QUORUM_ASR_BACKEND=backend) == "loaded"
    for engine in tts.ENGINES:
        assert _last_line(QUORUM_TTS_ENGINE=engine) == "loaded"
