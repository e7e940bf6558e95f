from django.core.management.base import BaseCommand, CommandError

from evaluation.errors import EvaluationInputError
from evaluation.fed.results import results_here
from evaluation.fed.results_file import results_csv, results_markdown
from evaluation.models import FedSet


class Command(BaseCommand):
    help = (
        "Print a FED set's results: per system and question the mean answer with its 95% interval clustered by dialog (response at "
        "turn level) and by rater, and the raters' agreement per question (Krippendorff's ordinal alpha), as the set's page, its CSV "
        "and the API give them. Read from the results stored for the set's counted answers; computed here first, and stored, when "
        "the answers have changed since."
    )

    def add_arguments(self, parser):
        parser.add_argument("fed_set", help="Name or id of the FED set (the FED questionnaires page lists them).")
        parser.add_argument("--format", choices=["md", "csv"], default="md", help="Markdown (default) or CSV (the set page's download).")

    def handle(self, *args, fed_set, **opts):
        found = FedSet.objects.select_related("job").filter(name=fed_set).first()
        if found is None and str(fed_set).isdigit():
            found = FedSet.objects.select_related("job").filter(pk=int(fed_set)).first()
        if found is None:
            names = ", ".join(repr(n) for n in FedSet.objects.order_by("name").values_list("name", flat=True)[:20]) or "none"
            raise CommandError(f"no FED set {fed_set!r}; existing: {names}")
        try:
            stored = results_here(found)
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from None
        if opts["format"] == "csv":
            self.stdout.write(results_csv(stored.results, stored.agreement, note=stored.note), ending="")
        else:
            unit = "response" if found.level == FedSet.Level.TURN else "dialog"
            self.stdout.write(results_markdown(stored.results, stored.agreement, name=found.name, unit=unit, note=stored.note), ending="")
