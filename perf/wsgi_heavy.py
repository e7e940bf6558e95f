"""The memory baseline of perf/bench_memory.py: the benchmark's WSGI app with the numerical stack and
the clients every web worker imported before issue 26 (numpy, pandas, scipy's statistics,
matplotlib, boto3) loaded up front, as they were."""
import boto3  # noqa: F401
import matplotlib.pyplot  # noqa: F401
import numpy  # noqa: F401
import pandas  # noqa: F401
import scipy.signal  # noqa: F401
import scipy.stats  # noqa: F401

from perf.wsgi_app import application  # noqa: F401
