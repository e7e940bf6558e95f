"""tests/fresh_python.py answers as `python -c` would, in the environment and folder it is given."""
import os
import subprocess
import sys

import pytest

from tests import fresh_python

CASES = [
    "import os, sys; print(os.environ.get('ONLY_HERE'), os.environ.get('QUORUM_FRESH_PROBE'), os.getcwd(), __name__)",
    "raise ValueError('what went wrong')",
    "import sys; sys.exit(3)",
    "import sys; sys.exit('a message')",
    "print('out'); import sys; print('err', file=sys.stderr)",
]


@pytest.mark.parametrize("code", CASES)
def test_it_answers_as_python_dash_c(code, tmp_path, monkeypatch):
    monkeypatch.setenv("QUORUM_FRESH_PROBE", "the test process's own")  # not in the case's environment
    env = {k: v for k, v in os.environ.items() if k != "QUORUM_FRESH_PROBE"} | {"ONLY_HERE": "given"}
    fresh = fresh_python.run(code, env, cwd=tmp_path)
    real = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (fresh.returncode, fresh.stdout) == (real.returncode, real.stdout)
    assert fresh.stderr.strip().splitlines()[-1:] == real.stderr.strip().splitlines()[-1:]


def test_quorum_is_not_imported_before_the_case_sets_its_environment(tmp_path):
    fresh = fresh_python.run("import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in ('quorum', 'annotation', 'hits', 'evaluation')))",
                             dict(os.environ), cwd=tmp_path)
    assert fresh.stdout.strip() == "[]", fresh.stderr
