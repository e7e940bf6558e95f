"""Organizer forms of the crowd section on the job page. They check shapes; hits.services decides."""
import json
from decimal import Decimal

from django import forms

from .models import Provider
from .services.config import CrowdConfigError

ACTIONS = [("approve", "Approve (pay)"), ("reject", "Reject (not paid)"), ("soft_reject", "Soft-reject (paid, data excluded)")]


class CrowdSettingsForm(forms.Form):
    provider = forms.ChoiceField(
        choices=Provider.choices,
        help_text="Where the work goes. It cannot change once the job has postings.",
    )
    budget = forms.DecimalField(
        required=False, min_value=Decimal("0"), decimal_places=2, max_digits=12,
        help_text="Most the job may spend in USD, fees included. Required for Prolific and MTurk; posting beyond it is refused.",
    )
    minutes_per_assignment = forms.DecimalField(
        min_value=Decimal("0.1"), decimal_places=2, max_digits=6,
        help_text="Estimated minutes per assignment: sets the effective hourly pay and the listing's time.",
    )
    assignments_per_posting = forms.IntegerField(
        min_value=1, max_value=100,
        help_text="MTurk: assignments per HIT. 10 or more raises MTurk's fee from 20% to 40%.",
    )
    locales = forms.CharField(
        required=False, max_length=200,
        help_text="MTurk: countries the worker must be in, two-letter codes separated by commas (RADDLE: US).",
    )
    min_approval_rate = forms.IntegerField(
        required=False, min_value=0, max_value=100,
        help_text="MTurk: the worker's lowest percentage of approved assignments (RADDLE: 90). Empty: no limit.",
    )
    min_hits_approved = forms.IntegerField(
        required=False, min_value=0,
        help_text="MTurk: the fewest approved HITs a worker must have. Empty: no limit.",
    )
    prolific_filters = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text='Prolific participant filters as JSON, e.g. [{"filter_id": "current-country-of-residence", '
        '"selected_values": ["1"]}]. Empty: none.',
    )

    @classmethod
    def initial_for(cls, config) -> dict:
        req = config.requirements or {}
        return {
            "provider": config.provider,
            "budget": config.budget,
            "minutes_per_assignment": config.minutes_per_assignment,
            "assignments_per_posting": config.assignments_per_posting,
            "locales": ", ".join(req.get("locales", [])),
            "min_approval_rate": req.get("min_approval_rate"),
            "min_hits_approved": req.get("min_hits_approved"),
            "prolific_filters": json.dumps(req["prolific_filters"]) if req.get("prolific_filters") else "",
        }

    def clean_locales(self):
        return [c.strip().upper() for c in self.cleaned_data["locales"].split(",") if c.strip()]

    def clean_prolific_filters(self):
        text = self.cleaned_data["prolific_filters"].strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except ValueError:
            raise forms.ValidationError("Write the filters as JSON: a list of {filter_id, selected_values}.") from None
        if not isinstance(value, list):
            raise forms.ValidationError("Write the filters as a JSON list.")
        return value

    def settings_for(self, current_requirements: dict) -> dict:
        """Keyword arguments for hits.services.config.configure_crowd."""
        data = self.cleaned_data
        req = dict(current_requirements or {})
        req["locales"] = data["locales"]
        for key in ("min_approval_rate", "min_hits_approved"):
            if data[key] is None:
                req.pop(key, None)
            else:
                req[key] = data[key]
        req["prolific_filters"] = data["prolific_filters"]
        return {
            "provider": data["provider"],
            "budget": data["budget"],
            "minutes_per_assignment": data["minutes_per_assignment"],
            "assignments_per_posting": data["assignments_per_posting"],
            "requirements": req,
        }


def service_errors(exc: CrowdConfigError) -> list[str]:
    return [f"{name.replace('_', ' ').capitalize()}: {message}." for name, message in exc.errors.items()]


class SettleForm(forms.Form):
    action = forms.ChoiceField(choices=ACTIONS)
    assignments = forms.TypedMultipleChoiceField(coerce=int, error_messages={"required": "Tick at least one assignment."})
    message = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=1024,
        help_text="Shown to the worker. Required to reject (Prolific: at least 100 characters).",
    )

    def __init__(self, *args, assignment_ids=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignments"].choices = [(i, i) for i in assignment_ids]


class BonusForm(forms.Form):
    assignments = forms.TypedMultipleChoiceField(coerce=int, error_messages={"required": "Tick at least one assignment."})
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_value=Decimal("100"), decimal_places=2, max_digits=8,
                                help_text="USD per ticked assignment, before fees; counted against the budget.")
    reason = forms.CharField(max_length=1000, help_text="Shown to the worker with the bonus.")

    def __init__(self, *args, assignment_ids=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignments"].choices = [(i, i) for i in assignment_ids]
