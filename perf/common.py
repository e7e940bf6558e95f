"""Helpers shared by the benchmarks: isolated Django environments in subprocesses, peak memory."""
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "perf" / "results"


def peak_rss_mb() -> float:
    """Peak resident set size of this process, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_json_subprocess(module: str, args: list[str], env_extra: dict[str, str]) -> dict:
    """Run `python -m module args` in a fresh interpreter; it prints one JSON object as its last line."""
    env = {**os.environ, "QUORUM_ENV": "test", **env_extra}
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{module} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def save(name: str, figures: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2, sort_keys=True))
    return path
