"""Forms of the interactive evaluation pages: systems, goal sets, chat jobs, entries' endpoints and schedules."""
from django import forms

from evaluation.forms import OwnIdsForm
from evaluation.interactive import selectors
from evaluation.interactive.systems.check import warnings as check_warnings


class SystemRegistrationForm(OwnIdsForm):
    id_prefix = "system"
    name = forms.CharField(max_length=200, help_text="Your name for the system, e.g. “team3-entry1”. Workers never see it.")
    url = forms.CharField(
        max_length=500, label="URL", help_text="The system's base URL (docs/system-contract.md), e.g. https://team3.example.org:8765. Private, loopback and "
        "link-local addresses are refused unless the operator allows the host (QUORUM_SYSTEM_ALLOWED_HOSTS).",
    )
    secret = forms.CharField(
        max_length=200, widget=forms.PasswordInput,
        help_text="The shared secret Quorum signs requests with, at least 16 characters. It is never shown again in full.",
    )
    challenge = forms.CharField(max_length=200, required=False, help_text="The challenge it was submitted to (optional; created if new).")


class GoalsUploadForm(OwnIdsForm):
    id_prefix = "goals"
    name = forms.CharField(max_length=200, help_text="A name for the goal set, e.g. “MultiWOZ restaurant goals”; it must be new.")
    goals = forms.FileField(
        help_text="A MultiWOZ data.json (its dialogs' “goal” fields are used), a JSONL of {\"id\", \"goal\"}, or a .zip holding one "
        "such file (as MultiWOZ ships it), UTF-8."
    )
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
        # Only systems that passed the contract check are offered; one whose check warned says so
        # here too, where the organizer gives it to annotators.
        warned = check_warnings(obj.check_results)
        return f"{obj.name} (its check warned: {', '.join(r['rule'] for r in warned)})" if warned else obj.name


class SystemChangeForm(OwnIdsForm):
    """A registered system's new URL or secret (blank: keep it); the contract check runs again."""

    id_prefix = "syschange"
    url = forms.CharField(required=False, max_length=500, help_text="The system's base URL; blank keeps the current one.")
    secret = forms.CharField(
        required=False, max_length=200, widget=forms.PasswordInput,
        help_text="The shared secret the system expects (at least 16 characters); blank keeps the current one.",
    )


class ChatJobForm(OwnIdsForm):
    """An interactive (chat) campaign: which systems, which goals, how many dialogs of each."""

    id_prefix = "chatjob"
    name = forms.CharField(max_length=200, help_text="The job's name, e.g. “DSTC9 Track 2 round 1”; it must be new.")
    systems = SystemChoiceField(
        queryset=None,
        help_text="The systems workers chat with (hold Ctrl to pick several). Only systems that passed the contract check and "
        "are not paused are offered: check a system again above once it is fixed. Workers never see their names.",
    )
    goal_set = forms.ModelChoiceField(queryset=None, help_text="The user goals workers are given; every system gets every goal.")
    dialogs_per_goal = forms.IntegerField(
        min_value=1, max_value=100, initial=1, help_text="Dialogs per system per goal (DSTC9 Track 2 ran 50-100 dialogs per system in all)."
    )
    min_user_turns = forms.IntegerField(
        min_value=1, max_value=50, initial=1, help_text="How many messages a worker must send before ending a dialog."
    )
    language = forms.CharField(
        required=False, max_length=35,
        help_text="The language workers and the systems chat in, a BCP 47 tag such as “zh” (Chinese) or “en” (English): the chat "
        "page marks the messages with it for fonts, line breaking and screen readers. Blank: told from the goals' own words where "
        "they show it (Quorum's own goal sentences are English whatever the systems speak), else the messages are left unmarked.",
    )
    reward = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, initial="0.50", help_text="Pay per dialog, in USD.")
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to workers above the goal (optional). After the chat they judge Success or Fail and rate understanding and appropriateness 1-5.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["systems"].queryset = selectors.dialog_systems().filter(paused_at__isnull=True, check_passed=True)
        self.fields["goal_set"].queryset = selectors.goal_sets()


class EntryChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.label} (endpoint: {obj.dialog_system.name if obj.dialog_system else 'none'})"


class EntryEndpointForm(OwnIdsForm):
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


class InteractiveScheduleForm(OwnIdsForm):
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
