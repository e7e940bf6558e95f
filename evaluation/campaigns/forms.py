"""Forms of the organizer pages that set up an evaluation: test sets, their logs, entries.

They only check each field; which files go together and what is in them is checked by the import
services (the same checks for the pages and the API), whose refusals the views show on the form.
"""
from django import forms

from evaluation.campaigns import selectors
from evaluation.forms import OwnIdsForm
from hits.providers import registry
from quorum import numbers


def _team_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class TestSetUploadForm(OwnIdsForm):
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
        return f"{obj.challenge} / {obj.name} ({numbers.count(obj.size)} instances, {numbers.count(obj.n_entries)} entries)"


def choose_the_only_test_set(form) -> None:
    """A blank form whose `test_set` has one choice starts on it, not on "---------"."""
    if form.is_bound:
        return
    ids = list(form.fields["test_set"].queryset.values_list("pk", flat=True)[:2])
    if len(ids) == 1:
        form.initial.setdefault("test_set", ids[0])


class TestSetLogsForm(OwnIdsForm):
    __test__ = False
    id_prefix = "logs"

    test_set = TestSetChoiceField(queryset=selectors.test_sets(), help_text="The test set these files belong to.")
    logs = forms.FileField(required=False, help_text="logs.json, aligned with the test set's labels.json; replaces the contexts it has.")
    knowledge = forms.FileField(
        required=False, help_text="knowledge.json, the reference knowledge the labels cite (needed to rate accuracy); replaces what it has.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choose_the_only_test_set(self)

    def clean(self):
        data = super().clean()
        if not data.get("logs") and not data.get("knowledge"):
            raise forms.ValidationError("Choose logs.json, knowledge.json or both.")
        return data


class EntriesUploadForm(OwnIdsForm):
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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choose_the_only_test_set(self)

    def clean_baseline_teams(self):
        return _team_names(self.cleaned_data["baseline_teams"] or "baseline")


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
        min_value=2, initial=100, help_text="Instances added per round (at least 2, fewer than the instances rated); a look follows each round. In rating units: ratings per entry per round.",
    )
    unit = forms.ChoiceField(
        required=False, initial="instance", label="Rounds add",
        choices=[("instance", "new items, each with every rater"), ("rating", "one rater at a time, on rated items or new ones")],
        help_text="What a round adds: new items rated by the job's raters per instance, or one more rater at a time (up to the raters per instance) "
        "in one seeded order of (instance, rater) units, which on past challenges needed fewer ratings.",
    )

    @classmethod
    def for_campaign(cls, campaign, data=None):
        initial = {
            "adaptive": campaign.adaptive, "confidence": campaign.adaptive_confidence, "top_k": campaign.adaptive_top_k,
            "budget": campaign.adaptive_budget, "round_size": campaign.adaptive_round_size, "unit": campaign.adaptive_unit,
        }
        return cls(data, initial=initial, prefix="adaptive")


class CrowdJobForm(forms.Form):
    """A campaign's crowd rating job, made by `services.crowd.create_crowd_job` (which checks it
    against the campaign: its entries' outputs, the test set's contexts, the adaptive settings)."""

    raters = forms.IntegerField(
        min_value=1, max_value=10, initial=3, label="Raters per item",
        help_text=(
            "Workers who rate each response (one entry on one instance), 1 to 10 (DSTC9: 3). For ranking, fewer raters on more "
            "instances separates systems with fewer ratings (an instance's raters share its quality); the planner on this page (“Plan the campaign's size”) says how many."
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
