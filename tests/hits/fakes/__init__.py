"""Local fakes of the crowd providers' APIs, for the tests and the benchmark (perf/bench_mturk.py)."""
from .mturk_server import FakeMTurk  # noqa: F401
from .prolific_server import FakeProlific  # noqa: F401
