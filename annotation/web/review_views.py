"""Organizer pages around the review queue: the decisions page (the audit trail of a job's reviewer
decisions, each undoable with a reason), the queue's remembered view (compact table or full cards),
and the preview of a job as a worker sees it.

Thin views over `services.review_undo`, `services.review`, `selectors.review_decisions` and the work
page's own rendering (`views.preview_page`); organizers only; writes are POST only.
"""
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from quorum import strict_json
from quorum.roles import organizer_required

from .. import task_types
from ..models import Item, Job, Slot
from ..selectors.review_decisions import job_decisions
from ..services.claims import check_answers
from ..services.quality import QualityError
from ..services.review import remember_review_view
from ..services.review_undo import undo_decisions
from .views import check_body_answers, posted_answers, preview_page

#: Where the outcome of the last undo waits for the decisions page (post/redirect/get).
_UNDO_RESULTS = "quorum:undo-results:{}"


@organizer_required
def job_review_decisions(request, pk):
    """Every reviewer decision on the job, newest first, grouped by action, with their undos."""
    job = get_object_or_404(Job, pk=pk)
    decisions = job_decisions(job, request.GET.get("page") or 1)
    context = {
        "job": job,
        "decisions": decisions,
        "results": request.session.pop(_UNDO_RESULTS.format(job.pk), None),
        "chosen": {int(i) for i in request.GET.getlist("decision") if i.isdigit()},
    }
    return render(request, "annotation/organizer/review_decisions.html", context)


@organizer_required
@require_POST
def job_review_undo(request, pk):
    """Undo the chosen decisions with one reason: each response goes back to its state before."""
    job = get_object_or_404(Job, pk=pk)
    ids = [i for i in request.POST.getlist("decision") if i.isdigit()]
    back = reverse("organizer:job-review-decisions", kwargs={"pk": job.pk})
    try:
        results = undo_decisions(job, ids, reason=request.POST.get("reason", ""), by=request.user)
    except QualityError as exc:
        messages.error(request, f"Nothing was undone: {exc}.")
        return redirect(back + "?" + "&".join(f"decision={i}" for i in ids[:500]))
    done = sum(r.ok for r in results)
    messages.success(request, f"{done} of {len(results)} decision{'s' if len(results) != 1 else ''} undone; the result of each is listed below.")
    request.session[_UNDO_RESULTS.format(job.pk)] = [
        {"decision_id": r.decision_id, "response_id": r.response_id, "ok": r.ok, "message": r.message} for r in results
    ]
    return redirect(back)


@organizer_required
@require_POST
def review_view_choice(request):
    """Remember the organizer's choice of the review queue's view, then go back to the queue."""
    remember_review_view(request.user, compact=request.POST.get("view") == "compact")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = reverse("organizer:dashboard")
    return redirect(back)


def _preview_item(job: Job, position: str) -> tuple[Item | None, list[int]]:
    positions = list(Item.objects.filter(job=job).order_by("position").values_list("position", flat=True))
    if not positions:
        return None, positions
    wanted = int(position) if position.isdigit() else positions[0]
    at = wanted if wanted in positions else positions[0]
    return Item.objects.select_related("job", "turn").get(job=job, position=at), positions


def _preview_links(job: Job, item: Item, positions: list[int]) -> dict:
    base = reverse("organizer:job-preview", kwargs={"pk": job.pk})
    index = positions.index(item.position)
    kind = task_types.get(job.task_type)
    return {
        "url": f"{base}?item={item.position}",
        "check_url": reverse("organizer:job-preview-check", kwargs={"pk": job.pk, "position": item.position}),
        "position": index + 1,
        "items": len(positions),
        "previous": f"{base}?item={positions[index - 1]}" if index > 0 else "",
        "next": f"{base}?item={positions[index + 1]}" if index + 1 < len(positions) else "",
        "back": reverse("organizer:job", kwargs={"pk": job.pk}),
        "relays": task_types.capability(kind, task_types.RelaysChat) is not None,
        "chat_url": reverse("organizer:job-preview-chat", kwargs={"pk": job.pk, "position": item.position}),
    }


@organizer_required
@never_cache
def job_preview(request, pk):
    """A job's item as a worker sees it (`?item=<position>`), in any state; a submit checks the
    answers as a submission would and stores nothing."""
    job = get_object_or_404(Job, pk=pk)
    item, positions = _preview_item(job, request.GET.get("item", ""))
    if item is None:
        messages.error(request, "This job has no items to preview yet: a vote job gets its items from the responses it judges.")
        return redirect("organizer:job", pk=job.pk)
    preview = _preview_links(job, item, positions)
    if request.method != "POST":
        return preview_page(request, job, item, preview=preview)
    answers = posted_answers(request, job)
    _cleaned, problems = check_answers(slot=_stand_in_slot(item), answers=answers)
    if not problems:
        preview["notice"] = "These answers pass every check a submission makes. Nothing was saved: this is a preview."
    texts = {k: v for k, v in answers.items() if isinstance(v, str)}
    return preview_page(request, job, item, preview=preview, answers=texts, problems=problems, status=400 if problems else 200)


def _stand_in_slot(item: Item) -> Slot:
    """An unsaved slot of the item: `check_answers` reads only its item."""
    return Slot(item=item, job_id=item.job_id, index=0, position=item.position)


@csrf_exempt  # checks answers and writes nothing; organizers only, like the page it serves
@organizer_required
@never_cache
@require_POST
def job_preview_check(request, pk, position):
    """The preview's live check: the work page's `POST {"answers": {...}}` -> {"ok", "problems"}."""
    item = get_object_or_404(Item.objects.select_related("job"), job_id=pk, position=position)
    answers = check_body_answers(request, task_types.get(item.job.task_type), item.job.settings)
    if isinstance(answers, JsonResponse):
        return answers
    _cleaned, problems = check_answers(slot=_stand_in_slot(item), answers=answers)
    return JsonResponse({"ok": not problems, "problems": [p.as_dict() for p in problems]})


#: What the preview's conversation answers in place of the system.
PREVIEW_REPLY = "(Preview: here the system answers the worker. Nothing is sent to it, and nothing is saved.)"


@csrf_exempt  # answers from nothing it stores and writes nothing; organizers only, like the page it serves
@organizer_required
@never_cache
@require_POST
def job_preview_chat(request, pk, position):
    """The preview's stand-in for a chat's relay (`static/chat.js`): the worker's message shown back
    with a note where the system's reply would be; no system is called, no transcript is kept."""
    get_object_or_404(Item, job_id=pk, position=position)
    try:
        body = strict_json.loads(request.body or b"{}")
    except ValueError as exc:
        return JsonResponse({"error": f'Send a JSON object like {{"action": "say", "text": "..."}}: {exc}.'}, status=400)
    action = body.get("action") if isinstance(body, dict) else None
    text = str(body.get("text", ""))[:1000] if isinstance(body, dict) else ""
    if action == "say" and text.strip():
        turns = [{"role": "user", "text": text}, {"role": "system", "text": PREVIEW_REPLY}]
        return JsonResponse({"turns": turns, "ended": False})
    if action in ("open", "end"):
        return JsonResponse({"turns": [], "ended": action == "end"})
    return JsonResponse({"error": 'Send {"action": "open"}, {"action": "say", "text": "..."} or {"action": "end"}.'}, status=400)
