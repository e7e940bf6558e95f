import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns import leaderboard, ratings_csv
from evaluation.stats import report, scoring


class Command(BaseCommand):
    help = (
        "Score ratings collected anywhere (CSV: system,instance,rater,question,rating; optional kind, target, "
        "predicted) into the same leaderboard as `leaderboard`: one report per file, a JSON list when several."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path, help="Ratings CSV files.")
        parser.add_argument("--format", choices=sorted(leaderboard.FORMATS), default="md", help="Output format (default md).")
        parser.add_argument("--bootstrap", type=int, default=scoring.DEFAULT_BOOTSTRAP, help="Bootstrap resamples (at least 1000).")
        parser.add_argument("--seed", type=int, default=scoring.DEFAULT_SEED, help="Seed: the same seed gives the same numbers.")
        parser.add_argument(
            "--no-rater-ids", action="store_true",
            help="The rater column is a position (pos1, pos2...), not a person: resample instances only.",
        )

    def handle(self, *args, files, **opts):
        reports = []
        for path in files:
            try:
                ratings, truth, systems, questions = ratings_csv.read(path, name=path.name)
                body = report.build_report(
                    ratings, truth, systems, questions=questions, bootstrap=opts["bootstrap"], seed=opts["seed"],
                    rater_ids_known=not opts["no_rater_ids"],
                )
            except ValueError as exc:
                raise CommandError(f"{path.name}: {exc}" if not str(exc).startswith(path.name) else str(exc)) from None
            body["campaign"] = path.name
            reports.append(body)
        if opts["format"] == "json":
            dicts = [leaderboard.to_json_dict(r) for r in reports]
            self.stdout.write(json.dumps(dicts[0] if len(dicts) == 1 else dicts, indent=2))
            return
        for body in reports:
            if len(reports) > 1:
                self.stdout.write(f"# {body['campaign']}\n" if opts["format"] == "md" else f"# {body['campaign']}")
            self.stdout.write(leaderboard.render(body, opts["format"]), ending="")
