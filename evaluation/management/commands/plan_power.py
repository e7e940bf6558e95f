import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services import runs
from evaluation.stats import power
from hits import providers
from quorum import numbers

from ._common import get_campaign


class Command(BaseCommand):
    help = (
        "Plan a human evaluation from a pilot (a ratings CSV as `rank` reads it, or a campaign's ratings): fit the variance components and "
        "find, by seeded simulation, the instances and raters per instance that separate adjacent systems of the "
        "top k (or detect --delta) with the given power, and what that costs with the provider's fees."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, nargs="?", help="Pilot ratings CSV (system,instance,rater,question,rating; optional kind).")
        parser.add_argument("--campaign", help="Use this campaign's ratings (name or id) as the pilot instead of a file.")
        parser.add_argument("--top-k", type=int, required=True, dest="top_k", help="Separate the adjacent pairs of the top K entries (by pilot mean).")
        parser.add_argument("--power", type=float, default=0.8, help="Target power 1-beta per pair (default 0.8).")
        parser.add_argument("--alpha", type=float, default=0.05, help="Level of the two-sided paired test (default 0.05).")
        parser.add_argument("--delta", type=float, help="Plan to detect this difference of final scores instead of the pilot's gaps.")
        parser.add_argument("--min-raters", type=int, default=1, dest="min_raters", help="Fewest raters per instance to consider (default 1).")
        parser.add_argument("--max-raters", type=int, default=power.DEFAULT_MAX_RATERS, dest="max_raters", help="Most raters per instance to consider (default 5).")
        parser.add_argument("--max-instances", type=int, default=power.DEFAULT_MAX_INSTANCES, dest="max_instances", help="Largest test set to consider.")
        parser.add_argument("--systems", type=int, help="Rows the campaign will rate, reference rows included (default: the pilot's).")
        parser.add_argument("--provider", choices=providers.keys(), default=providers.default_key(), help="Provider whose fees the cost uses.")
        parser.add_argument("--reward", default="0.10", help="Pay per response (one system on one instance, every question), USD.")
        parser.add_argument("--fee-rate", default="0", dest="fee_rate", help="Prolific's service fee rate of the account, e.g. 0.333.")
        parser.add_argument("--assignments-per-posting", type=int, default=1, dest="assignments_per_posting", help="Assignments per HIT or study.")
        parser.add_argument("--simulations", type=int, default=power.DEFAULT_SIMULATIONS, help="Simulated campaigns per size (default 2000).")
        parser.add_argument("--campaigns", type=int, default=power.report_power.DEFAULT_CAMPAIGNS, help="Campaigns per size scored as the report scores them (default 1000).")
        parser.add_argument("--seed", type=int, default=power.DEFAULT_SEED, help="Seed: the same seed gives the same plan.")
        parser.add_argument("--no-rater-ids", action="store_true", dest="no_rater_ids", help="The rater column is a position, not a person: no rater component.")
        parser.add_argument("--json", action="store_true", help="Print the plan as JSON.")

    def handle(self, *args, file, **opts):
        if (file is None) == (opts["campaign"] is None):
            raise CommandError("give the pilot either as a FILE or as --campaign NAME (one of them)")
        source = file.name if file is not None else f"campaign {opts['campaign']!r}"
        try:
            campaign = get_campaign(opts["campaign"]) if file is None else None
            model, rows = runs.fitted_pilot(campaign=campaign, source=file, name=file.name if file else "", no_rater_ids=opts["no_rater_ids"])
            result = power.plan(
                model, opts["top_k"], power=opts["power"], alpha=opts["alpha"], delta=opts["delta"],
                systems=opts["systems"] or rows, min_raters=opts["min_raters"], max_raters=opts["max_raters"],
                max_instances=opts["max_instances"], simulations=opts["simulations"], seed=opts["seed"], campaigns=opts["campaigns"],
                pricing=providers.get(opts["provider"]), reward=opts["reward"], fee_rate=opts["fee_rate"],
                assignments_per_posting=opts["assignments_per_posting"],
            )
        except ValueError as exc:
            raise CommandError(str(exc) if str(exc).startswith(source) else f"{source}: {exc}") from None
        body = result.as_dict()
        if opts["json"]:
            self.stdout.write(json.dumps(body, indent=2))
            return
        c = model.components
        self.stdout.write(
            f"pilot: {model.n_ratings} ratings, {model.n_instances} instances, {model.n_raters} raters; variance components "
            f"instance {numbers.decimals(c.instance)}, system x instance {numbers.decimals(c.system_instance)}, "
            f"rater {numbers.decimals(c.rater)}, residual {numbers.decimals(c.residual)}"
        )
        for pair in body["pairs"]:
            name = f"{pair['a']} vs {pair['b']}" if pair["a"] else "delta"
            self.stdout.write(f"  {name}: gap {numbers.decimals(pair['gap'], 4)}")
        self.stdout.write(
            f"power {opts['power']} at alpha {opts['alpha']} for the hardest pair, {body['systems']} systems rated "
            f"(each power from {result.campaigns} simulated campaigns per size; the search starts from a t-test simulated {result.simulations} times per size):"
        )
        for option in result.options:
            if option.instances is None:
                reached = "no size reaches it" if option.power is None else f"power {numbers.decimals(option.power)} at {result.max_instances} instances"
                self.stdout.write(f"  {option.raters_per_instance} raters: out of reach ({reached})")
                continue
            cost = f", cost {option.cost['total']} USD (fees {option.cost['fees']})" if option.cost else ""
            approx = "" if option.simulated else "≈ "
            self.stdout.write(
                f"  {option.raters_per_instance} raters: {option.instances} instances, {option.ratings} ratings, power {approx}{numbers.decimals(option.power)}{cost}"
            )
        if result.best:
            self.stdout.write(f"recommended: {result.best.instances} instances x {result.best.raters_per_instance} raters")
        for note in result.notes:
            self.stdout.write(f"note: {note}")
