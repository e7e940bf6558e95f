from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job


class Command(BaseCommand):
    help = (
        "Create and launch an interactive (chat) job: workers chat with the given registered systems towards the goals of "
        "a goal set, end with Success or Fail and rate understanding and appropriateness 1-5 (DSTC9 Track 2). Every "
        "system gets --dialogs-per-goal dialogs per goal."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Job name (must be new).")
        parser.add_argument("--systems", required=True, help="Comma-separated names of registered systems, e.g. team3,team7.")
        parser.add_argument("--goals", required=True, help="Name of an imported goal set.")
        parser.add_argument("--dialogs-per-goal", type=int, default=1, help="Dialogs per system per goal (default 1).")
        parser.add_argument("--min-user-turns", type=int, default=1, help="Messages a worker must send before ending (default 1).")
        parser.add_argument("--reward", default="0.50", help="Pay per dialog, in USD (default 0.50).")
        parser.add_argument("--instructions", default="", help="Shown to workers above the goal (optional).")
        parser.add_argument(
            "--language", default="",
            help='The language workers and systems chat in, a BCP 47 tag such as "zh"; the chat page marks the messages with it '
            "(default: told from the goals' own words, else unmarked).",
        )

    def handle(self, *args, **opts):
        names = [part.strip() for part in opts["systems"].split(",") if part.strip()]
        found = {s.name: s for s in selectors.dialog_systems().filter(name__in=names)}
        missing = [n for n in names if n not in found]
        if missing:
            known = ", ".join(selectors.dialog_systems().values_list("name", flat=True)) or "none"
            raise CommandError(f"--systems: no registered system named {', '.join(map(repr, missing))} (registered: {known})")
        goal_set = selectors.goal_sets().filter(name=opts["goals"]).first()
        if goal_set is None:
            known = ", ".join(selectors.goal_sets().values_list("name", flat=True)) or "none"
            raise CommandError(f"--goals: no goal set named {opts['goals']!r} (imported: {known})")
        try:
            job = create_chat_job(
                name=opts["name"], systems=[found[n] for n in dict.fromkeys(names)], goal_set=goal_set,
                dialogs_per_goal=opts["dialogs_per_goal"], min_user_turns=opts["min_user_turns"], reward=opts["reward"],
                instructions=opts["instructions"], language=opts["language"],
            )
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"launched interactive job {job.pk} {job.name!r}: {job.items.count()} dialogs "
            f"({len(found)} systems x {goal_set.n_goals} goals x {opts['dialogs_per_goal']})"
        )
