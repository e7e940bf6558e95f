"""The provider registry: every package is found, nothing else names a provider, old URLs still work."""
import re
import subprocess
from pathlib import Path

from hits import providers
from hits.links import entry_path
from hits.models import Provider

ROOT = Path(__file__).resolve().parents[2]


def test_every_model_choice_is_a_discovered_package():
    assert set(providers.keys()) == set(Provider.values)
    assert providers.default_key() == Provider.INHOUSE


def test_entry_urls_keep_the_shape_workers_already_have(settings):
    assert entry_path("mturk", 7) == "/crowd/mturk/7/"  # MTurk ExternalQuestion URLs of live HITs
    assert entry_path("prolific", 7) == "/crowd/prolific/7/"  # Prolific study URLs


def test_no_provider_is_named_outside_its_package():
    names = "|".join(re.escape(f'"{k}"') for k in providers.keys())
    pattern = rf'{names}|Provider\.({"|".join(k.upper() for k in providers.keys())})'
    found = subprocess.run(
        ["grep", "-rnE", pattern, "--include=*.py", "--include=*.html", "hits", "templates"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout.splitlines()
    allowed = ("hits/providers/", "hits/models.py", "hits/migrations/")
    assert [line for line in found if not line.startswith(allowed)] == []
