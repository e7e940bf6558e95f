"""Imports of DSTC9 Track 1 material: test set, entries, objective scores, human evaluations.

Each import is all-or-nothing: every file is checked before anything is written, and the writes
run in one transaction. Errors name the file (and the instance index or CSV line) to fix.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from pathlib import Path

from django.db import models, transaction

from evaluation.campaigns import dstc9
from evaluation.campaigns.services.inputs import refresh_campaigns_of, refresh_inputs_version
from evaluation.errors import EvaluationInputError, RatingsAlreadyImported
from evaluation.models import Campaign, Challenge, Entry, Rating, Team, TestSet

GROUND_TRUTH_TEAMS = ("ground-truth", "ground_truth")
BASELINE_TEAMS = ("baseline",)


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _checked(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except dstc9.FormatProblem as exc:
        raise EvaluationInputError(str(exc)) from exc


@transaction.atomic
def import_test_set(challenge_name, name, labels_path, knowledge_path=None, logs_path=None) -> TestSet:
    """labels.json, optionally knowledge.json (checked against the labels) and logs.json (the
    dialog contexts, needed to rate responses in a crowd campaign)."""
    knowledge = _checked(dstc9.check_knowledge, _checked(dstc9.load_json, knowledge_path), knowledge_path) if knowledge_path else {}
    labels = _checked(dstc9.check_outputs, _checked(dstc9.load_json, labels_path), labels_path, knowledge=knowledge if knowledge_path else None)
    logs = _checked(dstc9.check_logs, _checked(dstc9.load_json, logs_path), logs_path, expected_length=len(labels)) if logs_path else []
    challenge, _ = Challenge.objects.get_or_create(name=challenge_name)
    if TestSet.objects.filter(challenge=challenge, name=name).exists():
        raise EvaluationInputError(f"challenge {challenge_name!r} already has a test set {name!r}; choose another name")
    return TestSet.objects.create(
        challenge=challenge, name=name, labels=labels, knowledge=knowledge, logs=logs, size=len(labels), content_hash=_digest(labels, knowledge)
    )


@transaction.atomic
def import_test_set_logs(test_set, logs_path) -> TestSet:
    """Add (or replace) the dialog contexts of a test set imported without logs.json. The results
    do not depend on them, so the content hash is unchanged."""
    test_set.logs = _checked(dstc9.check_logs, _checked(dstc9.load_json, logs_path), logs_path, expected_length=test_set.size)
    test_set.save(update_fields=["logs"])
    return test_set


@transaction.atomic
def import_test_set_knowledge(test_set, knowledge_path) -> TestSet:
    """Add (or replace) the reference knowledge of a test set imported without knowledge.json: the
    labels are checked against it first, and the content hash changes (accuracy depends on it)."""
    knowledge = _checked(dstc9.check_knowledge, _checked(dstc9.load_json, knowledge_path), knowledge_path)
    _checked(dstc9.check_outputs, test_set.labels, knowledge_path, knowledge=knowledge)
    test_set.knowledge = knowledge
    test_set.content_hash = _digest(test_set.labels, knowledge)
    test_set.save(update_fields=["knowledge", "content_hash"])
    return test_set


def _entry_hash(outputs, is_baseline, is_ground_truth):
    return _digest(outputs, is_baseline, is_ground_truth)


def _max_length(model: type[Team] | type[Entry], name: str) -> int:
    field = model._meta.get_field(name)
    if not isinstance(field, models.CharField) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} must be a CharField with a max_length")
    return field.max_length


TEAM_ID_MAX = _max_length(Team, "team_id")
ENTRY_ID_MAX = _max_length(Entry, "entry_id")


def check_ids(team_id: str, entry_id: str, path) -> None:
    """Refuse folder and file names the database cannot hold, before anything is written."""
    if len(team_id) > TEAM_ID_MAX:
        raise EvaluationInputError(f"{path}: the team folder name is longer than {TEAM_ID_MAX} characters; shorten it")
    if len(entry_id) > ENTRY_ID_MAX:
        raise EvaluationInputError(f"{path}: the entry name is longer than {ENTRY_ID_MAX} characters; shorten it")


def _upsert_entry(test_set, team_id, entry_id, outputs, is_baseline=False, is_ground_truth=False) -> Entry:
    team, _ = Team.objects.get_or_create(challenge=test_set.challenge, team_id=team_id)
    entry, created = Entry.objects.get_or_create(
        team=team, test_set=test_set, entry_id=entry_id,
        defaults={"outputs": outputs, "is_baseline": is_baseline, "is_ground_truth": is_ground_truth},
    )
    if not created:
        if entry.outputs is not None and outputs is not None and entry.outputs != outputs:
            raise EvaluationInputError(f"entry {team_id}/{entry_id} already exists with different outputs; it is not replaced")
        entry.outputs = entry.outputs if outputs is None else outputs
        entry.is_baseline, entry.is_ground_truth = is_baseline or entry.is_baseline, is_ground_truth or entry.is_ground_truth
    entry.content_hash = _entry_hash(entry.outputs, entry.is_baseline, entry.is_ground_truth)
    entry.save()
    return entry


@transaction.atomic
def import_entry(test_set, team_id, entry_id, path, is_baseline=False) -> Entry:
    outputs = _checked(dstc9.check_outputs, _checked(dstc9.load_json, path), path, expected_length=test_set.size)
    return _upsert_entry(test_set, team_id, entry_id, outputs, is_baseline=is_baseline)


@transaction.atomic
def import_entries(test_set, directory, baseline_teams=BASELINE_TEAMS, scores_path=None, ground_truth=False) -> list[Entry]:
    """Every <team>/<entry>.json under `directory` (not *.human_eval.json nor *.score.json), and
    with `scores_path` their objective scores, and with `ground_truth` the labels as a reference
    entry: one transaction, so a bad score file leaves no entry behind."""
    found = _checked(dstc9.find_entries, directory)
    if not found:
        nested = sorted({p.parent.parent.name for p in Path(directory).glob("*/*/*.json")})
        hint = f" (they are one folder down, in {', '.join(nested)}/: zip the team folders themselves)" if nested else ""
        raise EvaluationInputError(f"{directory}: no <team>/<entry>.json files found{hint}")
    for team, entry, path in found:
        check_ids(team, entry, path)
    checked = [
        (team, entry, _checked(dstc9.check_outputs, _checked(dstc9.load_json, path), path, expected_length=test_set.size))
        for team, entry, path in found
    ]
    entries = [_upsert_entry(test_set, team, entry, outputs, is_baseline=team in baseline_teams) for team, entry, outputs in checked]
    if scores_path:
        import_objective_scores(test_set, scores_path, baseline_teams=baseline_teams)
    if ground_truth:
        add_ground_truth_entry(test_set)
    refresh_campaigns_of(entries)
    return entries


@transaction.atomic
def add_ground_truth_entry(test_set, team_id="ground-truth", entry_id="labels") -> Entry:
    """The reference responses as an entry: outputs = labels, so its detection equals the truth."""
    return _upsert_entry(test_set, team_id, entry_id, test_set.labels, is_ground_truth=True)


def score_entry(test_set, team_id, entry_id, baseline_teams):
    """The entry a score.csv row names: as written (team3/entry0), else the published DSTC9 numeric
    ids mapped to folders: team 0 is the baseline team, team 3 is team03 (or team3), entry 1 is
    entry1. Returns (team folder, entry folder, entry or None)."""
    entries = Entry.objects.filter(test_set=test_set).select_related("team")
    found = entries.filter(team__team_id=team_id, entry_id=entry_id).first()
    if found is not None or not (team_id.isdigit() and entry_id.isdigit()):
        return team_id, entry_id, found
    number = int(team_id)
    teams = list(baseline_teams) if number == 0 else [f"team{number:02d}", f"team{number}"]
    for team in teams:
        found = entries.filter(team__team_id=team, entry_id=f"entry{int(entry_id)}").first()
        if found is not None:
            return team, found.entry_id, found
    return teams[0], f"entry{int(entry_id)}", None


def read_score_csv(text: str, name: str = "score.csv") -> list[tuple[int, str, str, dict[str, float]]]:
    """The rows of a score.csv (team_id,entry_id,<metric>,...) as (line, team_id, entry_id,
    {metric: value}), checked: a bad header, a missing id or a value that is not a finite number is
    refused with its line. Reads only."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    if header[:2] != ["team_id", "entry_id"] or len(header) < 3:
        raise EvaluationInputError(f"{name}: the header must be team_id,entry_id,<metric>,... (got {','.join(header)})")
    rows = []
    for line, row in enumerate(reader, start=2):
        team_id, entry_id = (row["team_id"] or "").strip(), (row["entry_id"] or "").strip()
        if not team_id or not entry_id:
            raise EvaluationInputError(f"{name}, line {line}: team_id and entry_id are required")
        scores = {}
        for metric in header[2:]:
            try:
                value = float(row[metric])
            except (TypeError, ValueError):
                raise EvaluationInputError(f"{name}, line {line}: {metric} = {row[metric]!r} is not a number") from None
            if not math.isfinite(value):
                raise EvaluationInputError(f"{name}, line {line}: {metric} = {row[metric]!r} is not a finite number")
            scores[metric] = value
        rows.append((line, team_id, entry_id, scores))
    if not rows:
        raise EvaluationInputError(f"{name}: no rows")
    return rows


@transaction.atomic
def import_objective_scores(test_set, csv_path, baseline_teams=BASELINE_TEAMS) -> int:
    """score.csv: team_id,entry_id,<metric>,... One row per entry; values are numbers.

    Ids are folder names (team3, entry0) or the published numeric ids (3, 0; team 0 is the
    baseline). A numeric row for an entry whose outputs were not imported (DSTC9 published the
    outputs of the finalists only) creates that entry without outputs, so Eq. 2 ranks every entry
    as published; a folder name that matches no entry is refused with its line.
    """
    path = Path(csv_path)
    if not path.is_file():
        raise EvaluationInputError(f"{path}: file not found")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = read_score_csv(handle.read(), str(path))
    # The file's column order, kept: the results list metrics as the organizer gave them.
    columns = list(rows[0][3])
    test_set.score_columns = [*test_set.score_columns, *(c for c in columns if c not in test_set.score_columns)]
    test_set.save(update_fields=["score_columns"])
    updates = []
    for line, team_id, entry_id, scores in rows:
        team, entry_name, entry = score_entry(test_set, team_id, entry_id, baseline_teams)
        if entry is None and not (team_id.isdigit() and entry_id.isdigit()):
            # A folder name that matches nothing is more likely a typo than a new entry.
            raise EvaluationInputError(f"{path}, line {line}: no entry {team_id}/{entry_id} in test set {test_set.name!r}; import the entry first")
        updates.append((team, entry_name, entry, scores))
    for team, entry_id, entry, scores in updates:
        if entry is None:
            entry = _upsert_entry(test_set, team, entry_id, None, is_baseline=team in baseline_teams)
        entry.objective_scores = {**entry.objective_scores, **scores}
        entry.save(update_fields=["objective_scores"])
    refresh_campaigns_of([entry for _, _, entry, _ in updates if entry is not None])
    return len(updates)


@transaction.atomic
def import_human_eval(
    campaign: Campaign, directory, replace=False, baseline_teams=BASELINE_TEAMS, ground_truth_teams=GROUND_TRUTH_TEAMS, progress=None,
) -> dict:
    """Ratings from a DSTC9 human-evaluation directory: <team>/<entry>.json + <team>/<entry>.human_eval.json.

    Entries are imported (or matched) and added to the campaign. Ratings are lists without rater
    identities, stored with positional raters 'pos1', 'pos2', ...; the campaign is marked so that
    per-rater diagnostics are not computed. With replace=False an entry that already has ratings
    in the campaign is an error. `progress(done, total)`, if given, counts each entry twice: checked, then stored.
    """
    test_set = campaign.test_set
    labels = test_set.labels
    plan = []
    found = list(_checked(dstc9.find_human_evals, directory))
    report = progress or (lambda done, total: None)
    for team_id, entry_id, entry_path, eval_path in found:
        check_ids(team_id, entry_id, eval_path)
        is_truth = team_id in ground_truth_teams
        if entry_path is not None:
            outputs = _checked(dstc9.check_outputs, _checked(dstc9.load_json, entry_path), entry_path, expected_length=test_set.size)
        elif is_truth:
            outputs = labels
        else:
            existing = Entry.objects.filter(test_set=test_set, team__team_id=team_id, entry_id=entry_id).first()
            if existing is None:
                raise EvaluationInputError(
                    f"{eval_path}: test set {test_set.name!r} has no entry {team_id}/{entry_id}; import the entries first, "
                    f"or put its output {entry_id}.json beside the ratings (needed for detection in Eq. 1)"
                )
            if existing.outputs is None:
                raise EvaluationInputError(f"{eval_path}: the entry's output {entry_id}.json is missing beside it (needed for detection in Eq. 1)")
            outputs = existing.outputs
        rows = _checked(dstc9.check_human_eval, _checked(dstc9.load_json, eval_path), eval_path, labels, outputs, campaign.questions)
        plan.append((team_id, entry_id, outputs, is_truth, team_id in baseline_teams, rows, eval_path))
        report(len(plan), 2 * len(found))

    total = 0
    for stored, (team_id, entry_id, outputs, is_truth, is_baseline, rows, eval_path) in enumerate(plan, start=1):
        entry = _upsert_entry(test_set, team_id, entry_id, outputs, is_baseline=is_baseline, is_ground_truth=is_truth)
        earlier_ratings = Rating.objects.filter(campaign=campaign, entry=entry)
        if earlier_ratings.exists():
            if not replace:
                raise RatingsAlreadyImported(
                    f"{eval_path}: campaign {campaign.name!r} already has ratings of {entry.label}; to import them again, "
                    "tick “Replace ratings already imported for the same entries” (the API's replace)"
                )
            earlier_ratings.delete()
        campaign.entries.add(entry)
        Rating.objects.bulk_create(
            (Rating(campaign=campaign, entry=entry, instance=i, question=q, rater=f"pos{p}", value=v) for i, q, p, v in rows),
            batch_size=5000,
        )
        total += len(rows)
        report(len(found) + stored, 2 * len(found))
    campaign.rater_ids_known = False
    campaign.save(update_fields=["rater_ids_known"])
    refresh_inputs_version(campaign)
    return {"entries": len(plan), "ratings": total}
