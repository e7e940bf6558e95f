"""Reads of FED question sets: the sets, their offensive-word review queue, per-system results (as
computed, `fed_report`, and as stored, `stored_fed_results`)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max, Q

from annotation import task_types
from annotation.models import Response, ResponseTransition
from annotation.quality import agreement
from annotation.selectors.attempts import AttemptState, attempt_state
from evaluation.interactive.selectors import waiting_first
from evaluation.models import FedCandidate, FedResult, FedResultsRun, FedSet
from evaluation.stats import versions
from evaluation.stats.clustered_mean import clustered_mean

#: The method that computes a FED set's stored results (`FedResult.method`; declared, with its words,
#: as `versions.FED`): results of an older method are computed again and marked until then.
FED_RESULTS_METHOD = versions.FED.current


def fed_sets():
    return FedSet.objects.select_related("job", "chat_job").annotate(
        n_candidates=Count("candidates"), n_pending=Count("candidates", filter=Q(candidates__review="pending")),
        n_dropped=Count("candidates", filter=Q(candidates__review="dropped")),
    )


def fed_review_queue(fed_set):
    """The set's flagged candidates, waiting ones first."""
    return fed_set.candidates.exclude(review="clean").order_by(waiting_first(), "position")


def answers_version(fed_set) -> tuple[str, int]:
    """(the state of the set's counted answers, how many count): their number and the latest move of
    any response of its job (every move writes a transition, so any answer that starts or stops
    counting changes it). Two indexed aggregates, not a read of the answers."""
    if fed_set.job_id is None:
        return "0:0", 0
    counted = Response.objects.counted().filter(item__job_id=fed_set.job_id).count()
    last = ResponseTransition.objects.filter(response__item__job_id=fed_set.job_id).aggregate(last=Max("pk"))["last"] or 0
    return f"{counted}:{last}", counted


@dataclass(frozen=True)
class StoredFedResults:
    """The set's stored results as its page, CSV, API and command show them. `shown`: the latest
    stored (None: none yet); `stale`: computed from answers that have changed since; `older_method`:
    computed by an older method; `run`: the latest computation when newer than `shown`; `answers_now`:
    how many answers count now."""

    shown: FedResult | None
    stale: bool
    older_method: bool
    run: AttemptState | None
    answers_now: int

    @property
    def current(self) -> bool:
        return self.shown is not None and not self.stale and not self.older_method

    @property
    def results(self) -> list[dict]:
        return self.shown.report["results"] if self.shown else []

    @property
    def agreement(self) -> list[dict]:
        return self.shown.report["agreement"] if self.shown else []

    @property
    def note(self) -> str:
        """What every output of results that are not current says first, in words; "" when current."""
        if self.shown is None or self.current:
            return ""
        if self.run is not None and self.run.under_way:
            then = "new ones are being computed"
        else:  # the last computation failed: asked again when an answer moves, or now from the command line
            then = f"they are computed again when an answer changes, or now with Compute again on its page (manage.py fed_results {self.shown.fed_set_id})"
        if self.stale:
            return (f"These results were computed from {self.shown.answers} counted answer{'s' if self.shown.answers != 1 else ''}; "
                    f"the answers have changed since ({self.answers_now} count now): {then}")
        return versions.standing(versions.FED, self.shown.method).note(then)


def stored_fed_results(fed_set) -> StoredFedResults:
    """The set's latest stored results beside the state of its answers now and the latest computation."""
    shown = FedResult.objects.filter(fed_set=fed_set).order_by("-computed_at", "-pk").first()
    version, answers_now = answers_version(fed_set)
    run = attempt_state(FedResultsRun.objects.filter(fed_set=fed_set), shown.computed_at if shown else None)
    return StoredFedResults(
        shown=shown, stale=shown is not None and shown.answers_version != version,
        older_method=shown is not None and versions.standing(versions.FED, shown.method).older, run=run, answers_now=answers_now,
    )


def fed_report(fed_set) -> tuple[list[dict], list[dict]]:
    """(`fed_results`, `fed_agreement`) from one read of the set's counted answers: what the
    background computation stores (`fed.results`); pages read `stored_fed_results`."""
    if fed_set.job_id is None:
        return [], []
    fields = _questions(fed_set)
    rows = list(Response.objects.counted().filter(item__job=fed_set.job).values_list("item_id", "worker_id", "answers"))
    return _results(fed_set, fields, rows), _agreement(fields, rows)


def fed_results(fed_set) -> list[dict]:
    """Per system: for each FED question the mean of the counted answers (N/A left out) with its 95%
    interval clustered by dialog and by rater (`stats.clustered_mean`), how many answers it rests on
    and how many were N/A; and how many items were rated."""
    return fed_report(fed_set)[0]


def fed_agreement(fed_set) -> list[dict]:
    """Per FED question: Krippendorff's alpha of the raters' counted answers over every rated item
    (ordinal, on the question's scale; N/A left out), with its 95% bootstrap interval over items
    (`alpha`, `ci_low`, `ci_high`, None when undefined), the items rated twice or more (`units`),
    and `shown`: the figure with its interval as the page writes it, or the reason it is undefined
    (e.g. no item has two answers yet)."""
    return fed_report(fed_set)[1]


def _questions(fed_set) -> list[dict]:
    """The job's questions: its fields with a scale (choices). An N/A reason is free text about a
    question, not a question of its own."""
    return [f for f in task_types.get(fed_set.job.task_type).answer_fields(fed_set.job.settings) if f.get("choices")]


def _results(fed_set, fields, rows) -> list[dict]:
    questions = [f["name"] for f in fields]
    scale = {f["name"]: _scale(f["choices"]) for f in fields}
    label = {f["name"]: f["label"] for f in fields}
    coding = {f["name"]: coding_of(f) for f in fields}
    system_of = dict(FedCandidate.objects.filter(fed_set=fed_set, item__isnull=False).values_list("item_id", "system"))
    answers_of: dict[str, dict] = {}
    for item_id, worker_id, answers in rows:
        per = answers_of.setdefault(system_of.get(item_id, "?"), {"items": set(), **{q: ([], [], [], [0]) for q in questions}})
        per["items"].add(item_id)
        for q in questions:
            values, items, raters, na = per[q]
            if isinstance(answers.get(q), int):
                values.append(answers[q])
                items.append(item_id)
                raters.append(worker_id)
            elif f"{q}_na_reason" in answers:
                na[0] += 1
    return [
        {"system": system, "items": len(answers_of[system]["items"]),
         "questions": [{**_question(q, *answers_of[system][q], bounds=scale[q]), "label": label[q], "coding": coding[q]} for q in questions]}
        for system in sorted(answers_of)
    ]


def _agreement(fields, rows) -> list[dict]:
    out = []
    for f in fields:
        name, scale = f["name"], _scale(f["choices"])
        triples = [(item_id, worker_id, answers[name]) for item_id, worker_id, answers in rows if isinstance(answers.get(name), int)]
        domain = list(range(int(scale[0]), int(scale[1]) + 1)) if scale else None
        result = agreement.alpha(triples, "ordinal", value_domain=domain) if triples else None
        figures = result if result is not None and not result.undefined else None
        out.append({
            "name": name, "label": f["label"], "coding": coding_of(f), "defined": figures is not None, "units": result.units if result else 0,
            "alpha": _whole(figures.alpha) if figures else None,
            "ci_low": _whole(figures.ci_low) if figures else None, "ci_high": _whole(figures.ci_high) if figures else None,
            "shown": result.display() if result else "no answers yet",  # the figure and interval, or why there is none
        })
    return out


def _question(name, values, items, raters, na, *, bounds) -> dict:
    found = clustered_mean(values, items, raters, bounds=bounds)
    return {
        "name": name, "mean": found.mean if found else None, "n": len(values), "na": na[0],
        "low": _whole(found.low if found else None), "high": _whole(found.high if found else None),
        "ci_clipped": bool(found and found.clipped),
    }


def coding_of(field) -> str:
    """How a question's answers are coded, as a reader of the figures needs it: "1 = No, 2 = Somewhat,
    3 = Yes" (FED's tables code 1-3; some loaders 0-2), "1 = very poor, 2, 3, 4, 5 = very good"."""
    return ", ".join(f"{a['value']} = {a['words']}" if a["words"] else str(a["value"]) for a in field["anchors"])


def _scale(choices) -> tuple[float, float] | None:
    """The lowest and highest numeric answer of a question (N/A is not on the scale)."""
    numbers = [c for c in choices if isinstance(c, int) and not isinstance(c, bool)]
    return (min(numbers), max(numbers)) if numbers else None


def _whole(value):
    """A figure as computed (a bound clipped to the scale is its end, as a float): the CSV and the API
    carry it whole and people read it rounded once, by `quorum.numbers`."""
    return None if value is None else float(value)
