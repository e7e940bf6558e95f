from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.crowd import create_crowd_campaign, launch_crowd_job
from evaluation.errors import EvaluationInputError
from evaluation.models import Entry

from ._common import add_test_set_arguments, get_test_set


class Command(BaseCommand):
    help = (
        "Create a crowd campaign: the given finalist entries plus the ground truth and baseline as reference rows, "
        "rated on Appropriateness and Accuracy (1-5) by --raters workers per (instance, entry), in a seeded random order."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Campaign name.")
        add_test_set_arguments(parser)
        parser.add_argument("--entries", required=True, help="Comma-separated finalists as team/entry, e.g. team3/entry0,team7/entry2.")
        parser.add_argument("--raters", type=int, default=3, help="Raters per item (DSTC9: 3).")
        parser.add_argument("--sample", type=int, help="Rate a seeded sample of this many knowledge-seeking instances (default: all).")
        parser.add_argument("--sample-seed", type=int, default=0)
        parser.add_argument("--order-seed", type=int, help="Seed of the order in which items are offered (default: random, stored).")
        parser.add_argument("--reward", default="0.10", help="Pay per response, in USD.")
        parser.add_argument("--launch", action="store_true", help="Open the job to raters at once.")
        parser.add_argument(
            "--adaptive", action="store_true",
            help="Adaptive mode: rate in rounds and keep rating only the entries whose order is still uncertain (docs/evaluation.md).",
        )
        parser.add_argument("--confidence", type=float, default=0.95, help="Adaptive: confidence of a resolved pair, 0.5 to 0.999.")
        parser.add_argument("--top-k", type=int, help="Adaptive: resolve the pairs of the top K entries (default: every pair).")
        parser.add_argument("--budget-ratings", type=int, help="Adaptive: most ratings (responses) to use (default: the full design).")
        parser.add_argument("--round-size", type=int, default=100, help="Adaptive: instances per round (rating units per entry with --adaptive-unit rating).")
        parser.add_argument(
            "--adaptive-unit", choices=("instance", "rating"), default="instance",
            help="Adaptive: a round adds new items with every rater (instance, default) or one more rater at a time, on rated items or new ones (rating).",
        )

    def handle(self, *args, **opts):
        test_set = get_test_set(opts["challenge"], opts["test_set"])
        finalists = []
        for label in [part.strip() for part in opts["entries"].split(",") if part.strip()]:
            team_id, _, entry_id = label.partition("/")
            entry = Entry.objects.filter(test_set=test_set, team__team_id=team_id, entry_id=entry_id).first()
            if entry is None:
                raise CommandError(f"no entry {label!r} in test set {test_set}; give team/entry as imported")
            finalists.append(entry)
        try:
            crowd = create_crowd_campaign(
                opts["name"], test_set, finalists, redundancy=opts["raters"], sample_size=opts["sample"],
                sample_seed=opts["sample_seed"], order_seed=opts["order_seed"], reward=opts["reward"],
                adaptive={
                    "confidence": opts["confidence"], "top_k": opts["top_k"], "budget": opts["budget_ratings"], "round_size": opts["round_size"],
                    "unit": opts["adaptive_unit"],
                } if opts["adaptive"] else None,
            )
            if opts["launch"]:
                launch_crowd_job(crowd.campaign)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        items = crowd.job.items.count()
        self.stdout.write(
            f"created campaign {crowd.campaign.name!r}: job {crowd.job_id} with {items} items x {opts['raters']} rater{'' if opts['raters'] == 1 else 's'} "
            f"on {len(crowd.instances)} instances (order seed {crowd.order_seed}){'; launched' if opts['launch'] else ''}"
            + (f"; adaptive: rounds of {opts['round_size']} {'instances' if opts['adaptive_unit'] == 'instance' else 'rating units'}, looks at {crowd.round_sizes}" if opts["adaptive"] else "")
        )
