"""A provider's job options as a schema: each option's name, type, default, help and rule. Pure.

Each provider package declares its options in its `options.py` (`OPTIONS`, a tuple of `Option`), and
its `CrowdProvider.options` names them. An option is one of two things:

- a requirement on the worker (`requirement=True`): stored among the job's `requirements`, beside
  the shared keys of `hits.policy.requirements`, and sent to the provider as its qualifications or filters;
- a setting of the job at that provider: stored in `JobCrowdConfig.provider_options`, a JSON object
  of every provider's settings (switching providers keeps the others' values).

The organizer form and the API build their fields from the schema and only parse types;
`Option.problem` is the one check, run by `hits.services.config.configure_crowd` through the
registry. Names are unique across providers (the registry refuses a clash), so a value names its
provider by its name alone.
"""
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any


class Kind(Enum):
    """What an option's value is, and so how a form or the API reads it."""

    SWITCH = "switch"  # true or false
    WHOLE = "whole"  # a whole number
    DECIMAL = "decimal"  # a decimal number, stored as text so that JSON keeps every digit
    TEXT = "text"  # one line of text
    CODES = "codes"  # a list of short codes; the form takes them separated by commas
    JSON = "json"  # any JSON value, its shape checked by the option's `check`


class OptionsError(ValueError):
    """Options that cannot be used; `errors` maps each option's name to what to change."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class Option:
    name: str
    kind: Kind
    help: str
    #: The value a job has when it never set one; None: unset (a requirement left out). A callable is
    #: called when the value is needed (a default from the deployment's settings).
    default: Any = None
    minimum: int | Decimal | None = None
    maximum: int | Decimal | None = None
    #: Most digits after the decimal point (DECIMAL).
    places: int | None = None
    #: A further rule on a value of the right type: what is wrong with it, or None.
    check: Callable[[Any], str | None] | None = None
    requirement: bool = False
    #: Shown on the organizer's crowd settings form (the API takes every option).
    on_form: bool = True
    label: str = ""

    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default

    @property
    def optional(self) -> bool:
        """May be left out (None): a requirement, which the provider then does not ask for."""
        return self.requirement

    def limits(self) -> str:
        """The allowed range in words, for help texts ("" when there is none)."""
        if self.kind not in (Kind.WHOLE, Kind.DECIMAL) or (self.minimum is None and self.maximum is None):
            return ""
        words = _range_words(self, "a whole number" if self.kind is Kind.WHOLE else "a number")
        return f"{words}, at most {self.places} digits after the point" if self.places is not None else words

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` for this option, or None when it can be stored."""
        if value is None:
            return None if self.optional else "a value is needed"
        wrong = _KIND_PROBLEMS[self.kind](self, value)
        if wrong is None and self.check is not None:
            wrong = self.check(value)
        return wrong

    def stored(self, value: Any) -> Any:
        """The value as the JSON column keeps it (a checked value)."""
        return str(Decimal(str(value))) if self.kind is Kind.DECIMAL and value is not None else value

    def typed(self, stored: Any) -> Any:
        """A stored value as the provider uses it (a DECIMAL as a Decimal)."""
        return Decimal(str(stored)) if self.kind is Kind.DECIMAL and stored is not None else stored


def _range_words(option: Option, what: str) -> str:
    low, high = option.minimum, option.maximum
    words = f"{what} from {low} to {high}" if low is not None and high is not None else (
        f"{what} of at least {low}" if low is not None else what
    )
    return f"{words}, or leave it out" if option.optional else words


def _outside(option: Option, number: int | Decimal) -> bool:
    return (option.minimum is not None and number < option.minimum) or (
        option.maximum is not None and number > option.maximum
    )


def _switch_problem(option: Option, value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _whole_problem(option: Option, value: Any) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or _outside(option, value):
        return _range_words(option, "a whole number")
    return None


def _decimal_problem(option: Option, value: Any) -> str | None:
    try:
        number = Decimal(str(value)) if not isinstance(value, bool) else None
    except (InvalidOperation, ValueError):
        number = None
    if number is None or not number.is_finite() or _outside(option, number):
        return _range_words(option, "a number")
    exponent = number.as_tuple().exponent
    if option.places is not None and isinstance(exponent, int) and -exponent > option.places:
        return f"a number with at most {option.places} digits after the point"
    return None


def _text_problem(option: Option, value: Any) -> str | None:
    return None if isinstance(value, str) else "text"


def _codes_problem(option: Option, value: Any) -> str | None:
    if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
        return "a list of codes"
    return None


def _json_problem(option: Option, value: Any) -> str | None:
    return None


_KIND_PROBLEMS: dict[Kind, Callable[[Option, Any], str | None]] = {
    Kind.SWITCH: _switch_problem,
    Kind.WHOLE: _whole_problem,
    Kind.DECIMAL: _decimal_problem,
    Kind.TEXT: _text_problem,
    Kind.CODES: _codes_problem,
    Kind.JSON: _json_problem,
}


def requirement_names(options: Iterable[Option]) -> frozenset[str]:
    return frozenset(o.name for o in options if o.requirement)


def requirement_defaults(options: Iterable[Option]) -> dict[str, Any]:
    """Requirements a job gets when it does not set them."""
    return {o.name: o.default_value() for o in options if o.requirement and o.default is not None}


def settings_of(options: Iterable[Option]) -> tuple[Option, ...]:
    """The options stored in `provider_options` (not requirements)."""
    return tuple(o for o in options if not o.requirement)


def check_requirements(options: Iterable[Option], req: Mapping, errors: dict) -> None:
    """Add the problems of the requirement options present in `req` to `errors`."""
    for option in options:
        if option.requirement and option.name in req:
            wrong = option.problem(req[option.name])
            if wrong is not None:
                errors[option.name] = wrong


def cleaned(options: Iterable[Option], values: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """`current` stored settings with `values` (of these options) checked and written over them, and the
    default of every option still missing filled in. OptionsError names each value to fix."""
    out, errors = dict(current), {}
    for option in settings_of(options):
        if option.name in values:
            wrong = option.problem(values[option.name])
            if wrong is not None:
                errors[option.name] = wrong
            else:
                out[option.name] = option.stored(values[option.name])
        elif option.name not in out:
            out[option.name] = option.stored(option.default_value())
    if errors:
        raise OptionsError(errors)
    return out


def read(options: Iterable[Option], stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings of these options as a provider uses them: typed, defaulted where never stored."""
    stored = stored or {}
    return {
        o.name: o.typed(stored[o.name] if o.name in stored else o.default_value()) for o in settings_of(options)
    }
