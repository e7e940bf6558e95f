"""Forms of the organizer pages: corpus upload and job creation.

The job form builds one field per task-type setting from the task type's `settings_help`, so a
new task type brings its settings to the form without a change here.
"""
import json
import re
from decimal import Decimal

from django import forms

from . import task_types
from .models import Corpus, SourceFormat, Worker
from .services.jobs import Selection

SELECTION_MODES = [
    ("all", "Every source turn"),
    ("sample", "A random sample of turns"),
    ("dialogs", "The turns of chosen dialogs"),
]


class CorpusUploadForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="A name unique across Quorum.")
    source_format = forms.ChoiceField(label="Format", choices=SourceFormat.choices)
    data = forms.FileField(label="Corpus file", help_text="MultiWOZ data.json, DSTC9 logs.json, DSTC6 JSON or Quorum JSONL.")
    labels = forms.FileField(required=False, help_text="Optional: DSTC9 labels.json, aligned with logs.json.")
    knowledge = forms.FileField(required=False, help_text="Optional: DSTC9 knowledge.json.")

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if Corpus.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A corpus named {name!r} already exists; choose another name.")
        return name

    def files_by_role(self) -> dict:
        return {role: self.cleaned_data[role] for role in ("data", "labels", "knowledge") if self.cleaned_data.get(role)}


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
        raise forms.ValidationError(f"Not valid JSON: {exc.msg}.") from None


class JobForm(forms.Form):
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.order_by("name"))
    name = forms.CharField(max_length=200)
    task_type = forms.ChoiceField(label="Task type")
    selection_mode = forms.ChoiceField(label="Selection", choices=SELECTION_MODES, initial="all", widget=forms.RadioSelect)
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
        queryset=Worker.objects.filter(provider="inhouse").order_by("external_id"), required=False,
        help_text="In-house annotators the job is open to; choose none to open it to all.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds = sorted(task_types.registry().values(), key=lambda k: k.key)
        self.fields["task_type"].choices = [(k.key, k.label or k.key) for k in self.kinds]
        self.fields["task_type"].initial = "rewrite" if any(k.key == "rewrite" for k in self.kinds) else None
        for kind in self.kinds:
            for setting, (default, help_text) in kind.settings_help.items():
                label = setting.replace("_", " ").capitalize()
                self.fields[setting_field_name(kind.key, setting)] = _setting_field(default, help_text, label)

    def settings_groups(self):
        """[(task type, [bound fields of its settings])] for the template."""
        return [(kind, [self[setting_field_name(kind.key, name)] for name in kind.settings_help]) for kind in self.kinds]

    def clean(self):
        data = super().clean()
        kind_key = data.get("task_type")
        if kind_key:
            data["settings"] = self._clean_settings(task_types.get(kind_key))
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

    def job_request(self) -> dict:
        """Keyword arguments for `job_requests.create_job_for_request`."""
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
    FORM_FIELD = {"selection": "selection_mode", "settings": None, "state": None, "non_field_errors": None}

    def add_service_error(self, fields: dict) -> None:
        for field, messages in fields.items():
            target = self.FORM_FIELD.get(field, field)
            if target is not None and target not in self.fields:
                target = None
            if isinstance(messages, dict):  # per-setting messages
                messages = [f"{name}: {'; '.join(msgs)}" for name, msgs in messages.items()]
            for message in messages:
                self.add_error(target, message)
