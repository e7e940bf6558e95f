"""In-house annotators: they sign in to Quorum and take work from the database queue. provider.py
keeps the ledger (assignments made when an annotator claims, settlements and bonuses recorded for
the organizer to pay by their own means), entry.py reads the signed-in annotator, fees.py says what
their work costs (the reward, no fee)."""
from .provider import InHouseProvider  # noqa: F401
