"""instance_scores.csv carries each instance's mean rating whole, as leaderboard.csv carries its
figures, so an organizer who recomputes Eq. 1 (PROTOCOLS.md) from it gets leaderboard.csv's score.

Organizer walk on the DSTC9 data: the file wrote each mean to four places (4.3333 for 13/3), so
Eq. 1 recomputed from it missed leaderboard.csv's value by up to 3e-6 per system.
"""
import csv
from collections import defaultdict

import pytest

from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.campaigns.services.exports import export_campaign
from evaluation.models import Entry

pytestmark = pytest.mark.django_db


def _eq1(scores, truth, predicted):
    """S_f of Eq. 1: s summed over the turns both truly knowledge-seeking and detected, per detection
    (S_p) and per true turn (S_r), their harmonic mean."""
    hit = sum(s for i, s in scores.items() if truth[i] and predicted[i])
    precision, recall = hit / sum(predicted), hit / sum(truth)
    return 2 * precision * recall / (precision + recall)


def test_eq1_recomputed_from_instance_scores_csv_is_leaderboard_csvs_score(campaign, tmp_path):
    compute_campaign_results(campaign.pk)
    campaign.refresh_from_db()
    written = export_campaign(campaign, tmp_path)
    with written["instance_scores.csv"].open() as handle:
        rows = list(csv.DictReader(handle))
    with written["leaderboard.csv"].open() as handle:
        board = {row["system"].split(" (")[0]: row for row in csv.DictReader(handle)}
    scores = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        for question in campaign.questions:
            if row[question]:
                scores[f"{row['team_id']}/{row['entry_id']}"][question][int(row["instance"])] = float(row[question])
    truth = [bool(label["target"]) for label in campaign.test_set.labels]
    checked = 0
    for entry in Entry.objects.filter(campaigns=campaign, is_ground_truth=False):
        predicted = [bool(output["target"]) for output in entry.outputs]
        for question in campaign.questions:
            assert _eq1(scores[entry.label][question], truth, predicted) == pytest.approx(float(board[entry.label][question]), abs=1e-12), (entry.label, question)
            checked += 1
    assert checked >= 4
    assert any(len(value.split(".")[-1]) > 4 for row in rows for value in (row[q] for q in campaign.questions))
