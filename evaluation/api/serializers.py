"""Serializers of the evaluation API (reads of campaigns, and the agreement upload form)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Count, Q
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.api.serializers import AttemptSerializer
from annotation.models import RunStatus, Slot
from evaluation.campaigns import selectors as campaign_selectors
from evaluation.judges import selectors as judges_selectors
from evaluation.models import Campaign, CampaignJob, CampaignLook, CampaignRun, PairwiseReport
from evaluation.stats import versions
from quorum.api.accepted import FollowedRunFields, absolute
from quorum.api.strict import RefusesUnknownFields
from quorum.lazy_modules import lazy
from quorum.strict_json import json_safe

if TYPE_CHECKING:
    from annotation.quality import agreement
else:
    agreement = lazy("annotation.quality.agreement")

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
MAX_BOOTSTRAP = 5000


class EvaluationMessageSerializer(serializers.Serializer):
    detail = serializers.CharField()


class EntrySummarySerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    label = serializers.CharField()
    kind = serializers.CharField()


class CrowdJobSerializer(serializers.ModelSerializer):
    job = serializers.IntegerField(source="job_id")
    job_state = serializers.CharField(source="job.state")
    items = serializers.SerializerMethodField()
    slots = serializers.SerializerMethodField()
    slots_submitted = serializers.SerializerMethodField()
    redundancy = serializers.IntegerField(source="job.redundancy")

    class Meta:
        model = CampaignJob
        fields = ["job", "job_state", "redundancy", "instances", "skipped", "order_seed", "items", "slots", "slots_submitted"]

    def _counts(self, obj):
        if not hasattr(obj, "_counts"):
            obj._counts = Slot.objects.filter(job_id=obj.job_id).aggregate(
                slots=Count("id"), submitted=Count("id", filter=Q(state=Slot.State.SUBMITTED)), items=Count("item_id", distinct=True)
            )
        return obj._counts

    def get_items(self, obj) -> int:
        return self._counts(obj)["items"]

    def get_slots(self, obj) -> int:
        return self._counts(obj)["slots"]

    def get_slots_submitted(self, obj) -> int:
        return self._counts(obj)["submitted"]


class CampaignSerializer(serializers.ModelSerializer):
    challenge = serializers.CharField(source="test_set.challenge.name")
    test_set = serializers.CharField(source="test_set.name")
    state = serializers.CharField(read_only=True, help_text="draft, collecting or closed.")
    ratings = serializers.IntegerField(source="n_ratings", read_only=True)
    results = serializers.SerializerMethodField()
    results_run = serializers.SerializerMethodField(
        help_text="The latest computation of the results (POST results/, the page's compute, an adaptive campaign that "
        "stopped, the beat sweep): queued, running, succeeded, or failed with `error` in words, when `current` the "
        "stored results are older than it (a failure leaves them, stale); null: none was recorded."
    )

    class Meta:
        model = Campaign
        fields = [
            "id", "name", "challenge", "test_set", "state", "questions", "rater_ids_known", "ratings", "inputs_version", "results",
            "results_run", "created_at",
        ]

    def get_results(self, obj) -> str:
        """current: stored results match the inputs; stale: only older results; none: never computed."""
        return campaign_selectors.results_status(obj)

    @extend_schema_field(AttemptSerializer(allow_null=True))
    def get_results_run(self, obj):
        state = campaign_selectors.listed_results_run(obj)
        return None if state is None else AttemptSerializer(state).data


PAIR_STATES = ["resolved", "tied", "open"]  # allocation.RESOLVED, TIED, OPEN


class AdaptivePairSerializer(serializers.Serializer):
    a = serializers.CharField(help_text="An entry's label (team/entry).")
    b = serializers.CharField(help_text="The other entry's label.")
    state = serializers.ChoiceField(
        choices=PAIR_STATES,
        help_text="resolved: ordered on every instance and not inside the leaderboard's significance line; tied: the leaderboard of every instance would call it a tie (futility); open: still rated.",
    )
    better = serializers.CharField(allow_null=True, help_text="The entry ahead when resolved, else null.")
    instances = serializers.IntegerField(help_text="Instances of the shared order both entries were rated on (the pair's prefix).")
    difference = serializers.FloatField(allow_null=True, help_text="Final score of a minus that of b on the prefix; null when it has no ratings.")
    low = serializers.FloatField(allow_null=True, help_text="Lower end of the pair's interval (sequential critical value).")
    high = serializers.FloatField(allow_null=True, help_text="Upper end of the pair's interval.")
    target = serializers.CharField(
        required=False,
        help_text="What the interval targets: the finite set of the campaign's instances (the difference if every one were rated) before the last look, the population of instances (as the leaderboard) at it.",
    )


class CampaignLookSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1 for the look after the first round, and so on.")
    instances = serializers.IntegerField(help_text="Instances of the round order rated by the systems still rated at this look.")
    decision = serializers.ChoiceField(choices=CampaignLook.Decision.choices, help_text="continue, or why the campaign stopped at this look.")
    decision_text = serializers.CharField(source="get_decision_display", help_text="The decision in words.")
    ratings_spent = serializers.IntegerField(help_text="Ratings (slots) of the crowd job at this look.")
    added_ratings = serializers.IntegerField(help_text="Ratings the next round added; 0 when stopped.")
    critical_value = serializers.FloatField(help_text="The critical value the pair intervals used (the group-sequential boundary).")
    next_instances = serializers.IntegerField(allow_null=True, help_text="The round order's length after the next round; null when stopped.")
    active = serializers.ListField(child=serializers.CharField(), help_text="Entries rated in the next round.")


class AdaptiveStatusSerializer(serializers.Serializer):
    """An adaptive campaign's settings, looks and pair states (`campaign_selectors.adaptive_status`)."""

    confidence = serializers.FloatField(help_text="Confidence of the pair intervals, e.g. 0.95.")
    top_k = serializers.IntegerField(allow_null=True, help_text="Goal: the pairs involving the top k entries; null for every pair.")
    budget = serializers.IntegerField(allow_null=True, help_text="Most ratings to spend; null for the full design.")
    round_size = serializers.IntegerField(help_text="Instances added per round (rating units per entry when unit is rating).")
    unit = serializers.ChoiceField(
        choices=["instance", "rating"],
        help_text="What a round adds: new items with every rater (instance) or one more rater at a time on rated or new items (rating).",
    )
    round_sizes = serializers.ListField(child=serializers.IntegerField(), allow_null=True, help_text="The look grid (lengths of the shared order), fixed when the crowd job was made; null before.")
    critical_value = serializers.FloatField(allow_null=True, help_text="The group-sequential critical value of those looks; null before the crowd job.")
    spent = serializers.IntegerField(help_text="Ratings (slots) of the crowd job so far.")
    full_design = serializers.IntegerField(allow_null=True, help_text="Ratings the full design (every entry on every instance) would use.")
    stopped = serializers.BooleanField(help_text="Whether a look stopped the campaign.")
    stop_reason = serializers.CharField(allow_null=True, help_text="Why it stopped (the last look's decision in words); null while running.")
    looks = CampaignLookSerializer(many=True)
    pairs = AdaptivePairSerializer(many=True, help_text="Each pair's state at the last look (empty before the first look).")

    def to_representation(self, status):
        campaign, plan, last = status["campaign"], status["plan"], status["last"]
        return super().to_representation({
            "confidence": campaign.adaptive_confidence, "top_k": campaign.adaptive_top_k, "budget": campaign.adaptive_budget,
            "round_size": campaign.adaptive_round_size, "unit": campaign.adaptive_unit, "round_sizes": plan.round_sizes if plan else None,
            "critical_value": plan.critical_value if plan else None, "spent": status["spent"], "full_design": status["full_design"],
            "stopped": status["stopped"], "stop_reason": last.get_decision_display() if status["stopped"] else None,
            "looks": status["looks"], "pairs": status["pairs"],
        })


class JudgeReportSerializer(serializers.Serializer):
    """A judge's stored report (`evaluation/stats/judges.py`); nested values are as that module builds them."""

    alpha = serializers.FloatField(help_text="1 - confidence of the intervals.")
    epsilon = serializers.FloatField(required=False, help_text="The alternative-annotator test's cost-benefit margin.")
    items_scored_by_judge = serializers.IntegerField()
    items_rated_by_humans = serializers.IntegerField()
    agreement = serializers.JSONField(help_text="Correlations of judge and human scores: items, per_question, systems ({pearson, spearman, kendall}: r and interval).")
    alt_test = serializers.JSONField(help_text="Alternative-annotator test: winning_rate, advantage_probability, passes, raters; or {skipped: reason}.")
    raters_are_positions = serializers.BooleanField(help_text="True when rater ids are list positions of imported ratings, not people.")
    systems = serializers.ListField(child=serializers.JSONField(), help_text="Per ranked entry: human-only and PPI++ intervals of the mean, or a skipped reason.")
    pairs = serializers.ListField(child=serializers.JSONField(), help_text="Per pair of ranked entries: intervals of the difference and whether PPI resolves it.")
    rank_sets = serializers.JSONField(
        required=False,
        help_text="Prediction-powered rank sets beside human-only ones (ppi, human_only: per system estimate, rank_low, rank_high; coverage, "
        "labelled, unlabelled, mean_size), or {skipped: reason}; absent from reports made before they were added.",
    )


class JudgeRunSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The judge's name.")
    created_at = serializers.DateTimeField(help_text="When its scores were imported.")
    stale = serializers.BooleanField(help_text="The campaign's ratings changed since the report was computed (`judge_report` recomputes it).")
    report = serializers.SerializerMethodField(help_text="The stored report; null until the campaign has human ratings.")

    @extend_schema_field(JudgeReportSerializer(allow_null=True))
    def get_report(self, run):
        return JudgeReportSerializer(json_safe(run.report)).data if run.report else None


class CampaignDetailSerializer(CampaignSerializer):
    entries = serializers.SerializerMethodField()
    crowd_job = serializers.SerializerMethodField()
    adaptive = serializers.SerializerMethodField(help_text="Adaptive mode's settings, looks and pair states; null for a campaign that is not adaptive.")
    judges = serializers.SerializerMethodField(help_text="Automatic judges with their stored reports.")

    class Meta(CampaignSerializer.Meta):
        fields = CampaignSerializer.Meta.fields + ["entries", "crowd_job", "adaptive", "judges"]

    @extend_schema_field(AdaptiveStatusSerializer(allow_null=True))
    def get_adaptive(self, obj):
        status = campaign_selectors.adaptive_status(obj, campaign_selectors.crowd_progress(obj))
        return None if status is None else AdaptiveStatusSerializer({**status, "campaign": obj}).data

    @extend_schema_field(JudgeRunSerializer(many=True))
    def get_judges(self, obj):
        return JudgeRunSerializer(judges_selectors.judge_runs(obj), many=True).data

    def get_entries(self, obj) -> list[dict]:
        entries = obj.entries.select_related("team").order_by("team__team_id", "entry_id")
        return EntrySummarySerializer(entries, many=True).data

    def get_crowd_job(self, obj) -> dict | None:
        crowd = CampaignJob.objects.select_related("job").filter(campaign=obj).first()
        return CrowdJobSerializer(crowd).data if crowd else None


class ResultsRequestSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="ready: stored results match the inputs; queued: their computation was queued.")
    run = AttemptSerializer(
        allow_null=True,
        help_text="How the computation just asked for stands: queued, with `error` set when the broker did not take it (where "
        "tasks run in-process, it has already succeeded or failed, with `error` saying why). With ready, the latest "
        "computation recorded, or null. The campaign's `results_run` follows it.",
    )
    inputs_version = serializers.CharField()
    ratings_added = serializers.IntegerField()
    ratings_removed = serializers.IntegerField()
    url = serializers.CharField(
        help_text="The campaign (also the Location header of a 202): its `results` is current once the results of `inputs_version` are stored."
    )


class AgreementUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    file = serializers.FileField(help_text="CSV with the header item,rater,value; one row per rating.")
    level = serializers.ChoiceField(choices=list(agreement.LEVELS), help_text="Level of measurement.")
    domain = serializers.CharField(
        required=False, help_text="Comma-separated values of the scale, in order (e.g. 1,2,3,4,5). Default: the values in the file."
    )
    bootstrap = serializers.IntegerField(
        required=False, default=agreement.DEFAULT_BOOTSTRAP, help_text=f"Bootstrap replicates: 0 for none, or 1000 to {MAX_BOOTSTRAP}."
    )
    seed = serializers.IntegerField(required=False, default=agreement.DEFAULT_SEED)
    raters = serializers.BooleanField(required=False, default=False, help_text="Also compute per-rater diagnostics.")

    def validate_file(self, value):
        if value.size > MAX_UPLOAD_BYTES:
            raise serializers.ValidationError(f"the file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB; use the agreement command for big files")
        return value

    def validate_bootstrap(self, value):
        if value != 0 and not 1000 <= value <= MAX_BOOTSTRAP:
            raise serializers.ValidationError(f"give 0 (no interval) or 1000 to {MAX_BOOTSTRAP} replicates")
        return value

    def validate_domain(self, value):
        try:
            return [float(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise serializers.ValidationError("give numbers separated by commas, e.g. 1,2,3,4,5") from None


class FinalistsRequestSerializer(RefusesUnknownFields, serializers.Serializer):
    metrics = serializers.ListField(
        child=serializers.CharField(), allow_empty=False, help_text="Objective metrics to rank by, as named in the scores CSV."
    )
    top = serializers.IntegerField(default=12, min_value=1, max_value=1000, help_text="Number of finalist teams (DSTC9: 12).")
    lower_is_better = serializers.ListField(
        child=serializers.CharField(), required=False, default=list, help_text="Metrics where a lower value ranks higher."
    )
    campaign = serializers.CharField(
        required=False, allow_blank=False, help_text="If given, create a campaign of this name with the finalists and the reference rows."
    )
    questions = serializers.ListField(
        child=serializers.CharField(), required=False, default=lambda: ["appropriateness", "accuracy"],
        help_text="The campaign's questions (used with campaign).",
    )


class HumanEvalUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    file = serializers.FileField(
        help_text="A .zip whose top level holds the team folders: <team>/<entry>.json and <team>/<entry>.human_eval.json."
    )
    replace = serializers.BooleanField(required=False, default=False, help_text="Replace ratings already imported for the same entries.")


class CampaignRunSerializer(FollowedRunFields):
    """A campaign's background run (a human-evaluation import or a planner run), as the API follows it."""

    result = serializers.SerializerMethodField(
        help_text="Once succeeded: what the import stored (`ratings`, `entries`, ...) or the plan; null before."
    )

    class Meta:
        model = CampaignRun
        fields = [
            "id", "campaign", "kind", "upload_name", "status", "done", "total", "progress", "finished", "error", "result",
            "created_at", "started_at", "finished_at", "url",
        ]
        read_only_fields = fields

    def run_path(self, run) -> str:
        return run_url(run)

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_result(self, run):
        return json_safe(run.result) if run.result is not None else None


def run_url(run: CampaignRun) -> str:
    return reverse("evaluation-api:campaign-run", kwargs={"pk": run.campaign_id, "run_pk": run.pk})


class PairwiseReportSerializer(FollowedRunFields):
    """One computation of a pairwise job's ranking report, as the API follows it."""

    ranking_url = serializers.SerializerMethodField(
        help_text="Once succeeded: the job's ranking, which serves the latest stored report (this one until a newer one replaces it); null before."
    )
    older_method = serializers.SerializerMethodField(
        help_text="Succeeded by an older method than today's (`method` is less than the current one): its rank ranges may contradict "
        "the Holm-adjusted pairwise decisions, and the job's ranking asks for it to be computed again."
    )

    def get_older_method(self, report) -> bool:
        return report.status == RunStatus.SUCCEEDED and versions.standing(versions.PAIRWISE, report.method).older

    class Meta:
        model = PairwiseReport
        fields = [
            "id", "job", "status", "done", "total", "progress", "finished", "error", "votes",
            "created_at", "started_at", "finished_at", "url", "ranking_url", "method", "older_method",
        ]
        read_only_fields = fields

    def run_path(self, report) -> str:
        return reverse("evaluation-api:pairwise-report", kwargs={"pk": report.job_id, "report_pk": report.pk})

    def get_ranking_url(self, report) -> str | None:
        if report.status != RunStatus.SUCCEEDED:
            return None
        return absolute(self.context, reverse("evaluation-api:pairwise-ranking", kwargs={"pk": report.job_id}))


class TestSetSerializer(serializers.Serializer):
    __test__ = False  # not a pytest test class, despite the name

    id = serializers.IntegerField(source="pk")
    challenge = serializers.CharField(source="challenge.name")
    name = serializers.CharField()
    size = serializers.IntegerField(help_text="Number of instances in labels.json.")
    # Both counted by `selectors.test_sets`, which every caller reads through.
    has_logs = serializers.BooleanField(read_only=True, help_text="Whether the dialog contexts (logs.json) are stored.")
    entries = serializers.IntegerField(source="n_entries", read_only=True, help_text="Number of entries imported for it.")


class TestSetUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    __test__ = False

    challenge = serializers.CharField(max_length=200, help_text="The challenge, e.g. 'DSTC9 Track 1'; created if new.")
    name = serializers.CharField(max_length=200, help_text="The test set's name within the challenge; it must be new.")
    labels = serializers.FileField(required=False, help_text="labels.json: one {target, knowledge, response} per instance.")
    knowledge = serializers.FileField(required=False, help_text="knowledge.json (optional), checked against the labels.")
    logs = serializers.FileField(required=False, help_text="logs.json (optional): the dialog contexts, needed for crowd rating.")
    archive = serializers.FileField(required=False, help_text="Instead of the files: one .zip holding labels.json and optionally knowledge.json, logs.json.")


class TestSetLogsUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    logs = serializers.FileField(help_text="logs.json aligned with the test set's labels.json; replaces the stored contexts.")


class EntriesUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    archive = serializers.FileField(help_text="A .zip whose top level holds the team folders: <team>/<entry>.json.")
    scores = serializers.FileField(
        required=False, help_text="Objective scores CSV team_id,entry_id,<metric>,... (optional); imported with the entries, all or nothing."
    )
    baseline_teams = serializers.ListField(
        child=serializers.CharField(), required=False, default=lambda: ["baseline"],
        help_text="Team folders holding the baseline (DSTC9: baseline; DSTC10: teamB00; DSTC11: team00).",
    )
    ground_truth = serializers.BooleanField(required=False, default=False, help_text="Also add the labels as the ground-truth reference entry.")


class EntriesImportedSerializer(serializers.Serializer):
    test_set = serializers.IntegerField()
    entries = serializers.IntegerField(help_text="Number of entries imported or matched.")
    labels = serializers.ListField(child=serializers.CharField(), help_text="team/entry of each.")
    scores = serializers.BooleanField(help_text="Whether objective scores were imported with them.")
    scored_only = serializers.IntegerField(
        help_text="Entries the score file named without outputs (DSTC9 published only the finalists' outputs): added, ranked by Eq. 2, never finalists."
    )
    ground_truth = serializers.BooleanField()


class DialogSystemSerializer(RefusesUnknownFields, serializers.Serializer):
    """A registered system as the API shows it: the secret masked, never in full."""

    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(max_length=200, help_text="The organizer's name for the system.")
    url = serializers.CharField(max_length=500, help_text="The system's base URL (docs/system-contract.md).")
    secret = serializers.CharField(max_length=200, write_only=True, help_text="Shared signing secret, at least 16 characters; never returned.")
    masked_secret = serializers.CharField(read_only=True, help_text="The secret's last four characters, for telling secrets apart.")
    challenge = serializers.CharField(max_length=200, required=False, allow_blank=True, default="", help_text="Challenge name (optional).")
    check_passed = serializers.BooleanField(read_only=True)
    check_results = serializers.JSONField(
        read_only=True,
        help_text="[{rule, passed, reason, warning, evidence}] of the last contract check. A warning passes: the rule "
        "'offensive words' warns when the check's replies hold words of the offensive-word list, its evidence "
        "[{reply, words}] naming each reply ('opening', 'turn 0', ...) and the words. Checks stored before warnings "
        "existed have only rule, passed and reason.",
    )
    checked_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="When the last contract check ended; null while it runs in the background.")
    paused_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="Set while the system is paused for failing: no new chats go to it.")
    paused_reason = serializers.CharField(read_only=True, help_text="Why it was paused (empty while it runs).")
    resumed_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="When an organizer last resumed it.")

    def to_representation(self, obj):
        data = super().to_representation(obj)
        data["challenge"] = obj.challenge.name if obj.challenge_id else ""
        return data


class GoalSetSerializer(serializers.Serializer):
    """An imported goal set: how many goals, which domains its entity database covers."""

    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    goals = serializers.IntegerField(read_only=True, source="n_goals", help_text="Number of goals.")
    database_domains = serializers.SerializerMethodField(help_text="Domains with an entity database (for grounded success).")
    created_at = serializers.DateTimeField(read_only=True)

    def get_database_domains(self, obj) -> list[str]:
        return sorted(obj.database or {})


class GoalSetUploadSerializer(RefusesUnknownFields, serializers.Serializer):
    name = serializers.CharField(max_length=200, help_text="A new name for the goal set.")
    goals = serializers.FileField(help_text="A MultiWOZ data.json (its dialogs' goal fields), a JSONL of {\"id\", \"goal\"}, or a .zip holding one such file; UTF-8.")
    database_domain = serializers.SlugField(max_length=50, required=False, help_text="The domain of the database file, e.g. restaurant.")
    database = serializers.FileField(required=False, help_text="A MultiWOZ-style db JSON (a list of records) for that domain.")

    def validate(self, attrs):
        if bool(attrs.get("database")) != bool(attrs.get("database_domain")):
            raise serializers.ValidationError("give database and database_domain together, or neither")
        return attrs


class CampaignRenameSerializer(RefusesUnknownFields, serializers.Serializer):
    name = serializers.CharField(
        max_length=Campaign._meta.get_field("name").max_length, allow_blank=False,
        help_text="The campaign's new name: not blank, not another campaign's; runs of spaces become one.",
    )


class CampaignDeleteRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the campaign was not deleted, as the campaign's page says it.")
    dependents = serializers.ListField(child=serializers.CharField(), help_text="Each thing that depends on the campaign, with what to do instead.")


ADAPTIVE_UNITS = [("instance", "new items, each with every rater"), ("rating", "one rater at a time, on rated items or new ones")]


class AdaptiveSettingsSerializer(RefusesUnknownFields, serializers.Serializer):
    """A campaign's adaptive settings, as the results page's form sets them (`services.campaigns.set_adaptive`).
    A field left out of a write keeps its current value; they can change only until the crowd job exists."""

    adaptive = serializers.BooleanField(required=False, help_text="Rate in rounds and stop rating a system once its pairs are settled or the budget is spent; false: every entry on every instance.")
    confidence = serializers.FloatField(required=False, min_value=0.5, max_value=0.999, help_text="Confidence of the pair intervals, from 0.5 to 0.999 (e.g. 0.95).")
    top_k = serializers.IntegerField(required=False, allow_null=True, min_value=1, help_text="Resolve only the pairs involving the top k entries; null: every pair.")
    budget = serializers.IntegerField(required=False, allow_null=True, min_value=1, help_text="Most ratings (responses) to spend; null: up to the full design.")
    round_size = serializers.IntegerField(
        required=False, min_value=2, max_value=10**6,
        help_text="Instances added per round (at least 2, fewer than the instances rated); with unit rating, ratings per entry per round.",
    )
    unit = serializers.ChoiceField(
        required=False, choices=ADAPTIVE_UNITS,
        help_text="What a round adds: instance (new items rated by every rater of an item) or rating (one more rater at a time, in one seeded order of (instance, rater) units).",
    )

    def to_representation(self, campaign):
        return {
            "adaptive": campaign.adaptive, "confidence": campaign.adaptive_confidence, "top_k": campaign.adaptive_top_k,
            "budget": campaign.adaptive_budget, "round_size": campaign.adaptive_round_size, "unit": campaign.adaptive_unit,
        }


class FinalistScoreSerializer(serializers.Serializer):
    metric = serializers.CharField(help_text="A chosen objective metric.")
    value = serializers.FloatField(help_text="The entry's value of it, as Eq. 2 read it.")
    source = serializers.ChoiceField(
        choices=["computed", "uploaded"],
        help_text="computed: by Quorum from the entry's outputs and the labels (score_entries); uploaded: from a score.csv.",
    )


class FinalistSerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="The team's competition rank by its best entry's overall.")
    team_id = serializers.CharField()
    entry_id = serializers.CharField(help_text="The team's best entry.")
    overall = serializers.FloatField(help_text="Mean reciprocal rank over the chosen metrics (Eq. 2).")
    tied_at_cutoff = serializers.BooleanField(help_text="A team left out has the same overall as the last finalist: decide.")
    scores = FinalistScoreSerializer(many=True, help_text="Each chosen metric's value and where it came from.")


class FinalistsResponseSerializer(serializers.Serializer):
    finalists = FinalistSerializer(many=True)
    left_out = serializers.ListField(child=serializers.CharField(), help_text="Entries left out of the ranking for lack of a value for a chosen metric.")
    without_outputs = serializers.ListField(
        child=serializers.CharField(),
        help_text="Entries ranked at or above the last finalist but passed over for lack of outputs to rate (known from their "
        "scores only): import their outputs to include them. A team whose entries are all here is not among the finalists.",
    )
    campaign = serializers.IntegerField(allow_null=True, help_text="The campaign created with the finalists; null when none was asked for.")
