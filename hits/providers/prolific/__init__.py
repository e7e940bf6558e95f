"""Prolific: client.py calls its HTTP API, provider.py does the study and submission calls, fees.py the
service fee, requirements.py the participant filters, entry.py the study URL's parameters, posting.py
the study body, rehearsal.py the local fake for `manage.py rehearse`."""
from .provider import ProlificProvider  # noqa: F401
