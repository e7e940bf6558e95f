"""Organizer forms of the crowd section on the job page. They parse types; hits.services decides.

The providers' own fields are made from their option schemas (`hits/providers/<provider>/options.py`),
so no provider's option is spelled here.
"""
import json
from decimal import Decimal
from typing import Any

from django import forms

from .. import providers
from ..models import JobCrowdConfig
from ..providers import Kind, Option
from ..services.config import CrowdConfigError

ACTIONS = [("approve", "Approve (pay)"), ("reject", "Reject (not paid)"), ("soft_reject", "Soft-reject (paid, data excluded)")]


class CodesField(forms.Field):
    """Codes separated by commas, as a list (upper case); empty: an empty list."""

    def to_python(self, value: Any) -> list[str]:
        return [c.strip().upper() for c in str(value or "").split(",") if c.strip()]


class JsonTextField(forms.Field):
    """A JSON value written in a text area; empty: None (left out)."""

    widget = forms.Textarea(attrs={"rows": 3})

    def to_python(self, value: Any) -> Any:
        text = str(value or "").strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            raise forms.ValidationError("Write the value as JSON, as shown below.") from None


_FIELDS = {
    Kind.SWITCH: forms.BooleanField,
    Kind.WHOLE: forms.IntegerField,
    Kind.DECIMAL: forms.DecimalField,
    Kind.TEXT: forms.CharField,
    Kind.CODES: CodesField,
    Kind.JSON: JsonTextField,
}


def option_field(option: Option) -> forms.Field:
    """A form field that reads an option's type; what values are allowed is the service's to say."""
    help_text = f"{option.help} Separate them with commas." if option.kind is Kind.CODES else option.help
    return _FIELDS[option.kind](required=False, help_text=help_text, label=option.label or None)


def option_initial(option: Option, value: Any) -> Any:
    """A stored value as its field shows it."""
    if option.kind is Kind.CODES:
        return ", ".join(value or [])
    if option.kind is Kind.JSON:
        return json.dumps(value) if value else ""
    return value


def _form_options() -> list[Option]:
    return [option for option in providers.all_options().values() if option.on_form]


class CrowdSettingsForm(forms.Form):
    provider = forms.ChoiceField(
        choices=providers.choices,
        help_text="Where the work goes. It cannot change once the job has postings.",
    )
    budget = forms.DecimalField(
        required=False, decimal_places=2, max_digits=12,
        help_text="Most the job may spend in USD, fees included. Required for Prolific and MTurk; posting beyond it is refused.",
    )
    minutes_per_assignment = forms.DecimalField(
        decimal_places=2, max_digits=6,
        help_text="Estimated minutes per assignment: sets the effective hourly pay and the listing's time.",
    )
    assignments_per_posting = forms.IntegerField(
        help_text="MTurk: assignments per HIT. 10 or more raises MTurk's fee from 20% to 40%.",
    )
    review_hours = forms.IntegerField(
        label="Hours to review before paying", min_value=0, max_value=30 * 24,
        help_text=JobCrowdConfig._meta.get_field("review_hours").help_text,
    )

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for option in _form_options():
            self.fields[option.name] = option_field(option)

    def common_fields(self) -> list[forms.BoundField]:
        """The fields every provider reads (provider, budget, time, posting size)."""
        owned = {option.name for option in _form_options()}
        return [self[name] for name in self.fields if name not in owned]

    def provider_sections(self) -> list[dict]:
        """Each provider's own fields under its name; the page shows the chosen provider's only."""
        sections = []
        for key, cls in providers.classes().items():
            own = [self[option.name] for option in cls.options if option.on_form]
            if own:
                sections.append({"provider": key, "label": providers.label(key), "fields": own})
        return sections

    @classmethod
    def initial_for(cls, config: JobCrowdConfig) -> dict:
        stored = {**(config.provider_options or {}), **(config.requirements or {})}
        return {
            "provider": config.provider,
            "budget": config.budget,
            "minutes_per_assignment": config.minutes_per_assignment,
            "assignments_per_posting": config.assignments_per_posting,
            "review_hours": config.review_hours,
            **{option.name: option_initial(option, stored.get(option.name)) for option in _form_options()},
        }

    def settings_for(self, current_requirements: dict) -> dict:
        """Keyword arguments for hits.services.config.configure_crowd: a requirement left empty is left out."""
        data = self.cleaned_data
        req = dict(current_requirements or {})
        settings = {}
        for option in _form_options():
            value = data[option.name]
            if not option.requirement:
                settings[option.name] = value
            elif value is None:
                req.pop(option.name, None)
            else:
                req[option.name] = value
        return {
            "provider": data["provider"],
            "budget": data["budget"],
            "minutes_per_assignment": data["minutes_per_assignment"],
            "assignments_per_posting": data["assignments_per_posting"],
            "review_hours": data["review_hours"],
            "requirements": req,
            **settings,
        }

    def add_service_errors(self, exc: CrowdConfigError) -> None:
        """The service's refusals, each on its field (a requirement's on the field of its key), the rest
        above the form."""
        for name, message in exc.errors.items():
            field = name.removeprefix("requirements.")
            if field in self.fields:
                self.add_error(field, f"{message[:1].upper()}{message[1:]}.")
            else:
                self.add_error(None, f"{name.replace('_', ' ').capitalize()}: {message}.")


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
