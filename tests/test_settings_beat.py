"""Celery beat keeps its schedule file (when each periodic entry last ran) in QUORUM_VAR_DIR, not in
the folder it is started from: started from the checkout, as the README's commands do, it wrote
celerybeat-schedule.* there (untracked files; a read-only checkout stopped beat).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRINT = (
    "import json; from quorum.celery import app; "
    "print(json.dumps({'file': app.conf.beat_schedule_filename}))"
)


def test_beat_keeps_its_schedule_file_in_the_var_dir(tmp_path):
    var_dir = tmp_path / "var"  # not there yet: it is made, so beat can open its file
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUORUM_", "CELERY_"))}
    env.update(QUORUM_ENV="production", SECRET_KEY="not-a-real-secret", CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
               QUORUM_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="quorum.settings")
    done = subprocess.run([sys.executable, "-c", PRINT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["file"] == str(var_dir / "celerybeat-schedule")
    assert var_dir.is_dir()
