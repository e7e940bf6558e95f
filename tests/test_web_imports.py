"""A web process does not load the numerical stack at start (issue 26, item 2): every URL's view
module imported, numpy, pandas, scipy and krippendorff are at most placeholders
(quorum/lazy_modules.py) whose code has not run, and run when a statistic is first used.
Each case in a fresh interpreter: the test process has long loaded them."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "scipy", "krippendorff", "statsmodels", "matplotlib", "boto3")

LOADED = """
import json, sys, types
def loaded():
    # a placeholder of importlib's LazyLoader becomes a plain module once its code has run
    return sorted(n for n in %r if n in sys.modules and type(sys.modules[n]) is types.ModuleType)
"""


def _run(code: str) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quorum.settings", "QUORUM_ENV": "test"}
    done = subprocess.run([sys.executable, "-c", LOADED % (HEAVY,) + code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_web_application_starts_without_the_numerical_stack():
    found = _run(
        "from quorum.wsgi import application\n"
        "from django.urls import get_resolver\n"
        "get_resolver().url_patterns\n"  # every view module, as the first request would
        "views = ['annotation.web.views', 'evaluation.campaigns.views', 'evaluation.interactive.views', 'evaluation.api.views']\n"
        "print(json.dumps({'loaded': loaded(), 'views': [v for v in views if v in sys.modules]}))\n"
    )
    assert len(found["views"]) == 4  # the pages' modules were really imported
    assert found["loaded"] == []


def test_a_statistic_loads_what_it_needs_when_used():
    found = _run(
        "from quorum.wsgi import application\n"
        "from annotation.quality import agreement\n"
        "before = loaded()\n"
        "result = agreement.alpha([(1, 'a', 1), (1, 'b', 1), (2, 'a', 2), (2, 'b', 3)], 'nominal', bootstrap=0)\n"
        "print(json.dumps({'before': before, 'after': loaded(), 'alpha': result.alpha}))\n"
    )
    assert found["before"] == []
    assert {"numpy", "pandas", "krippendorff"} <= set(found["after"])
    assert found["alpha"] is not None and -1 <= found["alpha"] <= 1
