"""Serializers of the organizer API: what a corpus, job or run looks like, and what a request must hold."""
from decimal import Decimal

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from quorum.api.accepted import FollowedRunFields, absolute
from quorum.api.strict import RefusesUnknownFields

from .. import task_types
from ..models import (
    SPEECH_ERRORS_MAX_WER,
    SPEECH_ERRORS_MIN_WER,
    CheckOverride,
    Corpus,
    DecisionRule,
    ExportRun,
    ImportRun,
    Job,
    JobCreationRun,
    LatestAttempt,
    OnVotedDown,
    QualityPolicy,
    Response,
    SourceFormat,
    Worker,
    WorkerStanding,
)
from ..selectors.jobs import job_progress
from ..services.export_ood import OutOfDomain
from ..services.import_uploads import FILE_ROLES
from ..services.imports import LANGUAGE_HELP
from ..services.jobs import DEFAULT_TASK_TYPE, Selection, settings_errors
from ..services.quality import COUNT_FIELDS, COUNT_MAX, COUNT_MINIMUMS, RATE_FIELDS
from ..services.voting import VOTE_REWARD_HELP
from ..text.languages import LanguageTagError, stated_tag

QUALITY_SETTINGS = (*RATE_FIELDS, *COUNT_FIELDS, "flags_reject")


class CorpusSerializer(serializers.ModelSerializer):
    dialog_count = serializers.IntegerField(read_only=True, help_text="Dialogs in the corpus.")
    turn_count = serializers.IntegerField(read_only=True, help_text="Turns in the corpus, user and system.")

    class Meta:
        model = Corpus
        fields = ["id", "name", "source_format", "language", "dialog_count", "turn_count", "created_at"]
        read_only_fields = ["language"]


class CorpusUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    """A corpus upload (multipart): the files are imported in the background."""

    name = serializers.CharField(max_length=200, help_text="A name unique across Quorum.")
    source_format = serializers.ChoiceField(choices=SourceFormat.choices)
    data = serializers.FileField(help_text="The corpus file (MultiWOZ data.json, DSTC9 logs.json, DSTC6 JSON, JSONL), or a .zip holding that one file.")
    labels = serializers.FileField(required=False, help_text="DSTC9 labels.json, aligned with logs.json.")
    knowledge = serializers.FileField(required=False, help_text="DSTC9 knowledge.json.")
    language = serializers.CharField(required=False, allow_blank=True, default="", help_text=LANGUAGE_HELP)

    def validate_name(self, value):
        value = value.strip()
        if Corpus.objects.filter(name=value).exists():
            raise serializers.ValidationError(f"a corpus named {value!r} already exists; choose another name")
        return value

    def validate_language(self, value):
        try:
            return stated_tag(value)
        except LanguageTagError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def files(self) -> dict:
        return {role: self.validated_data.get(role) for role in FILE_ROLES if self.validated_data.get(role)}


class BackgroundRunFields(FollowedRunFields):
    #: The route of the run's own GET (a subclass's).
    detail_route = ""
    run_fields = ["id", "status", "done", "total", "progress", "finished", "error", "created_at", "started_at", "finished_at", "url"]

    def run_path(self, run) -> str:
        return reverse(self.detail_route, kwargs={"pk": run.pk})


class ImportRunSerializer(BackgroundRunFields):
    files = serializers.SerializerMethodField(help_text="Roles of the uploaded files (data, labels, knowledge).")
    corpus_url = serializers.SerializerMethodField(help_text="Once succeeded: the imported corpus; null before.")

    detail_route = "api:import-detail"

    class Meta:
        model = ImportRun
        fields = BackgroundRunFields.run_fields + ["corpus_name", "source_format", "files", "corpus", "corpus_url"]
        read_only_fields = fields

    def get_files(self, run) -> list[str]:
        # Only the roles: the server's paths are nobody's business.
        return sorted(run.files) if isinstance(run.files, dict) else []

    def get_corpus_url(self, run) -> str | None:
        if run.corpus_id is None:
            return None
        return absolute(self.context, reverse("api:corpus-detail", kwargs={"pk": run.corpus_id}))


class JobCreationRunSerializer(BackgroundRunFields):
    """A corpus job being made in the background (POST /api/jobs/ answers 202 with it)."""

    job_url = serializers.SerializerMethodField(help_text="Once succeeded: the job made (a draft: launch it); null before.")

    detail_route = "api:job-creation-detail"

    class Meta:
        model = JobCreationRun
        fields = BackgroundRunFields.run_fields + ["error_field", "name", "corpus", "task_type", "job", "job_url"]
        read_only_fields = fields
        extra_kwargs = {
            "job": {"help_text": "Once succeeded: the id of the job made; null before, and after a failure (nothing was made)."},
            "error": {"help_text": "Once failed: why nothing was made, in words to act on (e.g. a sample larger than the corpus's turns)."},
        }

    def get_job_url(self, run) -> str | None:
        if run.job_id is None:
            return None
        return absolute(self.context, reverse("api:job-detail", kwargs={"pk": run.job_id}))


class ExportFileSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="Path of the file inside the export.")
    url = serializers.CharField(help_text="Where to download it.")


class ExportRequestSerializer(RefusesUnknownFields, serializers.Serializer):
    """What to export besides the responses and the test sets: the recordings, a speech-error set, an out-of-domain set."""

    include_audio = serializers.BooleanField(
        required=False, default=False,
        help_text="Spoken-reading jobs: also copy every recording into the export (audio/); readings.jsonl is always written.",
    )
    speech_errors_wer = serializers.FloatField(
        required=False, allow_null=True, default=None, min_value=SPEECH_ERRORS_MIN_WER, max_value=SPEECH_ERRORS_MAX_WER,
        help_text=ExportRun._meta.get_field("speech_errors_wer").help_text
        + " Costs tens of CPU-seconds per 30 user turns (speech synthesis and recognition, several passes).",
    )
    speech_errors_seed = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=2**31 - 1, help_text=ExportRun._meta.get_field("speech_errors_seed").help_text,
    )
    out_of_domain_corpus = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, help_text=ExportRun._meta.get_field("out_of_domain_corpus").help_text + " (its id)",
    )
    out_of_domain_rate = serializers.FloatField(
        required=False, allow_null=True, default=None, min_value=0.0, max_value=1.0, help_text=ExportRun._meta.get_field("out_of_domain_rate").help_text,
    )
    out_of_domain_seed = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=2**31 - 1, help_text=ExportRun._meta.get_field("out_of_domain_seed").help_text,
    )
    out_of_domain_mode = serializers.ChoiceField(
        required=False, default="replace", choices=ExportRun._meta.get_field("out_of_domain_mode").choices,
        help_text=ExportRun._meta.get_field("out_of_domain_mode").help_text,
    )

    def validate(self, attrs):
        """The four out-of-domain fields become one option (`out_of_domain`) for `start_export`."""
        corpus, rate = attrs.pop("out_of_domain_corpus", None), attrs.pop("out_of_domain_rate", None)
        seed, mode = attrs.pop("out_of_domain_seed", 0), attrs.pop("out_of_domain_mode", "replace")
        if (corpus is None) != (rate is None):
            raise serializers.ValidationError({"out_of_domain_rate" if rate is None else "out_of_domain_corpus": "give both the corpus and the rate, or neither"})
        attrs["out_of_domain"] = None if corpus is None else OutOfDomain(corpus, rate, seed, mode)
        return attrs


class ExportRunSerializer(BackgroundRunFields):
    files = serializers.SerializerMethodField(help_text="Files of the export, each with its download URL.")
    zip_url = serializers.SerializerMethodField(help_text="Once the files are written: every file as one zip; null before.")

    detail_route = "api:export-detail"

    class Meta:
        model = ExportRun
        fields = BackgroundRunFields.run_fields + [
            "job", "include_audio", "speech_errors_wer", "speech_errors_seed",
            "out_of_domain_corpus", "out_of_domain_rate", "out_of_domain_seed", "out_of_domain_mode", "files", "zip_url",
        ]
        read_only_fields = fields

    @extend_schema_field(ExportFileSerializer(many=True))
    def get_files(self, run) -> list[dict]:
        return [
            {"name": name, "url": absolute(self.context, reverse("api:export-file", kwargs={"pk": run.pk, "name": name}))}
            for name in run.files or []
        ]

    def get_zip_url(self, run) -> str | None:
        return absolute(self.context, reverse("api:export-zip", kwargs={"pk": run.pk})) if run.files else None


class SelectionSerializer(RefusesUnknownFields, serializers.Serializer):
    mode = serializers.ChoiceField(
        choices=["all", "sample", "dialogs"],
        default="all",
        help_text="all: every source turn; sample: `size` turns drawn with `seed`; dialogs: the turns of `dialog_ids`.",
    )
    size = serializers.IntegerField(required=False, min_value=1, help_text="With mode sample: how many turns.")
    seed = serializers.IntegerField(default=0, help_text="With mode sample: the same seed draws the same sample.")
    dialog_ids = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list,
        help_text="With mode dialogs: the dialogs' ids in the source corpus.",
    )

    def validate(self, attrs):
        if attrs["mode"] == "sample" and not attrs.get("size"):
            raise serializers.ValidationError({"size": "a sample needs a size of at least 1"})
        if attrs["mode"] == "dialogs" and not attrs.get("dialog_ids"):
            raise serializers.ValidationError({"dialog_ids": "list at least one dialog id"})
        return attrs

    @staticmethod
    def to_selection(attrs) -> Selection:
        return Selection(
            mode=attrs.get("mode", "all"),
            size=attrs.get("size"),
            seed=attrs.get("seed", 0),
            dialog_ids=list(attrs.get("dialog_ids", [])),
        )


class JobSerializer(serializers.ModelSerializer):
    """A job as read back; `annotators` are Worker ids (empty: open to every in-house annotator)."""

    annotators = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    item_count = serializers.IntegerField(read_only=True, help_text="Items (source turns) in the job.")
    notes = serializers.SerializerMethodField(
        help_text="What the job will not do under its settings, in words (e.g. an out-of-scope job without QA pairs "
        "does not check turns against the knowledge); empty when nothing is left out."
    )

    class Meta:
        model = Job
        fields = [
            "id", "name", "corpus", "task_type", "settings", "instructions", "redundancy", "reward",
            "claim_timeout_minutes", "state", "annotators", "item_count", "notes", "created_at", "launched_at",
        ]
        read_only_fields = fields

    def get_notes(self, job) -> list[str]:
        return task_types.settings_notes(task_types.registry().get(job.task_type), job.settings or {})


class JobCreateSerializer(RefusesUnknownFields, serializers.Serializer):
    """A draft job: its items are the selected turns of a corpus, or the payloads given; launch it to open it to workers."""

    corpus = serializers.PrimaryKeyRelatedField(
        queryset=Corpus.objects.all(), required=False, allow_null=True, default=None,
        help_text="For a type built from corpus turns: the corpus whose turns become items. For a type built from "
        "payloads: a corpus whose knowledge gives the payloads, when `payloads` is not given.",
    )
    payloads = serializers.ListField(
        child=serializers.DictField(), required=False, allow_empty=False,
        help_text="For a type built from payloads (see `builds_from` and `payload_file` in /api/task-types/): one "
        "object per item, as the type's payload file describes. A bad payload is a 400 naming it by its index.",
    )
    name = serializers.CharField(max_length=200)
    task_type = serializers.CharField(default=DEFAULT_TASK_TYPE, help_text=f"Key of a task type; see /api/task-types/ (default: {DEFAULT_TASK_TYPE}).")
    settings = serializers.DictField(
        required=False, default=dict, help_text="Task-type settings; omitted ones take their defaults."
    )
    selection = SelectionSerializer(required=False)
    redundancy = serializers.IntegerField(default=1, min_value=1, max_value=50, help_text="Responses wanted per item.")
    reward = serializers.DecimalField(
        max_digits=8, decimal_places=2, min_value=Decimal("0"), default=Decimal("0.50"), help_text="Pay per response, in USD."
    )
    instructions = serializers.CharField(required=False, allow_blank=True, default="")
    claim_timeout_minutes = serializers.IntegerField(default=30, min_value=1, max_value=24 * 60)
    annotators = serializers.PrimaryKeyRelatedField(
        queryset=Worker.objects.filter(provider=Worker.INHOUSE), many=True, required=False, default=list,
        help_text="Worker ids of the in-house annotators the job is open to; empty means all.",
    )

    def validate_task_type(self, value):
        try:
            return task_types.get(value).key
        except KeyError as exc:
            raise serializers.ValidationError(exc.args[0]) from None

    def validate(self, attrs):
        kind = task_types.get(attrs["task_type"])
        try:
            attrs["settings"] = kind.clean_settings(attrs.get("settings"))
        except task_types.TaskTypeSettingsError as exc:
            raise serializers.ValidationError(settings_errors(exc.errors)) from None
        from_payloads = task_types.capability(kind, task_types.FromPayloads)
        if isinstance(kind, task_types.FromCorpusTurns):
            if attrs.get("corpus") is None:
                raise serializers.ValidationError({"corpus": f"{kind.key} items are corpus turns: give the corpus id (see /api/corpora/)."})
            if "payloads" in attrs:
                raise serializers.ValidationError({"payloads": f"{kind.key} items are corpus turns, not payloads: leave payloads out."})
        elif from_payloads is not None and from_payloads.payload_file:
            if "payloads" not in attrs and attrs.get("corpus") is None:
                raise serializers.ValidationError({"payloads": f"give the payloads, one object per item ({from_payloads.payload_file})"})
            if "selection" in attrs:
                raise serializers.ValidationError({"selection": "a selection of turns applies to corpus types only; leave it out."})
        else:
            raise serializers.ValidationError({"task_type": f"{kind.key} jobs are not made here: {_made_elsewhere(kind)}"})
        return attrs


def _made_elsewhere(kind) -> str:
    """Where a job of a type this endpoint does not make comes from."""
    if isinstance(kind, task_types.FromResponses):
        return "turn voting on for the job to vote on (POST /api/jobs/<id>/voting/ on that job)."
    if isinstance(kind, task_types.RelaysChat):
        return "create it on /evaluation/interactive/new/ (it needs registered systems and goals)."
    return "a campaign makes them."


class TaskTypeSettingSerializer(serializers.Serializer):
    name = serializers.CharField()
    default = serializers.JSONField()
    help = serializers.CharField()


class TaskTypeSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    builds_from = serializers.CharField(help_text="corpus (items are turns), payloads (given by the caller) or responses (of another job: votes).")
    agreement_level = serializers.CharField()
    payload_file = serializers.CharField(
        allow_blank=True,
        help_text="For a type built from payloads that POST /api/jobs/ makes: what each payload is; empty otherwise.",
    )
    settings = TaskTypeSettingSerializer(many=True)

    @staticmethod
    def describe(kind) -> dict:
        payloads = task_types.capability(kind, task_types.FromPayloads)
        return {
            "key": kind.key,
            "label": kind.label,
            "builds_from": task_types.builds_from(kind),
            "payload_file": payloads.payload_file if payloads else "",
            "agreement_level": kind.agreement_level,
            "settings": [{"name": n, "default": d, "help": h} for n, (d, h) in kind.settings_help.items()],
        }


class QuestionAgreementSerializer(serializers.Serializer):
    question = serializers.CharField()
    level = serializers.CharField(help_text="Krippendorff's level of measurement: nominal, ordinal, interval or ratio.")
    alpha = serializers.FloatField(allow_null=True, help_text="Null when alpha is undefined; `note` says why.")
    note = serializers.CharField(allow_blank=True)
    units = serializers.IntegerField(help_text="Items with at least two answers (the pairable units).")
    values = serializers.IntegerField(help_text="Answers counted.")
    ci_low = serializers.FloatField(allow_null=True, help_text="The 95% bootstrap interval of alpha over items (BCa, 1,000 resamples, fixed seed); null with alpha, and when `ci_withheld` says why there is none.")
    ci_high = serializers.FloatField(allow_null=True)
    ci_withheld = serializers.CharField(allow_blank=True, help_text="Why alpha has no interval, in words (too few items, or too few with any disagreement, for one that covers 95%); empty otherwise.")


class MessageSerializer(serializers.Serializer):
    detail = serializers.CharField()


class RunUnderWaySerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the request was refused: the run under way, and when to ask again.")
    run = serializers.IntegerField(help_text="The id of the run under way.")
    url = serializers.CharField(help_text="Where to follow it: GET it until it has finished, then ask again.")


class JobProgressSerializer(serializers.Serializer):
    """How far a job is: items, slots (one per wanted response), responses, time, workers."""

    items_total = serializers.IntegerField()
    items_complete = serializers.IntegerField(
        help_text="Items with every wanted response submitted (some may still be under vote or being collected again)."
    )
    items_accepted = serializers.IntegerField(help_text="Items with at least one accepted response: what an export can use now.")
    slots_total = serializers.IntegerField(help_text="Responses wanted: items x redundancy.")
    slots_submitted = serializers.IntegerField(help_text="Responses submitted.")
    slots_claimed = serializers.IntegerField(help_text="Items being worked on right now.")
    fraction = serializers.FloatField(help_text="Responses submitted / responses wanted, from 0 to 1.")
    responses_per_item = serializers.FloatField(help_text="Responses submitted per item, on average.")
    responses_by_status = serializers.DictField(child=serializers.IntegerField())
    mean_seconds_per_response = serializers.FloatField(
        allow_null=True, help_text="Mean time from claim to submission, in seconds."
    )
    mean_active_seconds = serializers.FloatField(
        allow_null=True, help_text="Mean time the page was in use, as the browser measured it."
    )
    workers = serializers.IntegerField(help_text="Distinct workers who submitted a response.")

    @staticmethod
    def describe(progress) -> dict:
        return {
            "items_total": progress.items_total,
            "items_complete": progress.items_complete,
            "items_accepted": progress.items_accepted,
            "slots_total": progress.slots_total,
            "slots_submitted": progress.slots_submitted,
            "slots_claimed": progress.slots_claimed,
            "fraction": progress.fraction,
            "responses_per_item": progress.slots_submitted / progress.items_total if progress.items_total else 0.0,
            "responses_by_status": progress.responses_by_status,
            "mean_seconds_per_response": progress.mean_seconds_per_response,
            "mean_active_seconds": progress.mean_active_seconds,
            "workers": progress.workers,
        }


class JobDetailSerializer(JobSerializer):
    progress = serializers.SerializerMethodField()

    class Meta(JobSerializer.Meta):
        fields = JobSerializer.Meta.fields + ["progress"]
        read_only_fields = fields

    @extend_schema_field(JobProgressSerializer)
    def get_progress(self, job) -> dict:
        return JobProgressSerializer.describe(job_progress(job))


# --- Quality control (issue 5) ----------------------------------------------------------------------


def _policy_help(name: str) -> str:
    return str(QualityPolicy._meta.get_field(name).help_text)


class VotingSettingsSerializer(RefusesUnknownFields, serializers.Serializer):
    """Voting on (with its settings) or off; services.voting.enable_voting checks the settings again."""

    enabled = serializers.BooleanField(default=True, help_text="false turns voting off; rounds under way finish.")
    votes_per_response = serializers.IntegerField(default=3, min_value=1, max_value=50, help_text=_policy_help("votes_per_response"))
    against_threshold = serializers.IntegerField(default=2, min_value=1, max_value=50, help_text=_policy_help("against_threshold"))
    max_rounds = serializers.IntegerField(default=3, min_value=1, max_value=50, help_text=_policy_help("max_rounds"))
    on_voted_down = serializers.ChoiceField(choices=OnVotedDown.choices, default=OnVotedDown.SOFT_REJECT, help_text=_policy_help("on_voted_down"))
    decision_rule = serializers.ChoiceField(choices=DecisionRule.choices, default=DecisionRule.PUBLISHED, help_text=_policy_help("decision_rule"))
    model_sure = serializers.FloatField(default=0.85, min_value=0.51, max_value=1, help_text=_policy_help("model_sure"))
    model_max_votes = serializers.IntegerField(default=5, min_value=1, max_value=50, help_text=_policy_help("model_max_votes"))
    vote_reward = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=Decimal("0"), required=False, allow_null=True, default=None,
                                           help_text=VOTE_REWARD_HELP)

    def validate(self, attrs):
        if attrs["model_max_votes"] < attrs["votes_per_response"]:
            raise serializers.ValidationError({"model_max_votes": [f"cannot be below votes_per_response ({attrs['votes_per_response']})"]})
        if attrs["against_threshold"] > attrs["votes_per_response"]:
            raise serializers.ValidationError(
                {"against_threshold": [f"cannot exceed votes_per_response ({attrs['votes_per_response']})"]}
            )
        return attrs


class VotingSummarySerializer(serializers.Serializer):
    """A job's voting settings and how its responses fared (CGoDial voting with re-collection)."""

    voting_enabled = serializers.BooleanField()
    settings = serializers.DictField(allow_null=True, help_text="votes_per_response, against_threshold, max_rounds, on_voted_down, decision_rule, model_sure, model_max_votes; null before voting was ever set.")
    vote_job = serializers.IntegerField(allow_null=True, help_text="Id of the job whose items are the votes.")
    responses_reviewed = serializers.IntegerField(help_text="Responses put to the vote.")
    voting = serializers.IntegerField(help_text="Rounds still waiting for votes.")
    passed = serializers.IntegerField()
    voted_down = serializers.IntegerField(help_text="Re-collected plus flagged.")
    recollected = serializers.IntegerField(help_text="Voted down and reopened for a new response.")
    flagged = serializers.IntegerField(help_text="Voted down at the last round: the builder decides.")
    items_reviewed = serializers.IntegerField()
    items_recollected = serializers.IntegerField()
    recollection_rate = serializers.FloatField(allow_null=True, help_text="items_recollected / items_reviewed; null before any review.")
    votes = serializers.IntegerField()
    vote_alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha (nominal) of the votes, over each part voted on (a rewrite's variants); null with a note when it cannot be computed.")
    vote_alpha_note = serializers.CharField(allow_blank=True)
    vote_alpha_ci_low = serializers.FloatField(allow_null=True, help_text="The 95% bootstrap interval (BCa) of vote_alpha: 1,000 resamples (fixed seed) of the responses voted on, each with all its parts; a resample in which every vote agrees counts as alpha 1. Null with vote_alpha, and when vote_alpha_ci_withheld says why there is none.")
    vote_alpha_ci_high = serializers.FloatField(allow_null=True)
    vote_alpha_ci_withheld = serializers.CharField(allow_blank=True, help_text="Why vote_alpha has no interval, in words: fewer than 50 responses voted on, or fewer than 3 with any disagreement, where such an interval covers far from 95% in simulation; empty otherwise.")

    @staticmethod
    def describe(summary, policy, vote_job) -> dict:
        settings = None
        if policy is not None:
            settings = {k: getattr(policy, k) for k in (
                "votes_per_response", "against_threshold", "max_rounds", "on_voted_down", "decision_rule", "model_sure", "model_max_votes",
            )}
        return {**summary.as_dict(), "settings": settings, "vote_job": vote_job.pk if vote_job else None}


class RoundRowSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    response_id = serializers.IntegerField()
    author = serializers.CharField()
    state = serializers.CharField()
    votes_for = serializers.IntegerField()
    votes_against = serializers.IntegerField()
    reasons = serializers.ListField(child=serializers.CharField())
    overruled = serializers.CharField(allow_blank=True, help_text="The response's status where a reviewer decided against the round's outcome (e.g. rejected after it passed), else empty.")


class ItemReviewSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    position = serializers.IntegerField()
    utterance = serializers.CharField(allow_blank=True)
    rounds = RoundRowSerializer(many=True)
    final_state = serializers.CharField(help_text="passed, voting, re-collecting, flagged or cancelled: where the vote left the item.")
    decisions = serializers.ListField(child=serializers.CharField(), help_text="Reviewers' decisions against the vote since, in words.")


class FlagEvidenceSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The flag's code (e.g. worth_a_listen, fast, near_duplicate).")
    name = serializers.CharField(help_text='The flag in words (e.g. "a reading worth a listen").')
    evidence = serializers.CharField(
        allow_blank=True, help_text="Why, in words with the numbers measured, as the last flag run stored it; empty when it stored none."
    )


class ReviewRowSerializer(serializers.Serializer):
    response_id = serializers.IntegerField()
    worker_id = serializers.IntegerField()
    worker = serializers.CharField()
    item_id = serializers.IntegerField()
    status = serializers.CharField()
    response_flags = serializers.ListField(child=serializers.CharField())
    worker_flags = serializers.ListField(child=serializers.CharField())
    held = serializers.CharField(allow_blank=True, help_text="Why the response is held for review after a soft block.")
    gold = serializers.DictField(allow_null=True, help_text='{"correct", "expected"} for an answer to a gold item.')
    vote_state = serializers.CharField(allow_blank=True)
    overrides = serializers.IntegerField()
    response_flag_evidence = FlagEvidenceSerializer(
        many=True, help_text="The response's flags (`response_flags`, in the same order) each named in words with its evidence."
    )


class WorkerFlagSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField(read_only=True, help_text="The flag in words, as the pages name it.")
    message = serializers.CharField(help_text="The evidence, in words.")
    value = serializers.FloatField(help_text="The measured share or agreement.")
    count = serializers.IntegerField(help_text="Responses or ratings it is based on.")


class FlaggedWorkerSerializer(serializers.Serializer):
    worker_id = serializers.IntegerField(source="worker.pk")
    worker = serializers.CharField(help_text="provider:external id")
    flags = WorkerFlagSerializer(many=True)
    measures = serializers.DictField(child=serializers.FloatField(allow_null=True))


class AttemptSerializer(serializers.Serializer):
    """The latest attempt at a piece of background work (`selectors.attempts.AttemptState`): a job's
    flag run, a campaign's results computation."""

    status = serializers.ChoiceField(
        choices=LatestAttempt.Status.choices,
        help_text="The latest attempt: queued (asked for, not started), running, succeeded or failed.",
    )
    queued_at = serializers.DateTimeField(allow_null=True, help_text="When a page or the API asked for it; null: the beat sweep queued it.")
    started_at = serializers.DateTimeField(allow_null=True, help_text="When a worker started it; null while queued.")
    finished_at = serializers.DateTimeField(allow_null=True, help_text="When it succeeded or failed; null until then.")
    error = serializers.CharField(
        help_text="Failed: why (the error's type and message). Queued: why it may not have reached a worker "
        "(the broker refused it; the beat sweep queues it again). Empty otherwise."
    )
    current = serializers.BooleanField(
        help_text="Whether it is newer than the stored output (flags, results) and not a success: queued, running, or "
        "failed with the stored output (if any) left from an earlier attempt."
    )


class StoredFlagsSerializer(serializers.Serializer):
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the last flag run (the beat sweep or POST flags/) computed them; null: not yet."
    )
    responses_seen = serializers.IntegerField(help_text="Responses the flags were computed over.")
    workers = FlaggedWorkerSerializer(many=True, help_text="Flagged workers with the evidence, most flags first.")
    run = AttemptSerializer(allow_null=True, help_text="The latest attempt at the job's flag run; null: none was recorded.")


class JobReviewsSerializer(serializers.Serializer):
    responses = ReviewRowSerializer(many=True, help_text="Responses with their evidence, flagged ones first.")
    items = ItemReviewSerializer(many=True, help_text="Reviewed items with their rounds and votes.")
    flags = StoredFlagsSerializer(help_text="The stored worker flags the response rows carry, and when they were computed.")


class NumberField(serializers.FloatField):
    """A JSON number: `true`/`false` are refused (DRF's FloatField reads them as 1.0 and 0.0)."""

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


def _quality_setting_fields() -> dict:
    fields = {}
    for name in RATE_FIELDS:
        fields[name] = NumberField(required=False, min_value=0, max_value=1, help_text=f"{_policy_help(name)} From 0 to 1.")
    for name in COUNT_FIELDS:
        fields[name] = serializers.IntegerField(
            required=False, min_value=COUNT_MINIMUMS.get(name, 0), max_value=COUNT_MAX, help_text=_policy_help(name)
        )
    fields["flags_reject"] = serializers.BooleanField(required=False, help_text=_policy_help("flags_reject"))
    return fields


#: The gold, onboarding and flag settings of a job (services.quality.set_quality); POST any subset.
QualitySettingsSerializer = type(
    "QualitySettingsSerializer",
    (RefusesUnknownFields, serializers.Serializer),
    {**_quality_setting_fields(), "__doc__": "The gold, onboarding and flag settings of a job; POST any subset of them."},
)


SETTLED_STATUSES = [status.value for status in Response.SETTLED]


# A plain string in the schema: an enum named "status" would collide with the run status enum.
@extend_schema_field({"type": "string", "description": f"One of: {', '.join(SETTLED_STATUSES)}."})
class SettledStatusField(serializers.CharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value not in SETTLED_STATUSES:
            raise serializers.ValidationError(f"{value!r} is not a status a reviewer can give; use one of {', '.join(SETTLED_STATUSES)}")
        return value


class OverrideSerializer(RefusesUnknownFields, serializers.Serializer):
    status = SettledStatusField(help_text="The response's new status.")
    check = serializers.ChoiceField(
        choices=CheckOverride.Check.choices, required=False,
        help_text="Which automatic verdict is overridden; by default the vote outcome on a job with a vote, none (no automatic verdict) on one without.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why the automatic verdict is wrong; required.")
    recollect = serializers.BooleanField(default=False, help_text="With a rejection: reopen the item for a new response.")


class CheckOverrideSerializer(serializers.ModelSerializer):
    check = serializers.CharField(source="check_name")
    previous_status = serializers.CharField(help_text="The response's status before the override.")
    new_status = serializers.CharField()
    by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = CheckOverride
        fields = ["id", "response", "check", "previous_status", "new_status", "reason", "by", "created_at"]
        read_only_fields = fields


class WorkerJobQualitySerializer(serializers.Serializer):
    job = serializers.IntegerField(source="job.pk")
    job_name = serializers.CharField(source="job.name")
    responses = serializers.IntegerField()
    flags = WorkerFlagSerializer(many=True)
    measures = serializers.DictField(child=serializers.FloatField())
    standing = serializers.CharField(allow_blank=True, help_text="onboarding, qualified, soft_blocked, or empty without a gold record.")
    gold_answered = serializers.IntegerField()
    gold_failed = serializers.IntegerField()
    block_reason = serializers.CharField(allow_blank=True)
    flags_computed_at = serializers.DateTimeField(allow_null=True, help_text="When the job's stored flags were computed; null: not yet.")


class WorkerQualitySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    provider = serializers.CharField()
    external_id = serializers.CharField()
    jobs = WorkerJobQualitySerializer(many=True)


class UnblockSerializer(RefusesUnknownFields, serializers.Serializer):
    job = serializers.PrimaryKeyRelatedField(queryset=Job.objects.all(), help_text="The job the worker is soft-blocked on.")


class StandingSerializer(serializers.ModelSerializer):
    state = serializers.CharField(help_text="onboarding, qualified or soft_blocked.")

    class Meta:
        model = WorkerStanding
        fields = ["worker", "job", "state", "gold_answered", "gold_failed", "reason", "changed_at"]
        read_only_fields = fields


class GoldItemSerializer(serializers.Serializer):
    """A gold item of a job with what workers made of it."""

    item_id = serializers.IntegerField(help_text="Id of the gold item.")
    position = serializers.IntegerField()
    shown = serializers.CharField(allow_blank=True, help_text="What a worker is asked about, shortened.")
    expected = serializers.DictField(help_text="The known answer: {answer field: value}.")
    answered = serializers.IntegerField(help_text="Graded answers.")
    correct = serializers.IntegerField()
    pass_rate = serializers.FloatField(allow_null=True, help_text="correct / answered; null before any answer.")


class GoldItemCreateSerializer(RefusesUnknownFields, serializers.Serializer):
    """A gold item copied from an item of the job, with its known answer."""

    item = serializers.IntegerField(min_value=1, help_text="Id of an item of the job; the gold item shows the same content.")
    gold = serializers.DictField(
        help_text='The known answer per answer field, e.g. {"accuracy": 4}; fields left out are not graded.'
    )


class FlagsQueuedSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    detail = serializers.CharField()
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the flags stored now were computed (null: never): the new ones are there once `flags.computed_at` at `url` is later."
    )
    url = serializers.CharField(help_text="The job's review list, whose `flags` the recomputation replaces (also the Location header).")
    run = AttemptSerializer(
        help_text="How the attempt just asked for stands: queued, with `error` set when the broker did not take it (where tasks "
        "run in-process, it has already succeeded or failed)."
    )
