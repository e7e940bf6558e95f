"""`evaluation/stats/` is pure: no module there imports Django or any models, directly or through the
project modules it imports (read from the source, so a parent package's own imports, such as the
Celery app in `quorum/__init__.py`, do not count)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("annotation", "hits", "evaluation", "quorum")


def _file_of(module: str) -> Path | None:
    path = ROOT.joinpath(*module.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def _imports(path: Path, module: str) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            # `from package import module` imports the module
            found.update(f"{base}.{alias.name}" for alias in node.names if _file_of(f"{base}.{alias.name}"))
    return found


def _reached(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = _file_of(module)
        if path is not None and module.split(".")[0] in PROJECT:
            todo.extend(_imports(path, module))
    return seen


def test_no_stats_module_imports_django_or_models():
    modules = [f"evaluation.stats.{p.stem}" for p in sorted((ROOT / "evaluation" / "stats").glob("*.py")) if p.stem != "__init__"]
    assert len(modules) >= 10
    for module in modules:
        bad = sorted(m for m in _reached(module) if m.split(".")[0] == "django" or m.endswith(".models") or ".models." in m)
        assert not bad, f"{module} reaches {bad}"
