"""`python -m perf [NAME ...]`: run the benchmarks and print their figures (also saved in perf/results/)."""
import argparse
import importlib
import json
import sys
import traceback

BENCHMARKS = {
    "import": "perf.bench_import",
    "claims": "perf.bench_claims",
    "cycle": "perf.bench_cycle",
    "memory": "perf.bench_memory",
    "exports": "perf.bench_exports",
    "evaluation": "perf.bench_evaluation",
    "mturk": "perf.bench_mturk",
    "flags": "perf.bench_flags",
    "job_page": "perf.bench_job_page",
    "job_page_100k": "perf.bench_job_page_100k",
    "collection_checks": "perf.bench_collection_checks",
    "allocation": "perf.bench_allocation",
    "plan": "perf.bench_plan",
    "looks": "perf.bench_looks",
    "spoken": "perf.bench_spoken",
    "speech": "perf.bench_speech",
    "chat": "perf.bench_chat",
    "reliability": "perf.bench_reliability",
    "typing": "perf.bench_typing",
    "background": "perf.bench_background",
    "fragility": "perf.bench_fragility",
    "pairwise_page": "perf.bench_pairwise_page",
    "rated": "perf.bench_rated",
    "job_creation": "perf.bench_job_creation",
}


def parse_names(argv):
    """The benchmarks asked for; an unknown name stops before anything runs, naming what exists."""
    parser = argparse.ArgumentParser(
        prog="python -m perf",
        description="Run Quorum's benchmarks and print their figures (also saved in perf/results/).",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME",
        help="benchmarks to run, all of them when none is named; one of: " + ", ".join(BENCHMARKS),
    )
    names = parser.parse_args(argv).names
    # Checked here, not with choices=: Python 3.11's argparse refuses an empty list against choices.
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)}; the benchmarks are: {', '.join(BENCHMARKS)}")
    return names


def main(argv):
    failed = False
    for name in parse_names(argv) or BENCHMARKS:
        print(f"== {name}", flush=True)
        try:
            module = importlib.import_module(BENCHMARKS[name])
            figures = module.run()
        except ModuleNotFoundError as exc:
            print(f"   not available: {exc}")
            continue
        except Exception:  # noqa: BLE001 - report and go on with the other benchmarks
            traceback.print_exc()
            failed = True
            continue
        print(json.dumps(figures, indent=2, sort_keys=True), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
