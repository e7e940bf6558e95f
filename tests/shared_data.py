"""Where the project's shared data folder is, for the tests and benchmarks that read real data
(DSTC9 Track 1's human evaluation, MultiWOZ 2.1's validation split) at run time.

`QUORUM_SHARED_DATA` names the folder, so a checkout anywhere finds it; unset, it is `shared/data`
beside the checkout (`../shared/data`, as the project's machines lay it out). A test that needs a
file that is not there skips with `missing(path)`, which says where it looked and how to point it.
"""
import os
from pathlib import Path

VARIABLE = "QUORUM_SHARED_DATA"
CHECKOUT = Path(__file__).resolve().parent.parent
DSTC9_HUMAN_EVAL = "dstc9-track1-human-eval"


def shared_data(*parts: str) -> Path:
    """A path inside the shared data folder (it may not exist)."""
    named = os.environ.get(VARIABLE, "").strip()
    root = Path(named).expanduser() if named else CHECKOUT.parent / "shared" / "data"
    return root.joinpath(*parts)


def missing(path: Path) -> str:
    """Why a test that needs `path` is skipped."""
    return f"the shared data are not at {path}: set {VARIABLE} to the project's shared data folder"
