"""Forms of the organizer pages that set up an evaluation: test sets, their logs, entries.

They only check each field; which files go together and what is in them is checked by the import
services (the same checks for the pages and the API), whose refusals the views show on the form.
"""
from django import forms

from . import selectors


def _team_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class _OwnIds(forms.Form):
    """The set-up forms share one page (with the finalists form): each gets its own element ids,
    so two fields of the same name (test_set, archive) keep their labels apart."""

    id_prefix = "id"

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", f"{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)


class TestSetUploadForm(_OwnIds):
    __test__ = False  # not a pytest test class, despite the name
    id_prefix = "testset"

    challenge = forms.CharField(max_length=200, help_text="The challenge the test set belongs to, e.g. “DSTC9 Track 1”; created if new.")
    name = forms.CharField(max_length=200, help_text="The test set's name within the challenge, e.g. “test”; it must be new.")
    labels = forms.FileField(required=False, help_text="labels.json: one {target, knowledge, response} per instance.")
    knowledge = forms.FileField(required=False, help_text="knowledge.json (optional): the labels' knowledge references are checked against it.")
    logs = forms.FileField(required=False, help_text="logs.json (optional): the dialog contexts, needed to rate responses with a crowd.")
    archive = forms.FileField(
        required=False, help_text="Instead of the three files: one .zip holding labels.json and, if you have them, knowledge.json and logs.json."
    )


class TestSetChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.challenge} / {obj.name} ({obj.size} instances, {obj.n_entries} entries)"


class TestSetLogsForm(_OwnIds):
    __test__ = False
    id_prefix = "logs"

    test_set = TestSetChoiceField(queryset=selectors.test_sets(), help_text="The test set whose dialog contexts these are.")
    logs = forms.FileField(help_text="logs.json, aligned with the test set's labels.json; replaces the contexts it has.")


class EntriesUploadForm(_OwnIds):
    id_prefix = "entries"
    test_set = TestSetChoiceField(queryset=selectors.test_sets(), help_text="The test set the entries answer.")
    archive = forms.FileField(help_text="A .zip whose top level holds the team folders: <team>/<entry>.json, e.g. team3/entry0.json.")
    scores = forms.FileField(
        required=False,
        help_text="Objective scores (optional): CSV team_id,entry_id,<metric>,...; ids as folder names or DSTC9's numbers. Entries and scores are imported together or not at all.",
    )
    baseline_teams = forms.CharField(
        required=False, initial="baseline", max_length=500,
        help_text="Team folders that hold the baseline, comma-separated (DSTC9: baseline; DSTC10: teamB00; DSTC11: team00).",
    )
    ground_truth = forms.BooleanField(required=False, help_text="Also add the test set's labels as the ground-truth reference entry.")

    def clean_baseline_teams(self):
        return _team_names(self.cleaned_data["baseline_teams"] or "baseline")


class SystemRegistrationForm(_OwnIds):
    id_prefix = "system"
    name = forms.CharField(max_length=200, help_text="Your name for the system, e.g. “team3-entry1”. Workers never see it.")
    url = forms.CharField(max_length=500, help_text="The system's base URL (docs/system-contract.md), e.g. http://10.0.0.5:8765.")
    secret = forms.CharField(
        max_length=200, widget=forms.PasswordInput,
        help_text="The shared secret Quorum signs requests with, at least 16 characters. It is never shown again in full.",
    )
    challenge = forms.CharField(max_length=200, required=False, help_text="The challenge it was submitted to (optional; created if new).")


class GoalsUploadForm(_OwnIds):
    id_prefix = "goals"
    name = forms.CharField(max_length=200, help_text="A name for the goal set, e.g. “MultiWOZ restaurant goals”; it must be new.")
    goals = forms.FileField(help_text="A MultiWOZ data.json (its dialogs' “goal” fields are used) or a JSONL of {\"id\", \"goal\"}.")
    database_domain = forms.SlugField(
        required=False, max_length=50, help_text="The domain of the database file below, e.g. “restaurant”."
    )
    database = forms.FileField(
        required=False, help_text="A MultiWOZ-style db JSON (a list of records) for that domain, used for success with grounding."
    )

    def clean(self):
        data = super().clean()
        if bool(data.get("database")) != bool(data.get("database_domain")):
            raise forms.ValidationError("Give a database file and its domain together, or neither.")
        return data


class SystemChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj):
        check = "passed the contract check" if obj.check_passed else "did not pass the contract check"
        return f"{obj.name} ({check})"


class ChatJobForm(_OwnIds):
    """An interactive (chat) campaign: which systems, which goals, how many dialogs of each."""

    id_prefix = "chatjob"
    name = forms.CharField(max_length=200, help_text="The job's name, e.g. “DSTC9 Track 2 round 1”; it must be new.")
    systems = SystemChoiceField(
        queryset=None,
        help_text="The systems workers chat with (a paused system is not offered; hold Ctrl to pick several). Workers never see their names.",
    )
    goal_set = forms.ModelChoiceField(queryset=None, help_text="The user goals workers are given; every system gets every goal.")
    dialogs_per_goal = forms.IntegerField(
        min_value=1, max_value=100, initial=1, help_text="Dialogs per system per goal (DSTC9 Track 2 ran 50-100 dialogs per system in all)."
    )
    min_user_turns = forms.IntegerField(
        min_value=1, max_value=50, initial=1, help_text="How many messages a worker must send before ending a dialog."
    )
    reward = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, initial="0.50", help_text="Pay per dialog, in USD.")
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to workers above the goal (optional). After the chat they judge Success or Fail and rate understanding and appropriateness 1-5.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = selectors.dialog_systems().filter(paused_at__isnull=True)
        self.fields["goal_set"].queryset = selectors.goal_sets()


class FedFromChatsForm(_OwnIds):
    id_prefix = "fedchats"
    name = forms.CharField(max_length=200, help_text="A name for what is rated, e.g. “Round 1 transcripts”; it must be new.")
    chat_job = forms.ModelChoiceField(queryset=None, help_text="The interactive job whose completed dialogs (as they were saved) are rated.")
    level = forms.ChoiceField(
        choices=[("dialog", "Dialog level: the FED dialog questions over each whole dialog"), ("turn", "Turn level: the FED turn questions about each system turn")],
        help_text="DSTC9 Track 3 rated interactive dialogs at dialog level.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["chat_job"].queryset = selectors.interactive_jobs()


class FedStaticForm(_OwnIds):
    id_prefix = "fedstatic"
    name = forms.CharField(max_length=200, help_text="A name for the set, e.g. “DSTC9 Track 3 static”; it must be new.")
    jsonl = forms.FileField(help_text="One {context_id, context, responses: {system: text}} per line, the same systems on every line (docs/formats.md).")
    level = forms.ChoiceField(
        choices=[("dialog", "Dialog level: the context and the response read as one dialog"), ("turn", "Turn level: the response in its context")],
        help_text="DSTC9 Track 3 static used the dialog-level questions.",
    )


class FedLaunchForm(_OwnIds):
    id_prefix = "fedlaunch"
    raters = forms.IntegerField(min_value=1, max_value=20, initial=3, help_text="Raters per dialog or response (DSTC9 Track 3: 3).")
    reward = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, initial="0.20", help_text="Pay per rating, in USD.")


class EntryChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.label} (endpoint: {obj.dialog_system.name if obj.dialog_system else 'none'})"


class EntryEndpointForm(_OwnIds):
    """RADDLE's evaluation service: which registered system an entry is evaluated through (the
    same write as `interactive_service link`)."""

    id_prefix = "endpoint"
    entry = EntryChoiceField(queryset=None, help_text="The submission (team/entry as imported); baselines and ground truth have no endpoint.")
    system = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="— none: remove the link",
        help_text="A system registered on the systems page (it should pass the contract check). Choose none to remove the entry's endpoint.",
    )

    def __init__(self, *args, test_set, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["entry"].queryset = test_set.entries.filter(is_baseline=False, is_ground_truth=False).select_related("team", "dialog_system")
        self.fields["system"].queryset = selectors.dialog_systems()


class InteractiveScheduleForm(_OwnIds):
    """A test set's schedule of scheduled human evaluations (the same write as `interactive_service
    schedule`); the service checks the numbers' ranges and the metrics again."""

    id_prefix = "schedule"
    goal_set = forms.ModelChoiceField(queryset=None, help_text="The user goals the workers chat towards; every evaluated entry gets every goal.")
    metrics = forms.MultipleChoiceField(
        help_text="The objective metrics of the automatic score (Eq. 2: mean reciprocal rank over them) that picks the top k; hold Ctrl to pick several. "
        "The metrics the entries have are listed; an entry without all of them is not ranked.",
    )
    lower_is_better = forms.MultipleChoiceField(
        required=False, help_text="Those of the chosen metrics where a lower value is better (e.g. TER, WER); none if higher is better for all.",
    )
    top_k = forms.IntegerField(min_value=1, max_value=20, initial=3, help_text="How many of the best entries by automatic score are offered a human evaluation (1-20).")
    dialogs_per_goal = forms.IntegerField(min_value=1, max_value=100, initial=1, help_text="Dialogs per entry per goal (1-100).")
    stale_after_days = forms.IntegerField(
        min_value=1, max_value=3650, initial=60,
        help_text="An entry evaluated fewer than this many days ago is not evaluated again (RADDLE: bi-monthly, 60).",
    )
    enabled = forms.BooleanField(required=False, initial=True, help_text="Run on schedule (daily by beat). Untick to keep the settings without running them.")

    def __init__(self, *args, test_set, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["goal_set"].queryset = selectors.goal_sets()
        choices = [(m, m) for m in selectors.entry_metrics(test_set)]
        self.fields["metrics"].choices = self.fields["lower_is_better"].choices = choices


class PlanForm(forms.Form):
    """The planner on a campaign's page: a pilot (a campaign's ratings or a ratings CSV) and the goal."""

    pilot_campaign = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="(upload a pilot CSV instead)",
        help_text="A campaign whose ratings are the pilot (this one, once it has ratings, or an earlier pilot campaign).",
    )
    pilot_file = forms.FileField(
        required=False, help_text="Or a pilot ratings CSV as `rank` reads it: system,instance,rater,question,rating (optional kind)."
    )
    top_k = forms.IntegerField(min_value=2, initial=3, help_text="Separate the adjacent pairs of the top K entries (by pilot mean).")
    power = forms.FloatField(min_value=0.5, max_value=0.99, initial=0.8, help_text="Target power per pair, e.g. 0.8.")
    delta = forms.FloatField(required=False, min_value=0.001, help_text="Optional: plan to detect this difference of scores instead of the pilot's gaps.")
    max_raters = forms.IntegerField(min_value=1, max_value=10, initial=3, help_text="Most raters per instance to consider.")
    provider = forms.ChoiceField(choices=(), help_text="The crowd provider whose fees the cost uses.")
    reward = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, initial="0.10", help_text="Pay per response (one system on one instance), USD.")

    def __init__(self, *args, **kwargs):
        from hits.providers import registry

        super().__init__(*args, **kwargs)
        self.fields["pilot_campaign"].queryset = selectors.campaigns()
        self.fields["provider"].choices = [(key, key) for key in registry.keys()]
        self.fields["provider"].initial = registry.default_key()

    def clean(self):
        data = super().clean()
        if bool(data.get("pilot_campaign")) == bool(data.get("pilot_file")):
            raise forms.ValidationError("Choose a pilot campaign or upload a pilot CSV (one of them).")
        return data


class AdaptiveForm(forms.Form):
    """A campaign's adaptive settings, written by `services.campaigns.set_adaptive` (which checks
    them against the campaign too); they can change only until the crowd job is created."""

    adaptive = forms.BooleanField(
        required=False, label="Adaptive rating",
        help_text="Rate in rounds and stop rating a system once its pairs are ordered (or settled as ties) or the budget is spent. Off: every entry on every instance.",
    )
    confidence = forms.FloatField(
        min_value=0.5, max_value=0.999, initial=0.95,
        help_text="Confidence of the pair intervals that decide when a pair is resolved, from 0.5 to 0.999 (e.g. 0.95).",
    )
    top_k = forms.IntegerField(
        required=False, min_value=1, label="Top k",
        help_text="Resolve only the pairs that involve the top K entries (at most the number of ranked entries); empty: every pair.",
    )
    budget = forms.IntegerField(
        required=False, min_value=1, label="Ratings budget",
        help_text="Most ratings (responses) to spend; a round that would pass it is not added. Empty: up to the full design.",
    )
    round_size = forms.IntegerField(
        min_value=2, initial=100, help_text="Instances added per round (at least 2, fewer than the instances rated); a look follows each round.",
    )

    @classmethod
    def for_campaign(cls, campaign, data=None):
        initial = {
            "adaptive": campaign.adaptive, "confidence": campaign.adaptive_confidence, "top_k": campaign.adaptive_top_k,
            "budget": campaign.adaptive_budget, "round_size": campaign.adaptive_round_size,
        }
        return cls(data, initial=initial, prefix="adaptive")


class CrowdJobForm(forms.Form):
    """A campaign's crowd rating job, made by `services.crowd.create_crowd_job` (which checks it
    against the campaign: its entries' outputs, the test set's contexts, the adaptive settings)."""

    raters = forms.IntegerField(
        min_value=1, max_value=10, initial=3, label="Raters per item",
        help_text=(
            "Workers who rate each response (one entry on one instance), 1 to 10 (DSTC9: 3). For ranking, fewer raters on more "
            "instances separates systems with fewer ratings (an instance's raters share its quality); the planner above says how many."
        ),
    )
    sample_size = forms.IntegerField(
        required=False, min_value=1, label="Sample size",
        help_text="Rate a seeded sample of this many knowledge-seeking instances; empty: all of them.",
    )
    sample_seed = forms.IntegerField(
        min_value=0, initial=0, label="Sample seed", help_text="Seed of the sample (the same seed gives the same instances).",
    )
    order_seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**62 - 1, label="Order seed",
        help_text="Seed of the random order in which items are offered; empty: a random seed, stored with the job.",
    )
    reward = forms.DecimalField(
        min_value=0, max_digits=6, decimal_places=2, initial="0.10", label="Reward per response (USD)",
        help_text="Pay per response (one rater's answers on one item), in USD.",
    )
    launch = forms.BooleanField(
        required=False, label="Launch now",
        help_text="Open the job to raters at once. Unticked: a draft you launch below, after setting up its crowd on the job's page.",
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("prefix", "crowd")
        super().__init__(*args, **kwargs)
