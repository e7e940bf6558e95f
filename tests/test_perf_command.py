"""`python -m perf NAME`: a mistyped benchmark name is refused before anything runs."""
import pytest

from perf.__main__ import BENCHMARKS, main, parse_names


def test_no_name_runs_every_benchmark_and_named_ones_run_alone():
    assert parse_names([]) == []
    assert parse_names(["cycle", "memory"]) == ["cycle", "memory"]


def test_a_mistyped_name_is_refused_naming_the_benchmarks(capsys, monkeypatch):
    ran = []
    monkeypatch.setitem(BENCHMARKS, "cycle", "tests.no_such_module_ran")
    monkeypatch.setattr("importlib.import_module", lambda name: ran.append(name))
    with pytest.raises(SystemExit) as exit_info:
        main(["cycle", "cycel"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "no benchmark named cycel" in error
    assert "cycle, memory" in error
    assert ran == []
