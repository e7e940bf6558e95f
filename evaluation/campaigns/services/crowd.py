"""Crowd campaigns: the Likert job that collects a campaign's ratings, and its ratings.

PROTOCOLS.md section 2. A campaign rates its entries (the finalists, plus the ground truth and the
baseline as reference rows) on the same instances: one item per (instance, entry) with a response,
`redundancy` raters per item (DSTC9: 3). An item's payload is the dialog context, the response and
the instance's reference knowledge (from the ground truth, so it is the same for every entry);
which entry wrote the response is kept in `CampaignItem`, never in the payload.

Order: positions are a seeded random permutation of the (instance, entry) pairs, so no system's
responses come in a block and an instance's responses are not side by side; and each rater starts
at their own point of that order (the Likert type's `claim_start` hook), so raters meet the items
in different rotations of it.
"""
from __future__ import annotations

import random
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Q

from annotation.models import Job, Response
from annotation.services.extra_slots import add_slots
from annotation.services.jobs import JobError, launch_job
from annotation.services.payload_jobs import create_payload_job, item_ids_by_position
from annotation.task_types.questionnaire import default_question
from evaluation.campaigns.services.campaigns import create_campaign, set_adaptive
from evaluation.campaigns.services.imports import add_ground_truth_entry
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignItem, CampaignJob, Entry, Rating
from quorum.compiled_queries import CompiledQuery
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    from evaluation.stats import allocation
else:
    allocation = lazy("evaluation.stats.allocation")


DEFAULT_REDUNDANCY = 3
SPEAKERS = {"U": "user", "S": "system"}
INSTRUCTIONS = (
    "You will see a conversation between a user and a system, and the system's next response. "
    "Rate the response on each question from 1 to 5, using the labels as a guide. "
    "For accuracy, judge the response against the reference knowledge shown with the conversation."
)


def rater_id(worker) -> str:
    """The rater name stored on ratings: stable and unique across providers."""
    return f"{worker.provider}:{worker.external_id}"


def likert_settings(questions) -> dict:
    """The Likert job's questions for a campaign's question names (built-in anchored wording)."""
    chosen = []
    for name in questions:
        question = default_question(name)
        if question is None:
            raise EvaluationInputError(f"Quorum has no anchored wording for question {name!r}; a crowd campaign rates appropriateness and/or accuracy")
        chosen.append(question)
    return {"questions": chosen}


def choose_instances(test_set, instances=None, sample_size=None, seed=0) -> list[int]:
    """The rated instances: knowledge-seeking in the ground truth; all of them, the given ones, or a seeded sample."""
    seeking = [i for i, label in enumerate(test_set.labels) if label.get("target")]
    if instances is not None:
        chosen = list(instances)
        bad = [i for i in chosen if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < test_set.size]
        if bad:
            raise EvaluationInputError(f"instances must be indices from 0 to {test_set.size - 1}; got {bad[:5]}")
        if len(set(chosen)) != len(chosen):
            raise EvaluationInputError("an instance is listed twice")
        wanted = set(seeking)
        not_seeking = [i for i in chosen if i not in wanted]
        if not_seeking:
            raise EvaluationInputError(f"instances {not_seeking[:5]} are not knowledge-seeking in labels.json; only those are rated")
        chosen = sorted(chosen)
    elif sample_size is not None:
        if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1:
            raise EvaluationInputError("sample_size must be a whole number of at least 1")
        chosen = sorted(random.Random(seed).sample(seeking, min(sample_size, len(seeking))))
    else:
        chosen = seeking
    if not chosen:
        raise EvaluationInputError(f"test set {test_set.name!r} has no knowledge-seeking instance to rate")
    return chosen


def _knowledge_snippets(test_set, index) -> list[dict]:
    snippets = []
    for ref in test_set.labels[index].get("knowledge", []):
        entity = test_set.knowledge.get(ref["domain"], {}).get(str(ref["entity_id"]))
        doc = (entity or {}).get("docs", {}).get(str(ref["doc_id"]))
        if doc is None:
            raise EvaluationInputError(
                f"instance {index}: knowledge {ref['domain']}/{ref['entity_id']}/{ref['doc_id']} is not in the test set's knowledge.json"
            )
        snippets.append({"entity": entity.get("name", ref["domain"]), "title": doc.get("title", ""), "body": doc.get("body", "")})
    return snippets


def _context(test_set, index) -> list[dict]:
    return [{"speaker": SPEAKERS[t["speaker"]], "text": t["text"]} for t in test_set.logs[index]]


def crowd_needs(campaign: Campaign) -> list[str]:
    """Everything a campaign's crowd job still needs, each with where to add it on this site (the
    Evaluation page's forms), all at once rather than one refusal at a time; empty when ready."""
    test_set = campaign.test_set
    missing = []
    if len(test_set.logs or []) != test_set.size:
        missing.append(
            f"the dialog contexts of test set {test_set.name!r} (its logs.json: “Add dialog contexts or knowledge to a test set” on the Evaluation page)"
        )
    if "accuracy" in campaign.questions and not test_set.knowledge:
        missing.append(
            f"the reference knowledge of test set {test_set.name!r}, since accuracy is rated against it (its knowledge.json: "
            "“Add dialog contexts or knowledge to a test set” on the Evaluation page)"
        )
    entries = list(campaign.entries.all())
    if not entries:
        missing.append(f"entries in campaign {campaign.name!r} (add them with “Select finalists” or the campaign's entries list)")
    without = sorted(e.label for e in entries if e.outputs is None)
    if without:
        missing.append(
            f"outputs of {', '.join(without)} (their <team>/<entry>.json: “Upload entries” on the Evaluation page), "
            "or take them out of this draft campaign's entries"
        )
    return missing


def build_rows(campaign: Campaign, instances: list[int]):
    """(rows, skipped): rows are (entry, instance, payload) for every entry with a response on an
    instance; skipped maps an entry label to the instances where it gave none (not detected)."""
    test_set = campaign.test_set
    missing = crowd_needs(campaign)
    if missing:
        raise EvaluationInputError("the crowd job needs, first: " + "; ".join(missing))
    entries = list(campaign.entries.select_related("team").order_by("team__team_id", "entry_id"))
    shared = {i: {"context": _context(test_set, i), "knowledge": _knowledge_snippets(test_set, i)} for i in instances}
    rows: list = []
    skipped: dict[str, list] = {}
    for entry in entries:
        outputs = entry.outputs or []  # every entry has outputs: checked above
        for i in instances:
            output = outputs[i]
            response = output.get("response") if output.get("target") else None
            if not isinstance(response, str) or not response.strip():
                skipped.setdefault(entry.label, []).append(i)
                continue
            rows.append((entry, i, {**shared[i], "response": response}))
    return rows, skipped


def plan_rounds(campaign: Campaign, instances: list[int], order_seed: int, redundancy: int = 1) -> dict:
    """The round order, the look grid and its critical value for a new adaptive crowd job. In
    rating units the order is of (instance, rater number) units, `redundancy` per instance."""
    units: list = list(instances) if campaign.adaptive_unit != "rating" else [[i, k] for i in instances for k in range(redundancy)]
    n = len(units)
    size = campaign.adaptive_round_size
    if size >= n:
        what = "instances rated" if campaign.adaptive_unit != "rating" else "rating units (instances rated x raters per instance)"
        raise EvaluationInputError(
            f"adaptive round size {size} is not smaller than the {n} {what}; lower it, rate more instances, or turn adaptive mode off"
        )
    order = random.Random(f"rounds-{order_seed}").sample(units, n)
    sizes = list(range(size, n, size)) + [n]
    critical = allocation.boundary(sizes, n, 1 - campaign.adaptive_confidence)
    return {"round_order": order, "round_sizes": sizes, "critical_value": critical}


def first_round(campaign: Campaign, rows: list, plan: dict, redundancy: int) -> list:
    """The rows of the first round (every entry on the first instances of the order; in rating
    units, the instances of its first units), checked against the budget."""
    first_units = plan["round_order"][: plan["round_sizes"][0]]
    if campaign.adaptive_unit == "rating":
        raters = rating_units_per_instance(first_units)
        chosen = [row for row in rows if row[1] in raters]
        needed = sum(raters[row[1]] for row in chosen)
    else:
        first = set(first_units)
        chosen = [row for row in rows if row[1] in first]
        needed = len(chosen) * redundancy
    if campaign.adaptive_budget is not None and needed > campaign.adaptive_budget:
        raise EvaluationInputError(
            f"the first round alone needs {needed} ratings ({len(chosen)} responses, up to {redundancy} raters each) and the adaptive budget is "
            f"{campaign.adaptive_budget}; raise the budget or lower the round size"
        )
    return chosen


def rating_units_per_instance(units) -> dict[int, int]:
    """{instance: how many of `units` ([instance, rater number] pairs) rate it}."""
    counts: dict[int, int] = {}
    for instance, _rater in units:
        counts[instance] = counts.get(instance, 0) + 1
    return counts


@transaction.atomic
def create_crowd_job(
    campaign: Campaign,
    *,
    instances=None,
    sample_size=None,
    sample_seed=0,
    redundancy=DEFAULT_REDUNDANCY,
    order_seed=None,
    reward: Decimal | str = Decimal("0.10"),
    instructions: str = INSTRUCTIONS,
    job_name: str | None = None,
    created_by=None,
) -> CampaignJob:
    """The Likert job of a campaign: one item per (instance, entry) with a response, in a seeded
    random order, `redundancy` slots each. A draft job; launch it with `launch_crowd_job`."""
    # The campaign's row lock (as set_adaptive takes): a second request (a double-submitted page)
    # waits and is then refused below, and the adaptive settings read are the committed ones.
    Campaign.objects.select_for_update().filter(pk=campaign.pk).exists()
    campaign.refresh_from_db(fields=["adaptive", "adaptive_confidence", "adaptive_top_k", "adaptive_budget", "adaptive_round_size", "adaptive_unit"])
    if CampaignJob.objects.filter(campaign=campaign).exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} already has a crowd job")
    if Rating.objects.filter(campaign=campaign).exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} already has imported ratings; create a new campaign for crowd ratings")
    settings = likert_settings(campaign.questions)
    chosen = choose_instances(campaign.test_set, instances, sample_size, sample_seed)
    rows, skipped = build_rows(campaign, chosen)
    if not rows:
        raise EvaluationInputError("no entry gave a response on the chosen instances; nothing to rate")
    order_seed = random.SystemRandom().randrange(2**62) if order_seed is None else int(order_seed)
    # Adaptive mode: the job starts with the first round; services.adaptive adds the others.
    plan = plan_rounds(campaign, chosen, order_seed, redundancy) if campaign.adaptive else {}
    if plan:
        rows = first_round(campaign, rows, plan, redundancy)
    random.Random(order_seed).shuffle(rows)
    # In rating units every item starts with one rater; the first round's other raters are added below.
    by_units = bool(plan) and campaign.adaptive_unit == "rating"

    try:
        job = create_payload_job(
            source_name=f"evaluation campaign: {campaign.name}",
            name=job_name or f"{campaign.name}: rate responses",
            task_type="likert",
            payloads=[payload for _entry, _i, payload in rows],
            redundancy=1 if by_units else redundancy,
            settings=settings,
            reward=reward,
            instructions=instructions,
            created_by=created_by,
        )
    except JobError as exc:
        raise EvaluationInputError(str(exc)) from exc
    by_position = item_ids_by_position(job)
    CampaignItem.objects.bulk_create(
        [CampaignItem(campaign=campaign, item_id=by_position[p], entry=entry, instance=i) for p, (entry, i, _payload) in enumerate(rows)],
        batch_size=5000,
    )
    if by_units:
        raters = rating_units_per_instance(plan["round_order"][: plan["round_sizes"][0]])
        add_slots(job, {by_position[p]: raters[i] - 1 for p, (_entry, i, _payload) in enumerate(rows) if raters[i] > 1})
    campaign.rater_ids_known = True
    campaign.save(update_fields=["rater_ids_known"])
    return CampaignJob.objects.create(campaign=campaign, job=job, instances=chosen, order_seed=order_seed, skipped=skipped, **plan)


@transaction.atomic
def create_crowd_campaign(name, test_set, finalists, *, with_references=True, adaptive=None, **job_options) -> CampaignJob:
    """A campaign of the finalists plus the reference rows (ground truth, baseline entries of the
    test set), and its crowd job. `adaptive`: the keyword arguments of `set_adaptive` (adaptive
    mode), or None. All or nothing."""
    finalists = list(finalists)
    if not finalists:
        raise EvaluationInputError("choose at least one finalist")
    entries = {e.pk: e for e in finalists}
    if with_references:
        truth = add_ground_truth_entry(test_set) if not Entry.objects.filter(test_set=test_set, is_ground_truth=True).exists() else None
        references = Entry.objects.filter(Q(is_baseline=True) | Q(is_ground_truth=True), test_set=test_set)
        entries.update({e.pk: e for e in references})
        if truth is not None:
            entries[truth.pk] = truth
    campaign = create_campaign(name, test_set, list(entries.values()), questions=job_options.pop("questions", None))
    if adaptive is not None:
        campaign = set_adaptive(campaign, **adaptive)
    return create_crowd_job(campaign, **job_options)


def launch_crowd_job(campaign: Campaign) -> Job:
    """Open the campaign's crowd job to raters and mark the campaign as collecting."""
    crowd = CampaignJob.objects.select_related("job").filter(campaign=campaign).first()
    if crowd is None:
        raise EvaluationInputError(f"campaign {campaign.name!r} has no crowd job; create one first")
    with transaction.atomic():
        try:
            job = launch_job(crowd.job)
        except JobError as exc:
            raise EvaluationInputError(str(exc)) from exc
        Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.COLLECTING)
    return job


# --- Ratings from responses -------------------------------------------------------------------


def _rating_rows(campaign_id, pair: CampaignItem, response: Response) -> list[Rating]:
    rater = rater_id(response.worker)
    return [
        Rating(campaign_id=campaign_id, entry_id=pair.entry_id, instance=pair.instance, question=q, rater=rater, value=v)
        for q, v in response.answers.items()
        if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5
    ]


# Read for every counted rating of every campaign job: compiled once per process (quorum.compiled_queries).
_CAMPAIGN_ITEM = CompiledQuery(lambda item_id: CampaignItem.objects.filter(item_id=item_id).select_related("campaign").order_by(), item_id=int)


def record_response_ratings(response: Response) -> Campaign | None:
    """Rating rows for one Likert response of a campaign's crowd job: the campaign they were added
    to, or None when none were (any other response, or one recorded before).

    Idempotent: a repeated call (a re-sent signal) finds its ratings there and adds nothing; a
    rating a concurrent repair (`sync_campaign_ratings`) wrote first is kept, not doubled (the
    rating_unique constraint, conflicts ignored). The campaign's inputs version is cleared (cheaply)
    so that pages show stored results as stale until they are recomputed; nothing is recomputed
    per response. Four statements, none a savepoint: this runs on every counted rating.
    """
    if response.status not in Response.COUNTED:
        return None
    pair = next(iter(_CAMPAIGN_ITEM.fetch(item_id=response.item_id)), None)
    if pair is None:
        return None
    questions = set(pair.campaign.questions)
    recorded = set(
        Rating.objects.filter(campaign_id=pair.campaign_id, entry_id=pair.entry_id, instance=pair.instance, rater=rater_id(response.worker))
        .values_list("question", flat=True)
    )
    rows = [r for r in _rating_rows(pair.campaign_id, pair, response) if r.question in questions and r.question not in recorded]
    if not rows:
        return None
    with transaction.atomic(savepoint=False):
        Rating.objects.bulk_create(rows, ignore_conflicts=True)
        Campaign.objects.filter(pk=pair.campaign_id).update(inputs_version="")
    return pair.campaign


def remove_response_ratings(response: Response) -> int:
    """Take out the ratings of a response that stopped counting (rejected, excluded, held, put to a
    vote); 0 when it had none. The campaign's results are marked stale, as when ratings are added."""
    pair = CampaignItem.objects.filter(item_id=response.item_id).first()
    if pair is None:
        return 0
    removed, _ = Rating.objects.filter(
        campaign_id=pair.campaign_id, entry_id=pair.entry_id, instance=pair.instance, rater=rater_id(response.worker)
    ).delete()
    if removed:
        Campaign.objects.filter(pk=pair.campaign_id).update(inputs_version="")
    return removed


@transaction.atomic
def sync_campaign_ratings(campaign: Campaign) -> dict:
    """Make a crowd campaign's ratings equal to its counted responses: add the missing ones, remove
    those of responses that no longer count. Returns the counts. The status signal keeps them equal
    as responses move; this is the repair for ratings written before it (or by hand)."""
    crowd = CampaignJob.objects.filter(campaign=campaign).first()
    if crowd is None:
        return {"added": 0, "removed": 0}
    questions = set(campaign.questions)
    pairs = {p.item_id: p for p in CampaignItem.objects.filter(campaign=campaign)}
    wanted = {}
    responses = Response.objects.counted().filter(item__job_id=crowd.job_id).select_related("worker")
    for response in responses.iterator(chunk_size=5000):
        pair = pairs.get(response.item_id)
        if pair is None:
            continue  # e.g. a gold item
        for rating in _rating_rows(campaign.pk, pair, response):
            if rating.question in questions:
                wanted[(rating.entry_id, rating.instance, rating.question, rating.rater)] = rating
    existing = {
        (e, i, q, r): (pk, v)
        for pk, e, i, q, r, v in Rating.objects.filter(campaign=campaign).values_list("pk", "entry_id", "instance", "question", "rater", "value")
    }
    stale = {key: pk for key, (pk, value) in existing.items() if key not in wanted or wanted[key].value != value}
    Rating.objects.filter(pk__in=list(stale.values())).delete()
    missing = [rating for key, rating in wanted.items() if key not in existing or key in stale]
    Rating.objects.bulk_create(missing, batch_size=5000)
    if stale or missing:
        Campaign.objects.filter(pk=campaign.pk).update(inputs_version="")
    return {"added": len(missing), "removed": len(stale)}
