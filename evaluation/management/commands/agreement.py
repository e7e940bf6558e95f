import json

import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from annotation.quality import agreement
from quorum import numbers


def _shown(result) -> str:
    """Alpha and its interval as the campaign page writes them (quorum.numbers), or why it is undefined."""
    if result.undefined:
        return result.reason
    text = numbers.decimals(result.alpha)
    if result.ci_low is None:
        return f"{text} ({result.ci_withheld})" if result.ci_withheld else text
    return f"{text} {numbers.interval(result.ci_low, result.ci_high)}"


class Command(BaseCommand):
    help = "Krippendorff's alpha of a CSV with columns item,rater,value, with a bootstrap CI over items (or n/a)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV with a header item,rater,value.")
        parser.add_argument("--level", required=True, choices=agreement.LEVELS)
        parser.add_argument(
            "--domain",
            help="Comma-separated values of the scale, in order (e.g. 1,2,3,4,5). Default: the values in the file; "
            "give it to refuse values outside a known scale.",
        )
        parser.add_argument("--bootstrap", type=int, default=agreement.DEFAULT_BOOTSTRAP, help="Replicates (>= 1000, or 0 for none).")
        parser.add_argument("--seed", type=int, default=agreement.DEFAULT_SEED)
        parser.add_argument("--raters", action="store_true", help="Also print per-rater diagnostics.")
        parser.add_argument("--json", action="store_true", help="Print the full result as JSON.")

    def handle(self, *args, **opts):
        try:
            table = pd.read_csv(opts["file"], dtype={"item": str, "rater": str})
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise CommandError(f"{opts['file']}: cannot read the CSV ({exc})") from exc
        try:
            domain = [float(v) for v in opts["domain"].split(",")] if opts["domain"] else None
        except ValueError:
            raise CommandError(f"--domain {opts['domain']!r}: give numbers separated by commas, e.g. 1,2,3,4,5") from None
        try:
            agreement.check_csv_columns(table.columns)
            report = agreement.agreement_report(
                table, opts["level"], value_domain=domain, bootstrap=opts["bootstrap"], seed=opts["seed"], with_raters=opts["raters"]
            )
        except ValueError as exc:
            hint = " (the scale given with --domain)" if domain is not None and "outside the value domain" in str(exc) else ""
            raise CommandError(f"{opts['file']}: {exc}{hint}") from exc
        if opts["json"]:
            self.stdout.write(json.dumps(report.to_dict(), indent=2))
            return
        result = report.result
        self.stdout.write(f"alpha ({result.level}) = {_shown(result)}  units={result.units} values={result.pairable_values} raters={result.raters}")
        for r in report.raters:
            alpha_without = numbers.decimals(r.alpha_without) if r.alpha_without is not None else (r.alpha_without_reason or "n/a")
            corr = numbers.decimals(r.correlation_with_rest) if r.correlation_with_rest is not None else "n/a"
            self.stdout.write(f"  {r.rater}: ratings={r.ratings} corr_with_rest={corr} alpha_without={alpha_without}")
