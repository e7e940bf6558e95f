"""Modules loaded on first use, so that a web worker does not carry what its pages never touch.

numpy, pandas and scipy cost tens of megabytes in every gunicorn worker, and the annotation work
pages never use them: only the statistics, quality flags, audio checks and plots do. `lazy("pandas")`
returns the module object at once (it is put in `sys.modules`, so every later `import pandas` gets
the same object) and runs the module's code the first time one of its attributes is read. This is
the standard library's own mechanism (`importlib.util.LazyLoader`, the recipe of the importlib
documentation), not a proxy of ours. Pure: no Django.

Finding a submodule imports its parent package at once, so `lazy("scipy.signal")` would load scipy:
defer a submodule only when its parent is light (evaluation's pages and services defer the
`evaluation.stats.*` modules so: `evaluation/stats/__init__.py` is empty). A module-level use (a
constant, a default argument, a name imported with `from`) runs the code at once, so those read
the module's attributes when called; `tests/test_web_imports.py` holds the web process to it.
Keep the real import under `TYPE_CHECKING` so that type checkers see the module: see
annotation/quality/flags.py. Python 3.11's LazyLoader does not lock the first use: two threads
using a lazy module for the first time at once may both run its code. The web servers run sync
workers (one request at a time per process); a threaded server should import these modules in its
`post_fork` hook.
"""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy(name: str) -> ModuleType:
    """Module `name`, its code run when first used (at once if it is already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
