from django.core.management.base import BaseCommand, CommandError

from evaluation.campaigns.services.imports import import_test_set
from evaluation.errors import EvaluationInputError


class Command(BaseCommand):
    help = "Import a DSTC9 Track 1 test set (labels.json, optionally knowledge.json and logs.json) into a challenge."

    def add_arguments(self, parser):
        parser.add_argument("labels", help="Path to labels.json.")
        parser.add_argument("--knowledge", help="Path to knowledge.json (checked against the labels' knowledge references).")
        parser.add_argument("--logs", help="Path to logs.json (the dialog contexts; needed for a crowd campaign).")
        parser.add_argument("--challenge", required=True)
        parser.add_argument("--name", default="test", help="Test set name (default: test).")

    def handle(self, *args, **opts):
        try:
            test_set = import_test_set(opts["challenge"], opts["name"], opts["labels"], opts["knowledge"], opts["logs"])
        except EvaluationInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"imported test set {test_set} with {test_set.size} instances")
