"""Forms of the organizer pages: corpus upload, job creation, and quality control (voting, quality
settings, verdict overrides).

The job form builds one field per task-type setting from the task type's `settings_help`, so a
new task type brings its settings to the form without a change here.
"""
import json
import re
from decimal import Decimal

from django import forms

from quorum import numbers

from .. import task_types
from ..models import (
    SPEECH_ERRORS_MAX_WER,
    SPEECH_ERRORS_MIN_WER,
    CheckOverride,
    Corpus,
    DecisionRule,
    ExportRun,
    OnVotedDown,
    QualityPolicy,
    Response,
    SourceFormat,
    Worker,
)
from ..selectors import gold as gold_selectors
from ..selectors.dashboard import corpora_with_counts
from ..services.export_ood import OutOfDomain
from ..services.imports import LANGUAGE_HELP
from ..services.jobs import DEFAULT_TASK_TYPE, Selection
from ..services.quality import COUNT_FIELDS as QUALITY_COUNT_FIELDS
from ..services.quality import COUNT_MAX as QUALITY_COUNT_MAX
from ..services.quality import COUNT_MINIMUMS as QUALITY_COUNT_MINIMUMS
from ..services.quality import RATE_FIELDS as QUALITY_RATE_FIELDS
from ..services.voting import DEFAULT_VOTE_REWARD, VOTE_REWARD_HELP
from ..text.languages import MAX_TAG_LENGTH, LanguageTagError, stated_tag

SELECTION_MODES = [
    ("all", "Every source turn"),
    ("sample", "A random sample of turns"),
    ("dialogs", "The turns of chosen dialogs"),
]


class CorpusUploadForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="A name unique across Quorum.")
    source_format = forms.ChoiceField(
        label="Format", choices=SourceFormat.choices,
        help_text="The file's format; a file of another format is refused by the import, which says what it found.",
    )
    data = forms.FileField(label="Corpus file", help_text="MultiWOZ data.json, DSTC9 logs.json, DSTC6 JSON or Quorum JSONL; or a .zip holding that one file.")
    labels = forms.FileField(required=False, help_text="Optional: DSTC9 labels.json, aligned with logs.json.")
    knowledge = forms.FileField(required=False, help_text="Optional: DSTC9 knowledge.json.")
    language = forms.CharField(required=False, max_length=MAX_TAG_LENGTH, help_text=LANGUAGE_HELP)

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if Corpus.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A corpus named {name!r} already exists; choose another name.")
        return name

    def clean_language(self):
        try:
            return stated_tag(self.cleaned_data["language"])
        except LanguageTagError as exc:
            raise forms.ValidationError(str(exc)) from None

    #: The files only a DSTC9 corpus takes: their boxes are shown with that format alone.
    dstc9_only = ("labels", "knowledge")
    dstc9 = SourceFormat.DSTC9.value

    def files_by_role(self) -> dict:
        return {role: self.cleaned_data[role] for role in ("data", "labels", "knowledge") if self.cleaned_data.get(role)}


#: Words of setting names that are not written as plain lower-case words in a label.
_LABEL_WORDS = {"qa": "QA", "heldout": "held-out", "asr": "ASR", "oos": "out-of-scope"}


def setting_label(name: str) -> str:
    """A setting's label from its name: "qa_pairs" -> "QA pairs", "heldout_share" -> "Held-out share"."""
    text = " ".join(_LABEL_WORDS.get(word, word) for word in name.split("_"))
    return text[:1].upper() + text[1:]


def setting_field_name(kind_key: str, setting: str) -> str:
    return f"setting__{kind_key}__{setting}"


def _setting_field(default, help_text: str, label: str) -> forms.Field:
    """A form field that fits the setting's default value; its value is parsed back in `_parse_setting`."""
    common = {"label": label, "help_text": help_text, "required": False}
    if isinstance(default, bool):
        return forms.BooleanField(initial=default, **common)
    if isinstance(default, int):
        return forms.IntegerField(initial=default, **common)
    if isinstance(default, float):
        return forms.FloatField(initial=default, **common)
    if isinstance(default, list) and all(isinstance(v, str) for v in default):
        return forms.CharField(initial=", ".join(default), **{**common, "help_text": f"{help_text} Separate with commas."})
    if isinstance(default, str):
        return forms.CharField(initial=default, **common)
    if default is None:  # off unless given (a subset threshold): the type's checks say what it takes
        return forms.CharField(initial="", **common)
    return forms.CharField(initial=json.dumps(default), **{**common, "help_text": f"{help_text} As JSON."})


def _parse_setting(default, value):
    """The setting's value from its form field; None when left empty (the default applies)."""
    if value in (None, ""):
        return False if isinstance(default, bool) else None
    if isinstance(default, list) and all(isinstance(v, str) for v in default):
        return [part for part in (p.strip() for p in value.split(",")) if part]
    if isinstance(default, (bool, int, float, str)):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        if default is None:
            return value  # not a number: the type's own check names what it takes
        raise forms.ValidationError(f"Not valid JSON: {exc.msg}.") from None


def _setting_text(default, value):
    """A setting's value as its form field shows it: the inverse of `_parse_setting`."""
    if value is None:
        return ""
    if isinstance(default, list) and all(isinstance(v, str) for v in default) and isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(default, (bool, int, float, str)) or (default is None and not isinstance(value, (list, dict))):
        return value
    return json.dumps(value)


MAX_SETTING_FILE_BYTES = 20 * 1024 * 1024


def _upload_text(upload) -> str:
    """An uploaded file's text; its name (as uploaded) in the messages."""
    if upload.size > MAX_SETTING_FILE_BYTES:
        raise forms.ValidationError(f"{upload.name}: larger than {MAX_SETTING_FILE_BYTES // (1024 * 1024)} MB.")
    try:
        return upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise forms.ValidationError(f"{upload.name}: not UTF-8 text; save it as UTF-8.") from None


def _setting_files(kind) -> dict:
    """Settings of `kind` given as files: name -> what the file is (`SettingFiles`)."""
    files = task_types.capability(kind, task_types.SettingFiles)
    return dict(files.setting_files) if files else {}


def _payload_file(kind) -> str:
    """What a payload file of `kind` is, when an organizer may give one (`FromPayloads`); else ""."""
    payloads = task_types.capability(kind, task_types.FromPayloads)
    return payloads.payload_file if payloads else ""


def _read_setting_file(kind, setting: str, upload):
    """A setting's value from its uploaded file (None when none was given); the messages name the
    file as uploaded, never where the server keeps it."""
    if not upload:
        return None
    try:
        return kind.read_setting_file(setting, _upload_text(upload), upload.name)
    except task_types.TaskTypeSettingsError as exc:
        raise forms.ValidationError(f"{exc.errors.get(setting, exc)}.") from None


def _corpus_label(corpus: Corpus) -> str:
    """"MultiWOZ val (999 dialogs, 7,374 user turns)": the counts `corpora_with_counts` annotates."""
    dialogs, user_turns = corpus.dialog_count, corpus.user_turn_count  # type: ignore[attr-defined]
    return (
        f"{corpus.name} ({numbers.count(dialogs)} dialog{'' if dialogs == 1 else 's'}, "
        f"{numbers.count(user_turns)} user turn{'' if user_turns == 1 else 's'})"
    )


class JobForm(forms.Form):
    corpus = forms.ModelChoiceField(
        # With its counts in the choices' one query: the builder sees what a sample can draw from.
        queryset=corpora_with_counts().order_by("name"), required=False,
        help_text="The corpus whose turns become items (after its name: its dialogs, and its user turns, what a sample of "
        "a user-turn task type draws from); for a type built from a payload file, a corpus whose knowledge gives the payloads "
        "when no file is given.",
    )
    payloads = forms.FileField(
        label="Payload file", required=False,
        help_text="For a task type whose items are payloads (pairwise comparisons, question paraphrases, ratings, FED): the file, in the format shown with the type's settings below.",
    )
    name = forms.CharField(max_length=200, help_text="What annotators see in their list of jobs, and what the dashboard and exports call it.")
    task_type = forms.ChoiceField(label="Task type", help_text="The kind of work; its own settings follow it.")
    selection_mode = forms.ChoiceField(
        label="Selection", choices=SELECTION_MODES, initial="all", widget=forms.RadioSelect,
        help_text="Which of the corpus's turns the task type takes become items, one item each.",
    )
    sample_size = forms.IntegerField(required=False, min_value=1, help_text="With a sample: how many turns.")
    seed = forms.IntegerField(initial=0, required=False, help_text="With a sample: the same seed draws the same sample.")
    dialog_ids = forms.CharField(
        label="Dialog ids", required=False, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="With chosen dialogs: their ids in the source corpus, separated by spaces, commas or new lines.",
    )
    redundancy = forms.IntegerField(initial=1, min_value=1, max_value=50, help_text="Responses wanted per item.")
    reward = forms.DecimalField(initial=Decimal("0.50"), min_value=0, max_digits=8, decimal_places=2, help_text="Pay per response, in USD.")
    claim_timeout_minutes = forms.IntegerField(
        label="Claim timeout (minutes)", initial=30, min_value=1, max_value=24 * 60,
        help_text="A claimed item is freed for others after this many minutes.",
    )
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="Shown to annotators above every item.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=Worker.objects.filter(provider=Worker.INHOUSE).order_by("external_id"), required=False,
        help_text="In-house annotators the job is open to; choose none to open it to all.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only the kinds whose items are corpus turns: payload types are made by campaigns or from a
        # payload file, votes by turning voting on; offering them here would only end in a refusal.
        self.kinds = sorted(
            (k for k in task_types.registry().values() if isinstance(k, task_types.FromCorpusTurns) or _payload_file(k)),
            key=lambda k: k.key,
        )
        self.fields["corpus"].label_from_instance = _corpus_label
        # In-house annotators by their user names: the queryset holds in-house workers only.
        self.fields["annotators"].label_from_instance = lambda worker: worker.external_id
        self.fields["task_type"].choices = [(k.key, k.label or k.key) for k in self.kinds]
        self.fields["task_type"].initial = DEFAULT_TASK_TYPE if DEFAULT_TASK_TYPE in {k.key for k in self.kinds} else None
        for kind in self.kinds:
            for setting, (default, help_text) in kind.settings_help.items():
                label = setting_label(setting)
                if setting in _setting_files(kind):  # given as a file: a list of records is no text box
                    self.fields[setting_field_name(kind.key, setting)] = forms.FileField(
                        label=label, required=False, help_text=f"{help_text} {_setting_files(kind)[setting]}"
                    )
                else:
                    self.fields[setting_field_name(kind.key, setting)] = _setting_field(default, help_text, label)

    @staticmethod
    def initial_from_creation(run) -> dict:
        """The form as the builder filled it in for a job creation ("Change the request"): every
        field the run keeps. A setting given as a file is not kept as a file (`setting_files_given`)."""
        selection = run.selection or {}
        initial = {
            "corpus": run.corpus_id, "name": run.name, "task_type": run.task_type,
            "selection_mode": selection.get("mode", "all"), "sample_size": selection.get("size"), "seed": selection.get("seed") or 0,
            "dialog_ids": " ".join(selection.get("dialog_ids") or []), "redundancy": run.redundancy, "reward": run.reward,
            "claim_timeout_minutes": run.claim_timeout_minutes, "instructions": run.instructions, "annotators": list(run.annotator_ids or []),
        }
        kind = task_types.registry().get(run.task_type)
        for setting, (default, _help) in kind.settings_help.items() if kind else ():
            if setting in (run.settings or {}) and setting not in _setting_files(kind):
                initial[setting_field_name(kind.key, setting)] = _setting_text(default, run.settings[setting])
        return initial

    @staticmethod
    def setting_files_given(run) -> list[str]:
        """Labels of the settings a job creation was given as files: the form cannot fill a file in."""
        kind = task_types.registry().get(run.task_type)
        files = _setting_files(kind) if kind else {}
        return [setting_label(name) for name in files if (run.settings or {}).get(name)]

    @property
    def payload_keys(self) -> list[str]:
        """The offered types whose items come from a payload file: the page shows the file's field for them."""
        return [k.key for k in self.kinds if _payload_file(k)]

    @property
    def turn_keys(self) -> list[str]:
        """The offered types whose items are corpus turns: the page shows the turn selection for them."""
        return [k.key for k in self.kinds if not _payload_file(k)]

    def settings_groups(self):
        """[(task type, [bound fields of its settings])] for the template."""
        return [(kind, [self[setting_field_name(kind.key, name)] for name in kind.settings_help]) for kind in self.kinds]

    def clean(self):
        data = super().clean()
        kind_key = data.get("task_type")
        if kind_key:
            kind = task_types.get(kind_key)
            data["settings"] = self._clean_settings(kind)
            if isinstance(kind, task_types.FromCorpusTurns) and not data.get("corpus"):
                self.add_error("corpus", "Choose the corpus whose turns become items.")
            if isinstance(kind, task_types.FromPayloads) and data.get("payloads"):
                try:
                    data["payload_text"] = _upload_text(data["payloads"])
                except forms.ValidationError as exc:
                    self.add_error("payloads", exc)
            elif isinstance(kind, task_types.FromPayloads) and not data.get("corpus"):
                self.add_error("payloads", f"Give a payload file ({kind.payload_file}) or choose a corpus with knowledge.")
        mode = data.get("selection_mode")
        if mode == "sample" and not data.get("sample_size"):
            self.add_error("sample_size", "A sample needs a size of at least 1.")
        if mode == "dialogs" and not self.dialog_id_list():
            self.add_error("dialog_ids", "List at least one dialog id.")
        return data

    def _clean_settings(self, kind) -> dict:
        settings = {}
        for setting, (default, _help) in kind.settings_help.items():
            field = setting_field_name(kind.key, setting)
            try:
                if setting in _setting_files(kind):
                    value = _read_setting_file(kind, setting, self.cleaned_data.get(field))
                else:
                    value = _parse_setting(default, self.cleaned_data.get(field))
            except forms.ValidationError as exc:
                self.add_error(field, exc)
                continue
            if value is not None:
                settings[setting] = value
        try:
            return kind.clean_settings(settings)
        except task_types.TaskTypeSettingsError as exc:
            for setting, message in exc.errors.items():
                field = setting_field_name(kind.key, setting)
                self.add_error(field if field in self.fields else None, f"{message}.")
            return {}

    def dialog_id_list(self) -> list[str]:
        return [part for part in re.split(r"[\s,]+", self.cleaned_data.get("dialog_ids") or "") if part]

    @property
    def builds_from_payloads(self) -> bool:
        return isinstance(task_types.get(self.cleaned_data["task_type"]), task_types.FromPayloads)

    def payload_request(self) -> dict:
        """Keyword arguments for `services.payload_jobs.create_payload_job_from_file`."""
        request = self.job_request()
        del request["selection"]
        if "payload_text" in self.cleaned_data:
            request.update(payload_text=self.cleaned_data["payload_text"], payload_file_name=self.cleaned_data["payloads"].name, corpus=None)
        return request

    def job_request(self) -> dict:
        """Keyword arguments for `services.jobs.create_job`."""
        data = self.cleaned_data
        return {
            "corpus": data["corpus"],
            "name": data["name"],
            "task_type": data["task_type"],
            "settings": data["settings"],
            "selection": Selection(
                mode=data["selection_mode"], size=data.get("sample_size"), seed=data.get("seed") or 0,
                dialog_ids=self.dialog_id_list(),
            ),
            "redundancy": data["redundancy"],
            "reward": data["reward"],
            "instructions": data.get("instructions", ""),
            "claim_timeout_minutes": data["claim_timeout_minutes"],
            "annotators": list(data.get("annotators") or []),
        }

    #: Where a service error about a request field shows on this form.
    FORM_FIELD = {
        "selection": "selection_mode", "selection.size": "sample_size", "selection.seed": "seed", "selection.dialog_ids": "dialog_ids",
        "settings": None, "state": None, "non_field_errors": None, "payloads": "payloads",
    }

    def add_service_error(self, fields: dict) -> None:
        for field, messages in fields.items():
            if field == "selection" and isinstance(messages, dict):  # a field of the selection
                self.add_service_error({f"selection.{inner}": msgs for inner, msgs in messages.items()})
                continue
            target = self.FORM_FIELD.get(field, field)
            if target is not None and target not in self.fields:
                target = None
            if isinstance(messages, dict):  # per-setting messages
                messages = [f"{name}: {'; '.join(msgs)}" for name, msgs in messages.items()]
            for message in messages:
                self.add_error(target, message)


# --- Quality control (issue 5): voting, quality settings, verdict overrides ------------------------


def _policy_help(name: str) -> str:
    """The help text of a QualityPolicy setting: one wording for the model, the form and the API."""
    return str(QualityPolicy._meta.get_field(name).help_text)


def _policy_label(name: str) -> str:
    return setting_label(name)


class VotingForm(forms.Form):
    """Voting on or off, with its settings (services.voting.enable_voting checks them again)."""

    enabled = forms.BooleanField(label="Voting on", required=False, help_text=_policy_help("voting_enabled"))
    votes_per_response = forms.IntegerField(
        min_value=1, max_value=50, initial=3, help_text=_policy_help("votes_per_response")
    )
    against_threshold = forms.IntegerField(
        label="Votes against to re-collect", min_value=1, max_value=50, initial=2, help_text=_policy_help("against_threshold")
    )
    max_rounds = forms.IntegerField(label="Max rounds", min_value=1, max_value=50, initial=3, help_text=_policy_help("max_rounds"))
    vote_reward = forms.DecimalField(
        label="Pay per vote (USD)", min_value=Decimal("0"), max_digits=8, decimal_places=2, initial=DEFAULT_VOTE_REWARD, required=False,
        help_text=VOTE_REWARD_HELP,
    )
    on_voted_down = forms.ChoiceField(
        label="A voted-down response is", choices=OnVotedDown.choices, initial=OnVotedDown.SOFT_REJECT,
        help_text=_policy_help("on_voted_down"),
    )
    decision_rule = forms.ChoiceField(
        label="Decided by", choices=DecisionRule.choices, initial=DecisionRule.PUBLISHED, required=False, help_text=_policy_help("decision_rule")
    )
    model_sure = forms.FloatField(label="Model: sure at", min_value=0.51, max_value=1, initial=0.85, required=False,
                                   help_text=_policy_help("model_sure"))
    model_max_votes = forms.IntegerField(
        label="Model: most votes", min_value=1, max_value=50, initial=5, required=False, help_text=_policy_help("model_max_votes")
    )

    def clean(self):
        data = super().clean()
        votes, against = data.get("votes_per_response"), data.get("against_threshold")
        most = data.get("model_max_votes")
        if votes is not None and most is not None and most < votes:
            self.add_error("model_max_votes", f"Cannot be below the votes per response ({votes}).")
        if votes is not None and against is not None and against > votes:
            self.add_error("against_threshold", f"Cannot exceed the votes per response ({votes}).")
        return data

    @classmethod
    def initial_for(cls, policy, vote_reward=None) -> dict:
        if policy is None:
            return {"enabled": False}
        return {
            "enabled": policy.voting_enabled,
            **({"vote_reward": vote_reward} if vote_reward is not None else {}),
            "votes_per_response": policy.votes_per_response,
            "against_threshold": policy.against_threshold,
            "max_rounds": policy.max_rounds,
            "on_voted_down": policy.on_voted_down,
            "decision_rule": policy.decision_rule,
            "model_sure": policy.model_sure,
            "model_max_votes": policy.model_max_votes,
        }

    def settings(self) -> dict:
        """Keyword arguments for enable_voting."""
        settings = {k: self.cleaned_data[k] for k in ("votes_per_response", "against_threshold", "max_rounds", "on_voted_down")}
        settings["vote_reward"] = self.cleaned_data.get("vote_reward")  # left empty: the vote job's pay as it is
        # The reliability model's settings are optional on the form: left out, the published rule decides.
        for name in ("decision_rule", "model_sure", "model_max_votes"):
            given = self.cleaned_data.get(name)
            settings[name] = self.fields[name].initial if given in (None, "") else given
        return settings


class QualitySettingsForm(forms.Form):
    """Gold, onboarding and flag thresholds (services.quality.set_quality); one field per setting."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in QUALITY_RATE_FIELDS:
            self.fields[name] = forms.FloatField(
                label=_policy_label(name), min_value=0, max_value=1, help_text=f"{_policy_help(name)} From 0 to 1.",
                initial=QualityPolicy._meta.get_field(name).default,
            )
        for name in QUALITY_COUNT_FIELDS:
            self.fields[name] = forms.IntegerField(
                label=_policy_label(name), min_value=QUALITY_COUNT_MINIMUMS.get(name, 0), max_value=QUALITY_COUNT_MAX,
                help_text=_policy_help(name), initial=QualityPolicy._meta.get_field(name).default,
            )
        self.fields["flags_reject"] = forms.BooleanField(
            label="Soft-reject flagged responses", required=False, help_text=_policy_help("flags_reject"),
        )

    @staticmethod
    def initial_for(policy) -> dict:
        if policy is None:
            return {}
        return {name: getattr(policy, name) for name in (*QUALITY_RATE_FIELDS, *QUALITY_COUNT_FIELDS, "flags_reject")}

    def groups(self):
        """[(heading, [bound fields])] for the template."""
        gold = ("gold_start_rate", "gold_floor_rate", "gold_decay_items", "session_gap_minutes", "gold_min_answered", "gold_max_failure_rate")
        onboarding = ("onboarding_items", "onboarding_pass_rate")
        shown = set(gold) | set(onboarding)
        flags = [n for n in self.fields if n not in shown]
        return [
            ("Gold items", [self[n] for n in gold]),
            ("Onboarding", [self[n] for n in onboarding]),
            ("Worker flags", [self[n] for n in flags]),
        ]


class OverrideForm(forms.Form):
    """A reviewer's decision on one response, replacing an automatic verdict; the reason is required."""

    status = forms.ChoiceField(
        label="New status",
        choices=[(s.value, s.label) for s in Response.SETTLED],
    )
    check = forms.ChoiceField(
        label="Verdict overridden", choices=CheckOverride.Check.choices, required=False,
        help_text="By default the vote outcome on a job with a vote, none on a job without.",
    )
    reason = forms.CharField(
        max_length=2000, widget=forms.TextInput(attrs={"size": 30}), help_text="Why the automatic verdict is wrong; kept with the decision.",
    )
    recollect = forms.BooleanField(
        label="Re-collect the item", required=False, help_text="With a rejection: reopen the item for a new response.",
    )

    def clean_reason(self):
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Give the reason for overriding the automatic verdict.")
        return reason

    def clean(self):
        data = super().clean()
        if data.get("recollect") and data.get("status") == Response.Status.ACCEPTED:
            self.add_error("recollect", "Only a rejected response can be re-collected.")
        return data


class GoldItemForm(forms.Form):
    """A gold item from an item of the job: its number as the pages show it, and the known answer per
    answer field.

    One field per answer field of the job's task type (`gold__<name>`); blank ones are not graded.
    annotation.services.gold checks the request again and says what to fix. `item_id` is the id of
    the numbered item once the form is valid.
    """

    item = forms.IntegerField(
        label="Item", min_value=1,
        help_text="The item's number in this job, as the review queue and the preview show it (item 1, 2, …); "
        "the gold item shows workers the same content.",
    )

    def __init__(self, *args, job=None, answer_fields=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.job = job
        self.item_id: int | None = None
        self.answer_names = []
        for f in answer_fields:
            name = self.field_name(f["name"])
            common = {"label": f"Known answer: {f['label']}", "required": False, "help_text": f.get("help", "")}
            if f.get("choices"):
                self.fields[name] = forms.ChoiceField(choices=[("", "(not graded)")] + [(str(c), str(c)) for c in f["choices"]], **common)
            else:
                self.fields[name] = forms.CharField(max_length=5000, **common)
            self.answer_names.append(f["name"])

    @staticmethod
    def field_name(answer: str) -> str:
        return f"gold__{answer}"

    def clean(self):
        data = super().clean()
        if self.answer_names and not any(data.get(self.field_name(n)) for n in self.answer_names):
            self.add_error(None, "Give the known answer to at least one field.")
        return data

    def clean_item(self) -> int:
        number = self.cleaned_data["item"]
        if self.job is not None:
            self.item_id = gold_selectors.item_numbered(self.job, number)
            if self.item_id is None:  # only a refusal needs the range
                highest = gold_selectors.highest_item_number(self.job)
                numbered = f"its items are numbered 1 to {highest}" if highest else "it has no items"
                raise forms.ValidationError(f"This job has no item {number}: {numbered}.")
        return number

    def gold(self) -> dict:
        """The known answer as the service takes it: {answer field: value}, blank fields left out."""
        return {n: self.cleaned_data[self.field_name(n)] for n in self.answer_names if self.cleaned_data.get(self.field_name(n))}

    def add_request_error(self, exc) -> None:
        """Show a GoldRequestError under the fields it names."""
        for message in exc.item:
            self.add_error("item", f"{message[0].upper()}{message[1:]}.")
        for message in exc.gold:
            self.add_error(None, f"{message[0].upper()}{message[1:]}.")
        for answer, messages in exc.fields.items():
            target = self.field_name(answer) if self.field_name(answer) in self.fields else None
            for message in messages:
                self.add_error(target, message)


class ExportForm(forms.Form):
    """The job page's export options (services.exports checks them again)."""

    include_audio = forms.BooleanField(label="Include the recordings (audio/)", required=False,
                                       help_text=ExportRun._meta.get_field("include_audio").help_text)
    speech_errors_wer = forms.FloatField(
        label="Speech errors: target WER", required=False, min_value=SPEECH_ERRORS_MIN_WER, max_value=SPEECH_ERRORS_MAX_WER,
        widget=forms.NumberInput(attrs={"step": "0.01", "placeholder": "off"}),
        help_text=ExportRun._meta.get_field("speech_errors_wer").help_text
        + " RADDLE used 0.1 to 0.3. Slow: every user turn is synthesised and recognised several times, "
        "tens of CPU-seconds per 30 user turns.",
    )
    speech_errors_seed = forms.IntegerField(
        label="Speech errors: seed", required=False, min_value=0, max_value=2**31 - 1, initial=0,
        help_text=ExportRun._meta.get_field("speech_errors_seed").help_text,
    )

    out_of_domain_corpus = forms.ModelChoiceField(
        label="Out-of-domain set: draw from corpus", required=False, queryset=Corpus.objects.order_by("name"), empty_label="off",
        help_text=ExportRun._meta.get_field("out_of_domain_corpus").help_text + " Labelled out of domain in the corpus's format; the mapping is in manifest.json.",
    )
    out_of_domain_rate = forms.FloatField(
        label="Out-of-domain set: rate", required=False, min_value=0.0, max_value=1.0, initial=0.2,
        widget=forms.NumberInput(attrs={"step": "0.05"}), help_text=ExportRun._meta.get_field("out_of_domain_rate").help_text,
    )
    out_of_domain_seed = forms.IntegerField(
        label="Out-of-domain set: seed", required=False, min_value=0, max_value=2**31 - 1, initial=0,
        help_text=ExportRun._meta.get_field("out_of_domain_seed").help_text,
    )
    out_of_domain_mode = forms.ChoiceField(
        label="Out-of-domain set: mode", required=False, initial="replace",
        choices=ExportRun._meta.get_field("out_of_domain_mode").choices, help_text=ExportRun._meta.get_field("out_of_domain_mode").help_text,
    )

    def __init__(self, *args, audio: bool = False, corpus_id: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if not audio:  # only spoken-reading jobs have recordings
            del self.fields["include_audio"]
        if corpus_id is None:  # the out-of-domain set mixes the job's corpus dialogs
            for name in ("out_of_domain_corpus", "out_of_domain_rate", "out_of_domain_seed", "out_of_domain_mode"):
                del self.fields[name]
            return
        # Out-of-domain utterances come from another corpus than the job's own.
        others = self.fields["out_of_domain_corpus"]
        others.queryset = others.queryset.exclude(pk=corpus_id)
        if not others.queryset.exists():
            others.help_text += " No other corpus is imported yet: import one to draw from."

    def clean(self):
        data = super().clean()
        if data.get("out_of_domain_corpus") is not None and data.get("out_of_domain_rate") in (None, 0):
            self.add_error("out_of_domain_rate", "Give the share of user turns to mix (above 0, at most 1).")
        return data

    def options(self) -> dict:
        data = self.cleaned_data
        corpus = data.get("out_of_domain_corpus")
        return {
            "include_audio": bool(data.get("include_audio")),
            "speech_errors_wer": data["speech_errors_wer"],
            "speech_errors_seed": data["speech_errors_seed"] or 0,
            "out_of_domain": None if corpus is None else OutOfDomain(
                corpus.pk, data["out_of_domain_rate"], data.get("out_of_domain_seed") or 0, data.get("out_of_domain_mode") or "replace"
            ),
        }
