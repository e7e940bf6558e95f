"""Forms of the FED pages: a set from chat jobs or from the static FED file, and its launch."""
import json

from django import forms

from evaluation.forms import OwnIdsForm
from evaluation.interactive import selectors as interactive_selectors


class FedFromChatsForm(OwnIdsForm):
    id_prefix = "fedchats"
    name = forms.CharField(max_length=200, help_text="A name for what is rated, e.g. “Round 1 transcripts”; it must be new.")
    chat_job = forms.ModelChoiceField(queryset=None, help_text="The interactive job whose completed dialogs (as they were saved) are rated.")
    level = forms.ChoiceField(
        choices=[("dialog", "Dialog level: the FED dialog questions over each whole dialog"), ("turn", "Turn level: the FED turn questions about each system turn")],
        help_text="DSTC9 Track 3 rated interactive dialogs at dialog level.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["chat_job"].queryset = interactive_selectors.interactive_jobs()


#: A whole line of the static file, shown under its field: what a first-time organizer copies.
EXAMPLE_LINE = {
    "context_id": "c1", "context": [{"speaker": "user", "text": "Hi! Any plans for the weekend?"}],
    "responses": {"system-a": "Hiking in the hills. You?", "system-b": "No idea."},
}


class FedStaticForm(OwnIdsForm):
    id_prefix = "fedstatic"
    name = forms.CharField(max_length=200, help_text="A name for the set, e.g. “DSTC9 Track 3 static”; it must be new.")
    jsonl = forms.FileField(label="JSONL file", help_text=(
        "One JSON object per line, the same systems on every line; a context's speakers are user or system, e.g. "
        + json.dumps(EXAMPLE_LINE) + " (docs/formats.md)."
    ))
    level = forms.ChoiceField(
        choices=[("dialog", "Dialog level: the context and the response read as one dialog"), ("turn", "Turn level: the response in its context")],
        help_text="DSTC9 Track 3 static used the dialog-level questions.",
    )


class FedLaunchForm(OwnIdsForm):
    id_prefix = "fedlaunch"
    raters = forms.IntegerField(min_value=1, max_value=20, initial=3, help_text="Raters per dialog or response (DSTC9 Track 3: 3).")
    reward = forms.DecimalField(min_value=0, max_digits=6, decimal_places=2, initial="0.20", help_text="Pay per rating, in USD.")
