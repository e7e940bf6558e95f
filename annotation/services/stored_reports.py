"""Storing a job's computed report (flags, reliability) when runs may overlap.

The beat sweep and an organizer's "recompute now" can compute the same job's report at once; the
one that started later wins, whichever commits last, and two first runs never make two rows.
"""
from django.db import IntegrityError, models, transaction


def store_latest(model: type[models.Model], job, values: dict):
    """Create or update `model`'s one row for `job` with `values` (which hold `computed_at`),
    unless a run that started later has stored its own; returns the row that stands."""
    with transaction.atomic():
        stored = model.objects.select_for_update().filter(job=job).first()  # type: ignore[attr-defined]  # every report model has a manager
        if stored is None:
            try:
                with transaction.atomic():
                    return model.objects.create(job=job, **values)  # type: ignore[attr-defined]
            except IntegrityError:  # another run created it meanwhile
                stored = model.objects.select_for_update().get(job=job)  # type: ignore[attr-defined]
        if stored.computed_at > values["computed_at"]:
            return stored
        for name, value in values.items():
            setattr(stored, name, value)
        stored.save()
        return stored
