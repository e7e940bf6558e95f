"""What the set-up forms of evaluation's organizer pages share."""
from django import forms


class OwnIdsForm(forms.Form):
    """The set-up forms share one page (with the finalists form): each gets its own element ids,
    so two fields of the same name (test_set, archive) keep their labels apart."""

    id_prefix = "id"

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", f"{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)
