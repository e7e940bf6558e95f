"""Local fakes of the crowd providers' APIs: MTurk's JSON API (for boto3's endpoint_url) and the parts
of Prolific's HTTP API that Quorum uses. They hold everything in memory and never reach the internet.

`manage.py rehearse` runs a job against them with simulated workers; the tests and the benchmark
(perf/bench_mturk.py) use them too. Production code paths never import them.
"""
from .mturk_server import FakeMTurk  # noqa: F401
from .prolific_server import FakeProlific  # noqa: F401
