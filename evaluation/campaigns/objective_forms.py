"""Forms of the objective-scores page: compare a score.csv, score a DSTC6 result file."""
from django import forms

from evaluation.campaigns.services.objective import DEFAULT_TOLERANCE
from evaluation.forms import OwnIdsForm


class ScoreComparisonForm(OwnIdsForm):
    id_prefix = "compare"
    scores = forms.FileField(help_text="score.csv: team_id,entry_id,<metric>,...; ids as folder names (team3, entry0) or DSTC9's numbers (3, 0).")
    tolerance = forms.FloatField(
        min_value=0, max_value=0.999, initial=DEFAULT_TOLERANCE,
        help_text="Largest difference between a computed and an uploaded value counted as a match.",
    )


class Dstc6ScoreForm(OwnIdsForm):
    id_prefix = "dstc6"
    test_set = forms.FileField(help_text="The DSTC6 Track 1 test set: a JSON list of {dialog_id, candidates, answer: {candidate_id}}.")
    results = forms.FileField(help_text="The result file: a JSON list of {dialog_id, lst_candidate_id: [{candidate_id, rank}]}, ranks from 1.")
