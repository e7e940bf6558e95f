"""Create a draft job from a corpus, from a shell (a thin wrapper over services.jobs.create_job)."""
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Corpus
from annotation.services.jobs import JobError, Selection, create_job


class Command(BaseCommand):
    help = (
        "Create a draft job with one item per selected source turn of CORPUS_NAME: every turn, "
        "a random sample (--sample N --seed S) or the turns of chosen dialogs (--dialogs ID ...). "
        "Prints the job id and its item count; launch it with launch_job."
    )

    def add_arguments(self, parser):
        parser.add_argument("corpus_name", help="Name of an imported corpus.")
        parser.add_argument("--name", required=True, help="Name of the job.")
        parser.add_argument("--task-type", default="rewrite", help="Task type key (default: rewrite).")
        parser.add_argument("--redundancy", type=int, default=1, help="Responses wanted per item (default: 1).")
        parser.add_argument("--reward", default="0.50", help="Pay per response in USD (default: 0.50).")
        parser.add_argument("--instructions", default="", help="Shown to annotators above every item.")
        parser.add_argument("--claim-timeout", type=int, default=30, help="Minutes before a claimed item is freed (default: 30).")
        chosen = parser.add_mutually_exclusive_group()
        chosen.add_argument("--sample", type=int, metavar="N", help="Draw N source turns at random.")
        chosen.add_argument("--dialogs", nargs="+", metavar="ID", help="Only the turns of these dialogs (source ids).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of --sample; the same seed draws the same turns.")
        parser.add_argument(
            "--variants", nargs="+", metavar="VARIANT",
            help="Rewrite job: which variants to collect (paraphrase typos verbose simplified).",
        )
        parser.add_argument(
            "--setting", action="append", default=[], metavar="NAME=JSON",
            help="Any task-type setting, its value as JSON (e.g. typo_max_edit_ratio=0.25); may repeat.",
        )

    def handle(self, *args, corpus_name, **options):
        corpus = Corpus.objects.filter(name=corpus_name).first()
        if corpus is None:
            raise CommandError(f"No corpus named {corpus_name!r}; import it first (import_corpus).")
        settings = self._settings(options["setting"])
        if options["variants"]:
            settings["variants"] = options["variants"]
        if options["sample"] is not None:
            selection = Selection(mode="sample", size=options["sample"], seed=options["seed"])
        elif options["dialogs"]:
            selection = Selection(mode="dialogs", dialog_ids=options["dialogs"])
        else:
            selection = Selection()
        try:
            job = create_job(
                corpus=corpus,
                name=options["name"],
                task_type=options["task_type"],
                settings=settings,
                selection=selection,
                redundancy=options["redundancy"],
                reward=options["reward"],
                instructions=options["instructions"],
                claim_timeout_minutes=options["claim_timeout"],
            )
        except JobError as exc:
            raise CommandError(str(exc)) from None
        except ArithmeticError:
            raise CommandError(f"--reward must be an amount in USD such as 0.50, not {options['reward']!r}") from None
        self.stdout.write(f"Created draft job {job.pk} ({job.name!r}) with {job.items.count()} items.")

    @staticmethod
    def _settings(pairs) -> dict:
        settings = {}
        for pair in pairs:
            name, sep, value = pair.partition("=")
            if not sep or not name:
                raise CommandError(f"--setting {pair!r}: write NAME=JSON, e.g. typo_max_edit_ratio=0.25")
            try:
                settings[name] = json.loads(value)
            except json.JSONDecodeError:
                raise CommandError(f"--setting {name}: {value!r} is not JSON (quote text as \"...\")") from None
        return settings
