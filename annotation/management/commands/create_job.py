"""Create a draft job from a corpus or a payload file, from a shell (a thin wrapper over
services.job_creation.make_job_now, the path every corpus job takes, made here in this process, and
services.payload_jobs.create_payload_job_from_file)."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import task_types
from annotation.models import Corpus, RunStatus
from annotation.services.job_creation import make_job_now
from annotation.services.jobs import DEFAULT_TASK_TYPE, JobError, Selection
from annotation.services.payload_jobs import create_payload_job_from_file


def setting_files() -> dict[str, list[tuple[str, str]]]:
    """Every setting some task type takes as a file (`SettingFiles`): setting -> [(type label, what the
    file is)], one option each (`--qa-pairs`), so a new type's file settings need nothing here."""
    files: dict[str, list[tuple[str, str]]] = {}
    for _key, kind in sorted(task_types.registry().items()):
        given_as_files = task_types.capability(kind, task_types.SettingFiles)
        for setting, what in given_as_files.setting_files.items() if given_as_files else ():
            files.setdefault(setting, []).append((kind.label, what))
    return files


def payload_files() -> str:
    """What the payload file of each type that takes one is, for --payloads' help."""
    described = []
    for key, kind in sorted(task_types.registry().items()):
        payloads = task_types.capability(kind, task_types.FromPayloads)
        if payloads and payloads.payload_file:
            described.append(f"{key}: {payloads.payload_file}")
    return "; ".join(described)


class Command(BaseCommand):
    help = (
        "Create a draft job with one item per selected source turn of CORPUS_NAME: every turn, "
        "a random sample (--sample N --seed S) or the turns of chosen dialogs (--dialogs ID ...). "
        "Made in this process and recorded as a job creation (as the job form's and the API's are), its "
        "progress printed; prints the job id and its item count; launch it with launch_job. A task type whose items are "
        "payloads takes --payloads FILE, or CORPUS_NAME to build them from the corpus's own data."
    )

    def add_arguments(self, parser):
        parser.add_argument("corpus_name", nargs="?", help="Name of an imported corpus.")
        parser.add_argument("--payloads", metavar="FILE", help=f"For a payload task type: the payload file ({payload_files()}).")
        for setting, uses in setting_files().items():
            parser.add_argument(
                "--" + setting.replace("_", "-"), dest=setting, metavar="FILE", help=" ".join(f"{label}: {what}" for label, what in uses)
            )
        parser.add_argument("--name", required=True, help="Name of the job.")
        parser.add_argument("--task-type", default=DEFAULT_TASK_TYPE, help=f"Task type key (default: {DEFAULT_TASK_TYPE}).")
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
        corpus = None
        if corpus_name is not None:
            corpus = Corpus.objects.filter(name=corpus_name).first()
            if corpus is None:
                raise CommandError(f"No corpus named {corpus_name!r}; import it first (import_corpus).")
        try:
            kind = task_types.get(options["task_type"])
        except KeyError as exc:
            raise CommandError(f"--task-type: {exc.args[0]}") from None
        settings = self._settings(options["setting"])
        if options["variants"]:
            settings["variants"] = options["variants"]
        for setting in setting_files():
            if options[setting]:
                settings[setting] = self._setting_file(kind, setting, setting, options[setting])
        common = {
            "name": options["name"], "task_type": kind.key, "settings": settings, "redundancy": options["redundancy"],
            "reward": options["reward"], "instructions": options["instructions"], "claim_timeout_minutes": options["claim_timeout"],
        }
        if isinstance(kind, task_types.FromPayloads):
            job = self._payload_job(corpus, options["payloads"], common)
        elif corpus is None:
            raise CommandError("Name the corpus whose turns become items (CORPUS_NAME).")
        elif options["payloads"]:
            raise CommandError(f"--payloads: task type {kind.key!r} builds its items from corpus turns, not payloads.")
        else:
            job = self._corpus_job(corpus, options, common)
        self.stdout.write(f"Created draft job {job.pk} ({job.name!r}) with {job.items.count()} items.")

    def _payload_job(self, corpus, path, common):
        text = None
        if path:
            text = self._read(path, "--payloads")
        try:
            return create_payload_job_from_file(payload_text=text, payload_file_name=Path(path).name if path else "", corpus=corpus, **common)
        except JobError as exc:
            raise CommandError(str(exc)) from None
        except ArithmeticError:
            raise CommandError(f"--reward must be an amount in USD such as 0.50, not {common['reward']!r}") from None

    @staticmethod
    def _read(path, option) -> str:
        try:
            return Path(path).read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise CommandError(f"{option} {path}: cannot read it ({exc.strerror or exc})") from None
        except UnicodeDecodeError:
            raise CommandError(f"{option} {path}: not UTF-8 text; save it as UTF-8") from None

    def _setting_file(self, kind, option, setting, path):
        flag = "--" + option.replace("_", "-")
        if not isinstance(kind, task_types.SettingFiles) or setting not in kind.setting_files:
            raise CommandError(f"{flag}: task type {kind.key!r} takes no {setting.replace('_', ' ')}")
        try:
            return kind.read_setting_file(setting, self._read(path, flag), Path(path).name)
        except task_types.TaskTypeSettingsError as exc:
            raise CommandError(f"{flag}: {exc.errors.get(setting, exc)}") from None

    def _corpus_job(self, corpus, options, common):
        if options["sample"] is not None:
            selection = Selection(mode="sample", size=options["sample"], seed=options["seed"])
        elif options["dialogs"]:
            selection = Selection(mode="dialogs", dialog_ids=options["dialogs"])
        else:
            selection = Selection()
        self._tenths_reported = -1
        try:
            run = make_job_now(corpus=corpus, selection=selection, on_progress=self._progress, **common)
        except JobError as exc:
            raise CommandError(str(exc)) from None
        except ArithmeticError:
            raise CommandError(f"--reward must be an amount in USD such as 0.50, not {options['reward']!r}") from None
        if run.status != RunStatus.SUCCEEDED or run.job is None:
            raise CommandError(f"Job creation {run.pk} failed, nothing was created: {run.error}")
        return run.job

    def _progress(self, done: int, total: int) -> None:
        """Rows written, once per tenth of the way at most (a big corpus reports every batch of items)."""
        tenths = 10 * done // total if total else 10
        if tenths > self._tenths_reported:
            self._tenths_reported = tenths
            self.stdout.write(f"Writing items and slots: {done} of {total} rows")

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
