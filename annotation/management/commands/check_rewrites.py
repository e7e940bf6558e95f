"""`manage.py check_rewrites FILE`: run the automatic rewrite checks on a JSONL file of rewrites.

A thin wrapper over annotation.quality.rewrite_audit, for builders auditing data collected elsewhere.
"""
import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation.quality.rewrite_audit import ERROR, FAIL, PASS, audit_lines
from annotation.text.rewrite_checks import DEFAULT_TYPO_MAX_EDIT_RATIO


class Command(BaseCommand):
    help = (
        "Run Quorum's automatic rewrite checks on a JSONL file, one rewrite per line: "
        '{"source": ..., "slot_values": [...], "variant": paraphrase|typos|verbose|simplified, "rewrite": ...}. '
        "Prints a verdict (PASS, FAIL or ERROR) and its reasons per line, then a summary. "
        "Exit status: 0 when every line passes, 1 when a rewrite fails a check, 2 when a line cannot be read."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="Path of the JSONL file ('-' for standard input).")
        parser.add_argument(
            "--typo-max-edit-ratio",
            type=float,
            default=DEFAULT_TYPO_MAX_EDIT_RATIO,
            help="Typos may change at most this share of the source's characters (default %(default)s).",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object per line instead of text.")

    def handle(self, *args, file, typo_max_edit_ratio, json: bool = False, **options):
        if not 0 < typo_max_edit_ratio <= 1:
            raise CommandError("--typo-max-edit-ratio must be above 0 and at most 1.")
        try:
            stream = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from None
        counts = {PASS: 0, FAIL: 0, ERROR: 0}
        try:
            for verdict in audit_lines(stream, typo_max_edit_ratio):
                counts[verdict.verdict] += 1
                self.stdout.write(_json_dumps(verdict.as_dict()) if json else verdict.as_text())
        except UnicodeDecodeError:
            raise CommandError(f"{file} is not UTF-8 text.") from None
        finally:
            if stream is not sys.stdin:
                stream.close()
        total = sum(counts.values())
        summary = f"{total} rewrite(s): {counts[PASS]} pass, {counts[FAIL]} fail, {counts[ERROR]} unreadable"
        self.stderr.write(summary)
        if counts[ERROR]:
            sys.exit(2)
        if counts[FAIL]:
            sys.exit(1)


def _json_dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)
