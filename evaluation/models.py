"""What the benchmark publishes (systems, submissions, campaigns, scores). See DESIGN.md.

A challenge has test sets (DSTC9 Track 1: labels.json + knowledge.json) and teams; a team's
entries are system outputs aligned with a test set, with their objective scores. A campaign rates
chosen entries (finalists, plus the ground truth and the baseline as reference rows) on questions
with 1-5 ratings. Results are stored per inputs version: a rerun on the same inputs gives the same
numbers, and pages read the stored report instead of recomputing it.
"""
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper

from annotation.models import BackgroundRun, LatestAttempt

DEFAULT_QUESTIONS = ["appropriateness", "accuracy"]


def default_questions():
    return list(DEFAULT_QUESTIONS)


class Challenge(models.Model):
    name = models.CharField(max_length=200, unique=True, help_text="e.g. 'DSTC9 Track 1'.")
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class TestSet(models.Model):
    __test__ = False  # not a pytest test class, despite the name
    #: Its files as JSON, megabytes for DSTC9: listings defer them, and whoever needs them loads them.
    FILES = ("labels", "knowledge", "logs")

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="test_sets")
    name = models.CharField(max_length=200, help_text="e.g. 'test'.")
    labels = models.JSONField(help_text="labels.json: one {target, knowledge, response} per instance.")
    knowledge = models.JSONField(default=dict, blank=True, help_text="knowledge.json: domain -> entity -> docs.")
    logs = models.JSONField(
        default=list, blank=True, help_text="logs.json: the dialog context of every instance; needed to rate responses in a crowd campaign."
    )
    size = models.PositiveIntegerField(help_text="Number of instances (length of labels).")
    # A list: the entries' scores are JSON objects, whose keys PostgreSQL (jsonb) keeps shortest first.
    score_columns = models.JSONField(
        default=list, blank=True,
        help_text="The metric columns of the uploaded score.csv in the file's order (a later file's new ones after them): "
        "the order the results list metrics in.",
    )
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of labels and knowledge, for result versions.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["challenge", "name"], name="testset_unique_name")]

    def __str__(self):
        return f"{self.challenge} / {self.name}"


class Team(models.Model):
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="teams")
    team_id = models.CharField(max_length=100, help_text="The team's id as in the submission directory, e.g. 'team3'.")

    class Meta:
        ordering = ["team_id"]
        constraints = [models.UniqueConstraint(fields=["challenge", "team_id"], name="team_unique_id")]

    def __str__(self):
        return self.team_id


class Entry(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="entries")
    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="entries")
    entry_id = models.CharField(max_length=100, help_text="The entry's id, e.g. 'entry0'.")
    outputs = models.JSONField(
        null=True, blank=True, help_text="The entry's output, aligned with labels.json; null when only ratings are known."
    )
    objective_scores = models.JSONField(default=dict, blank=True, help_text="Automatic metrics: {metric: value}.")
    computed_scores = models.JSONField(
        default=dict, blank=True,
        help_text="The metrics Quorum computed from the outputs and the labels (score_entries), kept apart from uploaded ones.",
    )
    is_baseline = models.BooleanField(default=False)
    is_ground_truth = models.BooleanField(default=False, help_text="The reference responses, rated as a reference row.")
    dialog_system = models.ForeignKey(
        "DialogSystem", null=True, blank=True, on_delete=models.SET_NULL, related_name="entries",
        help_text="The entry's registered endpoint: RADDLE's scheduled evaluation chats with it (optional).",
    )
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of outputs and flags.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team__team_id", "entry_id"]
        verbose_name_plural = "entries"
        constraints = [
            models.UniqueConstraint(fields=["team", "test_set", "entry_id"], name="entry_unique_id"),
            models.CheckConstraint(
                condition=~(Q(is_baseline=True) & Q(is_ground_truth=True)), name="entry_not_both_baseline_and_truth"
            ),
        ]

    def __str__(self):
        return self.label

    @property
    def label(self):
        return f"{self.team.team_id}/{self.entry_id}"

    def scores_for_ranking(self) -> dict:
        """The value of each metric an automatic ranking (Eq. 2) reads: the uploaded score file's (what
        the challenge published) where it has one, else Quorum's computation; `finalist_scores`
        says which per value."""
        return {**(self.computed_scores or {}), **(self.objective_scores or {})}

    @property
    def kind(self):
        if self.is_ground_truth:
            return "ground_truth"
        return "baseline" if self.is_baseline else "entry"


class Campaign(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        COLLECTING = "collecting", "Collecting ratings"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200, unique=True)
    test_set = models.ForeignKey(TestSet, on_delete=models.PROTECT, related_name="campaigns")
    questions = models.JSONField(default=default_questions, help_text="Rated questions, each on a 1-5 scale.")
    entries = models.ManyToManyField(Entry, related_name="campaigns", blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    rater_ids_known = models.BooleanField(
        default=True, help_text="False when ratings were imported as positional lists (DSTC9 human_eval files)."
    )
    inputs_version = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of everything the results depend on; refreshed by every write."
    )
    # Adaptive mode (docs/evaluation.md, "Adaptive campaigns"): set before the crowd job is made,
    # through services.adaptive.set_adaptive, which checks them; fixed once the job exists.
    adaptive = models.BooleanField(
        default=False,
        help_text="Rate in rounds of instances and, after each round, keep rating only the systems whose order is still "
        "uncertain; stop when the chosen pairs are resolved or the budget is spent.",
    )
    adaptive_confidence = models.FloatField(
        default=0.95, help_text="Adaptive mode: confidence with which a pair's order is resolved (0.5 to 0.999), valid over all looks."
    )
    adaptive_top_k = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="Adaptive mode: resolve the pairs that involve the top K entries; empty resolves every pair of entries.",
    )
    adaptive_budget = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Adaptive mode: most ratings (responses: one rater on one system's response) the campaign may use; "
        "empty allows the full design. A round that would pass it is not started.",
    )
    adaptive_round_size = models.PositiveIntegerField(
        default=100,
        help_text="Adaptive mode: instances per round (at least 2, fewer than the instances rated); in rating units, ratings "
        "per entry per round (fewer than the instances rated times the raters per instance).",
    )
    adaptive_unit = models.CharField(
        max_length=16, choices=[("instance", "instance"), ("rating", "rating")], default="instance",
        help_text="Adaptive mode: what a round adds. instance: new items, each rated by the job's raters per instance; "
        "rating: one more rater at a time, on items already rated or new ones (up to the raters per instance), in one "
        "seeded order of (instance, rater) units, as the replay draws published ratings.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(adaptive_confidence__gte=0.5) & Q(adaptive_confidence__lte=0.999), name="campaign_adaptive_confidence_range"
            ),
            models.CheckConstraint(condition=Q(adaptive_round_size__gte=2), name="campaign_adaptive_round_size_min"),
            models.CheckConstraint(condition=Q(adaptive_top_k__isnull=True) | Q(adaptive_top_k__gte=1), name="campaign_adaptive_top_k_min"),
            models.CheckConstraint(condition=Q(adaptive_budget__isnull=True) | Q(adaptive_budget__gte=1), name="campaign_adaptive_budget_min"),
        ]

    def __str__(self):
        return self.name


class Rating(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="ratings")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="ratings")
    instance = models.PositiveIntegerField(help_text="Index of the instance in the test set's labels.")
    question = models.CharField(max_length=64)
    rater = models.CharField(max_length=200, help_text="Worker id, or a position ('pos1') for imported lists.")
    value = models.PositiveSmallIntegerField(validators=[MinValueValidator(1), MaxValueValidator(5)])

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "entry", "instance", "question", "rater"], name="rating_unique"),
            models.CheckConstraint(condition=Q(value__gte=1) & Q(value__lte=5), name="rating_value_1_to_5"),
        ]
        indexes = [models.Index(fields=["campaign", "question"])]


class CampaignResult(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="results")
    inputs_version = models.CharField(max_length=64)
    computed_at = models.DateTimeField(auto_now_add=True)
    seconds = models.FloatField(default=0, help_text="Time taken to compute the report.")
    report = models.JSONField(help_text="The full report (`evaluation.stats.report.build_report`).")

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"
        constraints = [models.UniqueConstraint(fields=["campaign", "inputs_version"], name="result_unique_version")]

    def __str__(self):
        return f"{self.campaign} @ {self.inputs_version[:12]}"


class CampaignResultsRun(LatestAttempt):
    """The latest attempt at computing a campaign's results ("compute" on its page, POST results/,
    an adaptive campaign that stopped, the beat sweep): queued, running, succeeded or failed with
    the reason (`campaigns/services/results_runs.py`). A failure leaves the stored `CampaignResult`s
    as they were, so the page shows the earlier results, stale, with the failure named above them."""

    campaign = models.OneToOneField(
        Campaign, on_delete=models.CASCADE, related_name="results_run", help_text="The campaign whose results the attempt computes."
    )

    def __str__(self):
        return f"results of campaign {self.campaign_id}: {self.status}"


class CampaignJob(models.Model):
    """The crowd job that collects a campaign's ratings (a Likert job of the annotation app).

    Its items carry only what raters see; which entry and instance an item rates is kept here,
    in `CampaignItem`, so that no system identity reaches the raters' pages.
    """

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="crowd_job")
    job = models.OneToOneField("annotation.Job", on_delete=models.PROTECT, related_name="evaluation_campaign")
    instances = models.JSONField(help_text="Indices of the test-set instances rated, the same for every entry.")
    order_seed = models.BigIntegerField(help_text="Seed of the random order in which items are offered.")
    skipped = models.JSONField(
        default=dict, blank=True, help_text="Per entry label: instances not rated because the entry gave no response there."
    )
    round_order = models.JSONField(
        default=list, blank=True,
        help_text="Adaptive mode: the rated instances in the seeded order rounds take them in, the same for every system; "
        "in rating units, [instance, rater number] pairs.",
    )
    round_sizes = models.JSONField(
        default=list, blank=True,
        help_text="Adaptive mode: the instances (or rating units) rated after each round (the looks), fixed before any rating.",
    )
    critical_value = models.FloatField(
        null=True, blank=True,
        help_text="Adaptive mode: the group-sequential critical value of the looks (`evaluation.stats.allocation.boundary`).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.campaign} -> job {self.job_id}"


class CampaignLook(models.Model):
    """One look of an adaptive campaign: after a round's ratings were all in, the state of every
    pair, what it cost so far, and what was decided (another round for some systems, or stop)."""

    class Decision(models.TextChoices):
        CONTINUE = "continue", "Next round added"
        RESOLVED = "resolved", "Stopped: every chosen pair is resolved or settled as a tie"
        BUDGET = "budget", "Stopped: the next round would pass the ratings budget"
        CROWD_BUDGET = "crowd_budget", "Stopped: the crowd job's money budget cannot carry the next round"
        COMPLETE = "complete", "Stopped: every instance is rated"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="looks")
    number = models.PositiveIntegerField(help_text="1 for the look after the first round, and so on.")
    instances = models.PositiveIntegerField(help_text="Instances of the round order rated by the systems still rated at this look.")
    ratings_spent = models.PositiveIntegerField(help_text="Ratings (slots) of the crowd job at this look.")
    critical_value = models.FloatField(help_text="The critical value the pair intervals used (the sequential boundary).")
    pairs = models.JSONField(
        default=list, help_text="Per pair of entries: a, b, instances, difference, low, high, margin, state (resolved | tied | open)."
    )
    scores = models.JSONField(default=dict, help_text="Each entry's final score on the instances it was rated on.")
    prefixes = models.JSONField(default=dict, help_text="Per entry label: instances of the round order it is rated on after the decision.")
    active = models.JSONField(default=list, help_text="Entries still rated after this look.")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    added_ratings = models.PositiveIntegerField(default=0, help_text="Ratings (slots) the next round added; 0 when stopped.")
    next_instances = models.PositiveIntegerField(null=True, blank=True, help_text="The round order's length after the next round.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [models.UniqueConstraint(fields=["campaign", "number"], name="campaignlook_unique_number")]

    def __str__(self):
        return f"{self.campaign} look {self.number}"


class CampaignItem(models.Model):
    """Which (entry, instance) an item of a campaign's crowd job rates: one item per pair."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="crowd_items")
    item = models.OneToOneField("annotation.Item", on_delete=models.CASCADE, related_name="evaluation_pair")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="crowd_items")
    instance = models.PositiveIntegerField(help_text="Index of the instance in the test set's labels.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "entry", "instance"], name="crowd_item_unique_pair")]


class JudgeRun(models.Model):
    """An automatic judge's scores for a campaign (an LLM judge or a metric), imported from a CSV,
    with the agreement and prediction-powered report computed from them and the human ratings."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judge_runs")
    name = models.CharField(max_length=100, help_text="The judge's name, e.g. 'gpt-4o-rubric' or 'bleurt'.")
    report = models.JSONField(default=dict, blank=True, help_text="Agreement, alternative-annotator test and PPI intervals (`evaluation.stats.judges.build`).")
    inputs_version = models.CharField(
        max_length=64, blank=True, help_text="The campaign's inputs version when the report was computed; the page says when it is older."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="judgerun_unique_name")]

    def __str__(self):
        return f"{self.campaign} / {self.name}"


class JudgeScore(models.Model):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="scores")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="judge_scores")
    instance = models.PositiveIntegerField(help_text="Index of the instance in the test set's labels.")
    question = models.CharField(max_length=64)
    score = models.FloatField(help_text="The judge's score, on its own scale.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "entry", "instance", "question"], name="judgescore_unique")]


class PairwiseJudgeRun(models.Model):
    """An automatic judge's verdicts on the pairs of a pairwise job, imported from a CSV; the
    pairwise page ranks the systems with them and the human votes (prediction-powered rank sets)."""

    job = models.ForeignKey("annotation.Job", on_delete=models.CASCADE, related_name="pairwise_judge_runs")
    name = models.CharField(max_length=100, help_text="The judge's name, e.g. 'gpt-4o-pairwise'.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["job", "name"], name="pairwisejudgerun_unique_name")]

    def __str__(self):
        return f"{self.job} / {self.name}"


class PairwiseJudgeVerdict(models.Model):
    class Preferred(models.TextChoices):
        A = "a", "Output a"
        B = "b", "Output b"
        TIE = "tie", "Tie"

    run = models.ForeignKey(PairwiseJudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="pairwise_judge_verdicts")
    preferred = models.CharField(max_length=3, choices=Preferred.choices, help_text="The output the judge prefers (the pair's a or b), or a tie.")
    probability = models.FloatField(
        null=True, blank=True, help_text="The judge's probability that its preferred output is the better one (0.5 to 1); null when not given or a tie."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="pairwisejudgeverdict_unique")]


# --- Interactive evaluation (PROTOCOLS.md section 3; docs/system-contract.md) ---------------------


class DialogSystem(models.Model):
    """A submitted dialog system that speaks the system contract. Workers never see its name: a
    chat item names it by `public_id` only, which says nothing about the system or the team."""

    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="systems", null=True, blank=True,
        help_text="The challenge the system was submitted to (optional).",
    )
    name = models.CharField(max_length=200, unique=True, help_text="The organizer's name for the system, e.g. 'team3-entry1'.")
    url = models.URLField(max_length=500, help_text="The system's base URL; Quorum calls {url}/health, {url}/sessions, ...")
    secret = models.CharField(
        max_length=200, help_text="Shared secret Quorum signs every request with (HMAC-SHA256). Never shown back in full."
    )
    public_id = models.CharField(
        max_length=32, unique=True, help_text="Opaque id that chat items carry instead of the system's name (random, not derived from it)."
    )
    check_passed = models.BooleanField(default=False, help_text="Whether the last contract check passed every rule.")
    check_results = models.JSONField(
        default=list, blank=True,
        help_text="The last contract check: [{rule, passed, reason, warning, evidence}]; a warning passes (listed offensive words in "
        "its replies, evidence [{reply, words}]).",
    )
    checked_at = models.DateTimeField(null=True, blank=True, help_text="When the contract check last ran.")
    paused_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the system kept failing: no new chats are assigned to it until an organizer resumes it."
    )
    paused_reason = models.CharField(max_length=300, blank=True, help_text="Why the system was paused (which failures, how many).")
    resumed_at = models.DateTimeField(
        null=True, blank=True, help_text="When an organizer last resumed it: only turns after this count towards pausing it again."
    )
    resume_when_checked = models.BooleanField(
        default=False, help_text="An organizer pressed Resume: it is resumed when the contract check it queued passes, else stays paused."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(paused_at__isnull=True, paused_reason="") | models.Q(paused_at__isnull=False) & ~models.Q(paused_reason=""),
                name="dialogsystem_paused_with_reason",
            )
        ]

    def __str__(self):
        return self.name

    @property
    def masked_secret(self) -> str:
        """What pages and the API show of the secret: enough to tell two apart, not to sign with."""
        return "•" * 8 + self.secret[-4:] if len(self.secret) > 8 else "•" * 8


class GoalSet(models.Model):
    """User goals for interactive dialogs, with the entity database they refer to."""

    name = models.CharField(max_length=200, unique=True, help_text="e.g. 'MultiWOZ restaurant goals'.")
    database = models.JSONField(
        default=dict, blank=True, help_text="MultiWOZ-style entity database: {domain: [record, ...]}, for success with grounding."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class UserGoal(models.Model):
    goal_set = models.ForeignKey(GoalSet, on_delete=models.CASCADE, related_name="goals")
    key = models.CharField(max_length=200, help_text="The goal's id: the MultiWOZ dialog id, or the JSONL line's 'id'.")
    goal = models.JSONField(help_text="MultiWOZ goal shape: {domain: {info, reqt, book, ...}, message: [...]}.")

    class Meta:
        ordering = ["goal_set", "pk"]
        constraints = [models.UniqueConstraint(fields=["goal_set", "key"], name="usergoal_unique_key")]

    def __str__(self):
        return f"{self.goal_set} / {self.key}"


class ChatJobName(models.Model):
    """The name of a chat job `create_chat_job` made, unique as its check reads names (ignoring
    case, as `iexact` compares them: upper case). The check alone let two organizers who submitted
    at the same instant both through, each reading before the other had committed; the second's
    insert here waits for the first and is refused. Jobs made before it have no row: the check
    still covers them, as it does jobs of other kinds."""

    job = models.OneToOneField("annotation.Job", on_delete=models.CASCADE, related_name="chat_job_name")
    name = models.CharField(max_length=200)

    class Meta:
        constraints = [models.UniqueConstraint(Upper("name"), name="chat_job_name_unique_ignoring_case")]

    def __str__(self):
        return self.name


class ChatSession(models.Model):
    """One conversation between a worker and a system, relayed by Quorum. `key` is derived from the
    work slot, so reloading the page continues the same conversation."""

    system = models.ForeignKey(DialogSystem, on_delete=models.PROTECT, related_name="sessions")
    key = models.CharField(max_length=100, unique=True, help_text="The contract's session_id (from the work slot; no worker id in it).")
    goal = models.JSONField(null=True, blank=True, help_text="The goal the worker was given.")
    state = models.JSONField(null=True, blank=True, help_text="The system's last state, echoed on the next turn.")
    ended_reason = models.CharField(max_length=16, blank=True, help_text="Why it ended: system (the system said end), or the worker's success | fail | abandoned.")
    opened_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.key


class ChatTurn(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        SYSTEM = "system"

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="turns")
    position = models.PositiveIntegerField(help_text="Order in the conversation, from 0 (the opening).")
    role = models.CharField(max_length=8, choices=Role.choices)
    user_turn = models.PositiveIntegerField(null=True, blank=True, help_text="The contract's 0-based user turn this belongs to.")
    text = models.TextField(blank=True)
    failed = models.BooleanField(default=False, help_text="The system timed out or broke the contract; the worker saw a fallback.")
    error = models.CharField(max_length=500, blank=True, help_text="Why the turn failed.")
    offered = models.JSONField(null=True, blank=True, help_text="The slot values the system said it offered or booked.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "position"]
        constraints = [models.UniqueConstraint(fields=["session", "position"], name="chatturn_unique_position")]


class FedSet(models.Model):
    """What a FED questionnaire rates (PROTOCOLS.md section 4): frozen transcripts of a chat job's
    dialogs, or a static context/response set (the same contexts for every system). Every candidate
    goes through the offensive-word filter; flagged ones wait for an organizer's keep or drop, and
    only clean and kept ones become items of the FED job."""

    class Level(models.TextChoices):
        DIALOG = "dialog", "Dialog level (FED dialog questions over the whole dialog)"
        TURN = "turn", "Turn level (FED turn questions about one response in its context)"

    class Source(models.TextChoices):
        CHATS = "chats", "Transcripts of an interactive job"
        STATIC = "static", "Static context/response set (JSONL)"

    name = models.CharField(max_length=200, unique=True, help_text="e.g. 'DSTC9 Track 3 static'.")
    level = models.CharField(max_length=8, choices=Level.choices, help_text="Which FED questions the raters answer.")
    source = models.CharField(max_length=8, choices=Source.choices)
    chat_job = models.ForeignKey(
        "annotation.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The interactive job whose transcripts are rated (source 'chats').",
    )
    job = models.OneToOneField(
        "annotation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="fed_set",
        help_text="The FED questionnaire job, once launched.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(level__in=["dialog", "turn"]), name="fedset_level_valid"),
            models.CheckConstraint(
                condition=Q(source="chats", chat_job__isnull=False) | Q(source="static", chat_job__isnull=True), name="fedset_source_valid"
            ),
        ]

    def __str__(self):
        return self.name


class OffenceReview(models.TextChoices):
    """Where a dialog stands with the offensive-word filter (PROTOCOLS.md section 4)."""

    CLEAN = "clean", "Clean (nothing flagged)"
    PENDING = "pending", "Flagged: waiting for review"
    KEPT = "kept", "Flagged, kept by an organizer"
    DROPPED = "dropped", "Flagged, dropped by an organizer (never rated)"


class Screened(models.Model):
    """What the offensive-word filter found in something to be evaluated, and an organizer's keep
    or drop: shared by FED candidates and chat dialogs, so one review service serves both."""

    Review = OffenceReview

    flagged_words = models.JSONField(default=list, blank=True, help_text="Words of the offensive-word list found in it.")
    review = models.CharField(max_length=8, choices=OffenceReview.choices, default=OffenceReview.CLEAN)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class FedCandidate(Screened):
    """One thing to rate: a payload raters see (no system name in it) and the system it is from."""

    fed_set = models.ForeignKey(FedSet, on_delete=models.CASCADE, related_name="candidates")
    position = models.PositiveIntegerField(help_text="Order in the set; the FED job's item positions follow it.")
    system = models.CharField(max_length=200, help_text="The system the dialog or response is from (never shown to raters).")
    origin = models.CharField(max_length=200, help_text="Where it came from: 'chat response 12, turn 3' or 'context c7'.")
    payload = models.JSONField(help_text="What raters see: {dialog} or {context, response}.")
    item = models.OneToOneField("annotation.Item", null=True, blank=True, on_delete=models.SET_NULL, related_name="fed_candidate")

    class Meta:
        ordering = ["fed_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["fed_set", "position"], name="fedcandidate_unique_position"),
            models.CheckConstraint(condition=Q(review__in=["clean", "pending", "kept", "dropped"]), name="fedcandidate_review_valid"),
            # Only a flagged candidate is reviewed, and a flagged one is never "clean".
            models.CheckConstraint(
                condition=Q(review="clean", flagged_words=[]) | (Q(review__in=["pending", "kept", "dropped"]) & ~Q(flagged_words=[])),
                name="fedcandidate_flagged_means_reviewed",
            ),
            models.CheckConstraint(condition=~Q(review="dropped") | Q(item__isnull=True), name="fedcandidate_dropped_never_rated"),
        ]



class FedResult(models.Model):
    """A FED set's results computed from one state of its counted answers (`fed/results.py`, in the
    background): the set's page, its CSV, the API and the `fed_results` command read it, and nothing
    is computed on a request. The latest is shown; one from older answers or an older method is shown
    marked as such until the computation under way (`FedResultsRun`) replaces it."""

    fed_set = models.ForeignKey(FedSet, on_delete=models.CASCADE, related_name="results")
    answers_version = models.CharField(
        max_length=64, help_text="The state of the set's counted answers it was computed from: how many count, and the latest move of any "
        "of the job's responses (`evaluation.fed.selectors.answers_version`).",
    )
    answers = models.PositiveIntegerField(default=0, help_text="Counted answers (responses) it was computed from.")
    method = models.PositiveIntegerField(
        default=0, help_text="The method that computed it (`evaluation.stats.versions.FED.current` when it was stored); one computed "
        "by an older method is computed again, and marked until then.",
    )
    computed_at = models.DateTimeField(auto_now_add=True)
    seconds = models.FloatField(default=0, help_text="Time taken to compute it.")
    report = models.JSONField(help_text='{"results": per system and question, "agreement": per question} (`evaluation.fed.selectors.fed_report`).')

    class Meta:
        ordering = ["-computed_at"]
        constraints = [models.UniqueConstraint(fields=["fed_set", "answers_version", "method"], name="fed_result_unique_version")]

    def __str__(self):
        return f"{self.fed_set} @ {self.answers_version}"


class FedResultsRun(LatestAttempt):
    """The latest attempt at computing a FED set's results (`fed/results.py`): queued, running,
    succeeded or failed with the reason. A failure leaves the stored `FedResult` as it was."""

    fed_set = models.OneToOneField(
        FedSet, on_delete=models.CASCADE, related_name="results_run", help_text="The FED set whose results the attempt computes.",
    )

    def __str__(self):
        return f"results of FED set {self.fed_set_id}: {self.status}"

class ChatScreening(Screened):
    """A completed chat whose transcript the offensive-word filter flagged (clean chats have none).
    Until an organizer keeps it, it is left out of the interactive leaderboard and its exports;
    a dropped one stays out."""

    response = models.OneToOneField(
        "annotation.Response", on_delete=models.CASCADE, related_name="chat_screening", help_text="The chat's response (its saved transcript)."
    )

    class Meta:
        ordering = ["response"]
        constraints = [
            models.CheckConstraint(
                condition=Q(review__in=["pending", "kept", "dropped"]) & ~Q(flagged_words=[]), name="chatscreening_flagged_and_reviewable"
            ),
        ]


class InteractiveSchedule(models.Model):
    """RADDLE's evaluation service for one test set's leaderboard: on a schedule, the top-k entries
    by automatic score (Eq. 2 over `metrics`) that have a registered endpoint and no human
    evaluation in the last `stale_after_days` get an interactive campaign of `dialogs_per_goal`
    dialogs per goal of `goal_set`."""

    test_set = models.OneToOneField(TestSet, on_delete=models.CASCADE, related_name="interactive_schedule")
    goal_set = models.ForeignKey(GoalSet, on_delete=models.PROTECT, related_name="+", help_text="The goals the workers are given.")
    metrics = models.JSONField(help_text="Objective metrics the automatic score (Eq. 2, mean reciprocal rank) is computed over.")
    lower_is_better = models.JSONField(default=list, blank=True, help_text="Those of the metrics where lower is better.")
    top_k = models.PositiveIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(20)], help_text="How many of the best entries are offered a human evaluation."
    )
    dialogs_per_goal = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(100)], help_text="Dialogs per entry per goal."
    )
    stale_after_days = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1)], help_text="An entry evaluated less than this many days ago is not evaluated again (RADDLE: bi-monthly)."
    )
    enabled = models.BooleanField(default=True)
    last_run_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(top_k__gte=1, top_k__lte=20), name="interactiveschedule_top_k_range"),
            models.CheckConstraint(condition=Q(dialogs_per_goal__gte=1, dialogs_per_goal__lte=100), name="interactiveschedule_dialogs_range"),
            models.CheckConstraint(condition=Q(stale_after_days__gte=1), name="interactiveschedule_stale_positive"),
        ]


class EntryInteractiveRun(models.Model):
    """One scheduled human evaluation of an entry: the chat job it was part of, and when."""

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="interactive_runs")
    job = models.ForeignKey("annotation.Job", on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["entry", "job"], name="entryinteractiverun_unique")]


class CampaignRun(BackgroundRun):
    """Long work a campaign page asks for, done in the background (`evaluation.tasks.run_campaign_run`,
    `campaigns/services/runs.py`): a planner run or a human-evaluation import. The page that
    started it returns at once and follows it through its progress endpoint."""

    class Kind(models.TextChoices):
        PLAN = "plan", "Planner run"
        HUMAN_EVAL_IMPORT = "human_eval_import", "Human-evaluation import"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    kind = models.CharField(max_length=32, choices=Kind.choices, help_text="What the run does.")
    options = models.JSONField(default=dict, blank=True, help_text="What was asked: the planner's goal and pilot, the import's replace choice.")
    upload = models.CharField(max_length=500, blank=True, help_text="The uploaded file the run reads; removed when the run ends.")
    upload_name = models.CharField(max_length=255, blank=True, help_text="The uploaded file's name as the organizer chose it, for messages.")
    result = models.JSONField(null=True, blank=True, help_text="Once succeeded: the plan, or what the import stored.")

    class Meta(BackgroundRun.Meta):
        pass


class PairwiseReport(BackgroundRun):
    """A pairwise job's stored ranking report: the Bradley-Terry ranking with its bootstrap, the
    votes that hold each order, the style-controlled fit and the position bias, computed in the
    background (`evaluation.tasks.compute_pairwise_report`, `campaigns/services/pairwise.py`) when
    the counted votes change; the page, the downloads and the API read it. One row per computation:
    the latest succeeded one is shown, a pending or running one is the recomputation under way."""

    job = models.ForeignKey("annotation.Job", on_delete=models.CASCADE, related_name="pairwise_reports")
    votes = models.PositiveIntegerField(default=0, help_text="Counted votes the report was computed from.")
    seconds = models.FloatField(default=0, help_text="Time taken to compute the report.")
    report = models.JSONField(
        null=True, blank=True,
        help_text='Once succeeded: {"rows" (the ranking), "controls" (fragility, style, position), "votes", "bootstrap", "seed"}; null without counted votes.',
    )
    method = models.PositiveIntegerField(
        default=0,
        help_text="The method that computed the report (`evaluation.stats.versions.PAIRWISE.current` when it was stored; 0: "
        "stored before methods were recorded). An older one is computed again and marked until then.",
    )

    class Meta(BackgroundRun.Meta):
        constraints = [
            # The debounce: votes that change while a computation waits to start join it.
            models.UniqueConstraint(fields=["job"], condition=Q(status="pending"), name="pairwise_report_one_pending"),
        ]


class ObjectiveScoringRun(BackgroundRun):
    """One `score_entries` run over a test set's entries (done/total count entries), in the background."""

    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="scoring_runs")
    summary = models.JSONField(
        default=dict, blank=True,
        help_text="Entries scored, the metrics computed, and those left to the uploaded score.csv with the reason.",
    )
