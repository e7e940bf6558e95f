from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.interactive import selectors
from evaluation.interactive.services.scheduled import link_entry_system, run_schedule, set_schedule
from evaluation.models import Entry, TestSet


class Command(BaseCommand):
    help = (
        "RADDLE's evaluation service: `link` an entry to its registered system (endpoint), `schedule` a test set "
        "(top-k by automatic score, goals, dialogs, how often), `run` a test set's schedule now (beat runs it daily)."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        link = sub.add_parser("link", help="Register the endpoint of an entry: a system registered on the systems page.")
        link.add_argument("test_set", type=int, help="Id of the test set.")
        link.add_argument("entry", help="The entry as team/entry, e.g. team3/entry0.")
        link.add_argument("system", help="Name of the registered dialog system, or '-' to remove the link.")
        schedule = sub.add_parser("schedule", help="Create or replace a test set's schedule.")
        schedule.add_argument("test_set", type=int, help="Id of the test set.")
        schedule.add_argument("--goals", required=True, help="Name of the goal set workers are given.")
        schedule.add_argument("--metrics", required=True, help="Comma-separated objective metrics of the automatic score (Eq. 2).")
        schedule.add_argument("--lower-is-better", default="", help="Comma-separated metrics where lower is better.")
        schedule.add_argument("--top-k", type=int, default=3, help="How many of the best entries are offered an evaluation (default 3).")
        schedule.add_argument("--dialogs-per-goal", type=int, default=1, help="Dialogs per entry per goal (default 1).")
        schedule.add_argument("--stale-days", type=int, default=60, help="Evaluate an entry again after this many days (default 60).")
        schedule.add_argument("--disable", action="store_true", help="Keep the schedule but do not run it.")
        run = sub.add_parser("run", help="Run a test set's schedule now.")
        run.add_argument("test_set", type=int, help="Id of the test set.")

    def handle(self, *args, action, **opts):
        test_set = TestSet.objects.filter(pk=opts["test_set"]).first()
        if test_set is None:
            raise CommandError(f"no test set with id {opts['test_set']}")
        try:
            getattr(self, f"_{action}")(test_set, opts)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None

    def _link(self, test_set, opts):
        team_id, _, entry_id = opts["entry"].partition("/")
        entry = Entry.objects.filter(test_set=test_set, team__team_id=team_id, entry_id=entry_id).first()
        if entry is None:
            raise CommandError(f"no entry {opts['entry']!r} in {test_set}; give team/entry as imported")
        system = None
        if opts["system"] != "-":
            system = selectors.dialog_systems().filter(name=opts["system"]).first()
            if system is None:
                raise CommandError(f"no registered system named {opts['system']!r}; register it on the systems page first")
        entry = link_entry_system(entry, system)
        self.stdout.write(f"{entry.label}: endpoint {system.name if system else 'removed'}")

    def _schedule(self, test_set, opts):
        goal_set = selectors.goal_sets().filter(name=opts["goals"]).first()
        if goal_set is None:
            raise CommandError(f"--goals: no goal set named {opts['goals']!r}")
        schedule = set_schedule(
            test_set=test_set, goal_set=goal_set, metrics=opts["metrics"].split(","),
            lower_is_better=[m.strip() for m in opts["lower_is_better"].split(",") if m.strip()], top_k=opts["top_k"],
            dialogs_per_goal=opts["dialogs_per_goal"], stale_after_days=opts["stale_days"], enabled=not opts["disable"],
        )
        self.stdout.write(f"schedule of {test_set}: top {schedule.top_k} by {', '.join(schedule.metrics)}, every {schedule.stale_after_days} days"
                          f"{'' if schedule.enabled else ' (disabled)'}")

    def _run(self, test_set, opts):
        schedule = getattr(test_set, "interactive_schedule", None)
        if schedule is None:
            raise CommandError(f"{test_set} has no schedule; `interactive_service schedule` sets one up")
        result = run_schedule(schedule)
        if result["job"] is None:
            self.stdout.write("no entry is due (evaluated recently, no endpoint, or outside the top k)")
        else:
            self.stdout.write(f"launched chat job {result['job']} for {', '.join(result['entries'])}")
