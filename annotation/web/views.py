"""Annotator pages: the job list, claiming the next item, and the work page of one claimed slot.

The work pages (`/work/<token>/...`) learn who is working from a signed per-slot token in the URL
(annotation.work_tokens), not from the session, so that they also serve crowd workers inside a
provider's iframe, where third-party cookies are blocked. In-house workers, who have accounts,
must in addition be logged in as the token's owner, so a copied link is of no use to anyone else.
"""
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from quorum import limits, strict_json
from quorum.roles import is_organizer, worker_for

from .. import chat_relay, task_types
from ..models import Item, Job, Response, SkippedItem, Slot, Worker
from ..selectors import work as work_selectors
from ..selectors.feedback import feedback_from_json, labels_of, voted_down
from ..selectors.jobs import worker_response_total, worker_responses
from ..selectors.readings import reading_of
from ..services.claims import (
    ClaimError,
    ResponseRejected,
    check_answers,
    claim_next_slot,
    job_admits,
    job_is_open_to,
    release_slot,
    remember_admission,
    submit,
    takes_work,
)
from ..services.uploads import posted_files
from ..text.highlight import slot_segments
from ..text.languages import is_right_to_left
from ..work_tokens import InvalidToken, make_token, read_token
from .after_submit import NextStep, after_submit, after_submit_url

RECENT_RESPONSES = 10


def _message(request, status, title, message, *, links=(), answers=None, kept=None):
    """A page that says what happened and what to do next; `kept` is the text that was saved,
    `answers` the text that was not (shown back so the worker can keep a copy)."""
    context = {"title": title, "message": message, "links": links, "answers": answers or {}, "kept": kept or {}}
    return render(request, "annotation/message.html", context, status=status)


def _too_many(request, refusal: limits.Refusal, *, as_json: bool, answers=None):
    """A request past the worker's limit (quorum.limits): 429 with when to try again; nothing changed."""
    if as_json:
        answer = JsonResponse({"error": refusal.message}, status=429)
    else:
        answer = _message(request, 429, "Too many requests", refusal.message, answers=answers)
    answer["Retry-After"] = str(refusal.retry_after)
    return answer


def _not_an_annotator(request):
    links = [("/organize/", "Go to the organizer pages")] if is_organizer(request.user) else []
    return _message(
        request,
        403,
        "Annotators only",
        "This page is for annotators, and your account has no annotator identity. "
        "Ask an organizer to add you as an annotator.",
        links=links,
    )


# --- Session pages: the home page and claiming -----------------------------------------------


@never_cache  # Back after a submit must show the counts as they are now, not the browser's copy
@login_required
def home(request):
    worker = worker_for(request.user)
    context = {"is_organizer": is_organizer(request.user), "worker": worker}
    if worker is None and context["is_organizer"]:
        return redirect("organizer:dashboard")  # an organizer with no work of their own lands on their pages
    if worker is not None:
        context["rows"] = work_selectors.annotator_jobs(worker)
        context["recent"] = list(worker_responses(worker)[:RECENT_RESPONSES])
        context["response_total"] = worker_response_total(worker)
        context["feedback"] = voted_down(worker)
    return render(request, "annotation/home.html", context)


@login_required
@require_POST
def job_next(request, job_id):
    """Claim the worker's next slot in a job (or the one they hold) and open it."""
    worker = worker_for(request.user)
    if worker is None:
        return _not_an_annotator(request)
    job = get_object_or_404(Job, pk=job_id)
    if not job_is_open_to(job, worker):
        reason = (
            "This job is not open to you."
            if job.state == Job.State.LIVE
            else "This job is not collecting responses right now."
        )
        return _message(request, 403, "Job not open to you", reason, links=[(reverse("home"), "Back to your jobs")])
    try:
        slot = claim_next_slot(job=job, worker=worker)
    except ClaimError as exc:
        return _message(request, 409, "Please try again", str(exc), links=[(reverse("home"), "Back to your jobs")])
    if slot is None:
        context = {
            "job": job,
            "saved": False,
            "can_look_again": True,
            "your_responses": work_selectors.response_count(worker, job),
        }
        return render(request, "annotation/nothing_left.html", context)
    return redirect("work", token=make_token(slot))


# --- Token pages: the work page, live checks, skip, done ---------------------------------------
#
# These views are csrf_exempt on purpose. CSRF protection guards against a foreign site making the
# browser send a request that an *ambient* credential (a cookie) authorizes. Here the credential is
# the signed token in the URL path, which a foreign site cannot know or forge; a crowd worker in an
# iframe has no cookie at all, and a CSRF cookie could not be set there either. (In-house workers'
# session cookies are SameSite=Lax, so they are not sent with a cross-site POST anyway.)


@dataclass(frozen=True)
class _Work:
    token: str
    slot: Slot
    item: Item
    job: Job
    worker: Worker


_MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _logged_in_as(request, user) -> bool:
    """Whether the request is logged in as `user`, a row the work page has already loaded.

    The plain case (Django's default backend, the session's user and password hash match, an
    active account) is decided on that row, so the auth middleware does not load the user again:
    one query less on every work page. Anything else goes through `request.user` as usual.
    """
    session = request.session
    if (
        user.is_active
        and session.get(SESSION_KEY) == str(user.pk)
        and session.get(BACKEND_SESSION_KEY) == _MODEL_BACKEND
        and _MODEL_BACKEND in settings.AUTHENTICATION_BACKENDS
        and constant_time_compare(session.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash())
    ):
        request.user = user
        return True
    return request.user.is_authenticated and request.user.pk == user.pk


def _resolve(request, token, *, as_json=False, need_open_job=True, for_page=False):
    """(work, None) when the token and the requester may use this slot, else (None, an error response).

    One query (selectors.work.work_slot) loads the slot, its item, job and worker; with `for_page`
    it also brings what the work page shows, so that rendering it asks nothing more.
    """

    def deny(status, title, message):
        if as_json:
            return None, JsonResponse({"error": message}, status=status)
        links = [(reverse("home"), "Your jobs")] if request.user.is_authenticated else []
        return None, _message(request, status, title, message, links=links)

    try:
        slot_id, worker_id = read_token(token)
    except InvalidToken as exc:
        return deny(403, "Link not valid", str(exc))
    slot = work_selectors.work_slot(slot_id, worker_id, for_page=for_page)
    if slot is None:
        return deny(404, "Item not found", "This item no longer exists.")
    # The slot's holder is usually the token's worker; a claim freed meanwhile leaves another or none.
    worker = slot.worker if slot.worker_id == worker_id else Worker.objects.select_related("user").filter(pk=worker_id).first()
    if worker is None:
        return deny(404, "Item not found", "This item no longer exists.")
    if worker.user_id is not None:  # an in-house annotator: must be logged in as themselves
        if not _logged_in_as(request, worker.user):
            if not request.user.is_authenticated:
                if as_json:
                    return deny(401, "Log in", "Your session has ended; log in again.")
                return None, redirect_to_login(request.get_full_path())
            return deny(403, "Not your item", "This item was given to another annotator; you cannot open it.")
    job = slot.item.job
    if need_open_job and not takes_work(job, slot, worker_id):
        return None, _job_closed(request, job, worker, as_json)
    remember_admission(job, worker, listed=slot.job_lists_worker, restricted=slot.job_restricted)
    if not job_admits(job, worker):
        return deny(403, "Job not open to you", "This job is not open to you.")
    return _Work(token=token, slot=slot, item=slot.item, job=job, worker=worker), None


def _job_closed(request, job: Job, worker: Worker, as_json: bool):
    """The answer to a work link of a job that no longer takes work; a form's text is shown back."""
    message = "This job is no longer collecting responses."
    if as_json:
        return JsonResponse({"error": message}, status=403)
    answers = _texts_only(posted_answers(request, job)) if request.method == "POST" else None
    if answers:
        message += " Your text is shown below so that you can keep a copy."
    links = [(reverse("home"), "Your jobs")] if worker.user_id else []
    return _message(request, 403, "Job closed", message, links=links, answers=answers)


def _show(request, work: _Work, done):
    """The GET of a work link: the item's page, or why there is nothing to answer."""
    if done is not None:
        return _message(
            request, 200, "Already saved", "You have already answered this item; your response is saved.",
            links=[(reverse("home"), "Your jobs")] if work.worker.user_id else [],
        )
    return _given_back_page(request, work) or _work_page(request, work)


def _given_back_page(request, work: _Work):
    """The page for a link to an item the worker gave back (`_given_back`), else None."""
    if not _given_back(work):
        return None
    message = (
        "You gave this item back (you skipped it, or returned the task on the site you came from), so it went to "
        "other workers and an answer to it can no longer be saved."
    )
    answers = _texts_only(_answers_from(request, work)) if request.method == "POST" else None
    if answers:
        message += " Your text is shown below so that you can keep a copy."
    links = [(reverse("home"), "Your jobs")] if work.worker.user_id else []
    return _message(request, 409, "Item given back", message, links=links, answers=answers)


#: The token an organizer's preview renders its links with: not a signed token, so any work URL made
#: from it that the preview does not replace (a reading's audio on a vote item) is refused as "Link
#: not valid", and nothing is stored.
PREVIEW_TOKEN = "preview"


def posted_answers(request, job: Job) -> dict:
    """The answers a form posted: its text fields, then its file fields (multipart) as bytes."""
    kind = task_types.get(job.task_type)
    posted = {f["name"]: request.POST.get(f["name"], "") for f in kind.answer_fields(job.settings)}
    posted.update(posted_files(kind, job.settings, request.FILES))
    return posted


def preview_page(request, job: Job, item: Item, *, preview: dict, answers=None, problems=(), status=200):
    """The work page of `item` exactly as a worker meets it (the task type's template and its
    `page_context`), for an organizer's preview: the slot and worker are unsaved stand-ins, so no
    claim, assignment or response exists; `preview` (where the form posts, what to say) marks it."""
    slot = Slot(item=item, job=job, index=0, position=item.position)
    slot.your_responses = 0  # read by _your_responses instead of counting a stand-in's responses
    work = _Work(token=PREVIEW_TOKEN, slot=slot, item=item, job=job, worker=Worker(external_id=PREVIEW_TOKEN))
    return _work_page(request, work, answers=answers, problems=problems, status=status, extra={"preview": preview})


def _work_page(
    request, work: _Work, *, answers=None, problems=(), active_seconds="", telemetry="", typing="", status=200, extra=None,
    saved=None,
):
    kind = task_types.get(work.job.task_type)
    fields = kind.answer_fields(work.job.settings)
    names = {f["name"] for f in fields}
    answers = answers or {}
    by_field = defaultdict(list)
    for problem in problems:
        by_field[problem.field].append(problem.message)
    rows = [{**f, "value": answers.get(f["name"], ""), "problems": by_field.get(f["name"], [])} for f in fields]
    grouped = task_types.capability(kind, task_types.GroupsFields)
    if grouped:  # e.g. a questionnaire's N/A reason, shown in its question's row
        rows = grouped.form_rows(rows, answers, by_field)
    summary = [
        {"message": p.message, "field_id": f"id_{p.field}" if p.field in names else ""} for p in problems
    ]
    first_bad = next((r["name"] for r in rows if r["problems"]), None)
    payload = work.item.payload
    slot_values = list(dict.fromkeys(str(v) for v in payload.get("slot_values", [])))  # de-duplicated, in order
    your_responses = _your_responses(work)
    text_language = work_selectors.text_language(work.slot)
    context = {
        "token": work.token,
        # The signed token changes with every page; the draft a reload restores (static/drafts.js)
        # is this worker's on this slot.
        "draft_key": f"{work.slot.pk}-{work.worker.pk}",
        "job": work.job,
        "item": work.item,
        "task_template": kind.template,
        # The lang of the corpus's text and of the boxes that take the worker's text in it, and
        # whether they also get dir="rtl" (Arabic, Hebrew...).
        "text_language": text_language,
        "text_rtl": is_right_to_left(text_language),
        "earlier_turns": [t for t in work_selectors.history_of(work.slot) if not t["is_target"]],
        "segments": slot_segments(payload.get("utterance", ""), slot_values),
        "slot_values": slot_values,
        "slot_chips": _slot_chips(work.item, slot_values),
        "fields": rows,
        "takes_files": any(f.get("upload") for f in fields),  # the form posts multipart
        "problems": summary,
        "focus_field": first_bad or (rows[0]["name"] if rows else None),
        "active_seconds": active_seconds,
        "telemetry": telemetry,  # carried over a refused submission, so the counts go on
        "typing_fields": " ".join(task_types.free_text_fields(kind, work.job.settings)),
        "typing_log": typing,  # carried over a refused submission too (static/typing.js goes on from it)
        # "Item N of M" counts the worker's own items: N is this one (their saved responses + 1), M
        # the job's items. The item's position is no use here: vote items are numbered across
        # re-collections, and raters see the items in their own order.
        "position": your_responses + 1,
        "total_items": max(_items_counted(kind, work), your_responses + 1),  # never "Item 11 of 10"
        "your_responses": your_responses,
        "saved": request.GET.get("saved") == "1" if saved is None else saved,
        "is_inhouse": work.worker.user_id is not None,
        "feedback": feedback_from_json(getattr(work.slot, "feedback_json", None), labels=labels_of(fields)),
        # Finished while the worker held this item: it is still theirs until the claim expires.
        "closing_at": work.slot.expires_at if work.job.state == Job.State.FINISHED else None,
        **kind.page_context(work.item, work.slot, work.job.settings),
        **(extra or {}),
    }
    return render(request, "annotation/work.html", context, status=status)


def _items_counted(kind, work) -> int:
    """M of "item N of M": the job's items, less those a worker may never take (a vote on their own
    work), which only an item source of responses has."""
    if isinstance(kind, task_types.FromResponses):
        return work_selectors.items_for_worker(work.job, work.worker)
    return work_selectors.item_count(work.job)


def _slot_chips(item, slot_values) -> list[tuple[str, str]]:
    """(slot, value) of each value to keep: the slot names come from the item's turn, which the work
    page's one read joins already; items without a turn (votes, payloads) have values only."""
    turn = item.turn if item.turn_id else None
    named = [(str(sv.get("slot", "")), str(sv.get("value", ""))) for sv in (turn.slot_values if turn else None) or [] if isinstance(sv, dict)]
    named = list(dict.fromkeys(pair for pair in named if pair[1] in slot_values))
    shown = {value for _, value in named}
    return named + [("", value) for value in slot_values if value not in shown]


def _your_responses(work: _Work) -> int:
    counted = getattr(work.slot, "your_responses", None)  # loaded with the slot for the work page
    return counted if counted is not None else work_selectors.response_count(work.worker, work.job)


def _saved_response(work: _Work):
    """The worker's stored response to this item, if any (whether there is one came with the slot)."""
    if work.slot.done_id is None:
        return None
    response = Response.objects.select_related("slot", "worker").get(pk=work.slot.done_id)
    response.slot.job = work.job  # the same job: the redirect that follows claims in it
    return response


def _given_back(work: _Work) -> bool:
    """Whether the worker gave this item back (skipped it here, or their crowd provider reported
    the task returned, which releases it the same way) and no longer holds it: its page must say
    so, not offer a form whose submit would be refused. Asked only when the slot is not theirs."""
    if work.slot.worker_id == work.worker.pk and work.slot.state == Slot.State.CLAIMED:
        return False
    return SkippedItem.objects.filter(worker=work.worker, item_id=work.slot.item_id).exists()


TELEMETRY_MAX_CHARS = 4000  # twenty fields of four small counts fit many times over


def _telemetry_from(text: str):
    """The page's typing counts (JSON in a hidden field); None when absent or not JSON.

    submit_response cleans the shape (services.claims.clean_telemetry): telemetry is evidence for a
    reviewer and never a reason to refuse a worker's answer.
    """
    if not text or len(text) > TELEMETRY_MAX_CHARS:
        return None
    try:
        return strict_json.loads(text)  # deep nesting, NaN, NUL: not telemetry (issue 25)
    except ValueError:
        return None


def _answers_from(request, work: _Work) -> dict:
    """The posted answers: text fields from the form, file fields (multipart) as bytes, then what
    the server fills in."""
    return {**posted_answers(request, work.job), **_server_answers(task_types.get(work.job.task_type), work)}


def _server_answers(kind, work: _Work) -> dict:
    """What the server fills in for a type that relays a chat (its transcript); nothing otherwise."""
    relays = task_types.capability(kind, task_types.RelaysChat)
    return relays.server_answers(work.item, work.slot, work.job.settings) if relays else {}


def _texts_only(answers: dict) -> dict:
    """The answers a page may show back: files are not echoed."""
    return {name: value for name, value in answers.items() if not isinstance(value, (bytes, bytearray))}


def _wants_json(request) -> bool:
    """A page script's submission (fetch with `Accept: application/json`, e.g. static/spoken.js, so
    recordings stay in the page) rather than a form post, whose browser accepts text/html too."""
    return request.accepts("application/json") and not request.accepts("text/html")


def _refusal_json(work: _Work, problems) -> dict:
    """A refused submission for a page script: messages by posted field, and the others apart."""
    kind = task_types.get(work.job.task_type)
    names = {f["name"] for f in kind.answer_fields(work.job.settings)}
    errors, non_field = defaultdict(list), []
    for problem in problems:
        if problem.field in names:
            errors[problem.field].append(problem.message)
        else:
            non_field.append(problem.message)
    return {"errors": dict(errors), "non_field": non_field}


@csrf_exempt  # identity is the signed token, not an ambient cookie: see the note above
@never_cache
@require_http_methods(["GET", "POST"])
def work(request, token):
    """GET shows the item; POST submits the answers. A script's POST (`_wants_json`) is answered
    in JSON where the page can go on without reloading: {"redirect": url} when saved, 400
    {"errors", "non_field"} when refused, {"error"} when the link may not be used; other answers
    (already saved, a lost claim) are the pages a form post gets."""
    as_json = request.method == "POST" and _wants_json(request)
    current, denied = _resolve(request, token, as_json=as_json, for_page=request.method == "GET")
    if denied:
        return denied
    done = _saved_response(current)
    if request.method == "GET":
        return _show(request, current, done)
    given_back = _given_back_page(request, current) if done is None else None
    if given_back is not None:
        return given_back

    answers = _answers_from(request, current)
    if done is not None:  # a repeated submission (double click, reload): the first one stands
        return _already_saved(request, current, done, answers)
    refusal = limits.spend("recordings", current.worker.pk) if request.FILES else None
    if refusal is not None:
        return _too_many(request, refusal, as_json=as_json, answers=_texts_only(answers))
    active_seconds = request.POST.get("active_seconds", "")
    telemetry_text = request.POST.get("telemetry", "")
    typing_text = request.POST.get("typing_log", "")
    try:
        submission = submit(
            slot_id=current.slot.pk,
            slot=current.slot,
            worker=current.worker,
            answers=answers,
            active_seconds=active_seconds or None,
            telemetry=_telemetry_from(telemetry_text),
            typing=typing_text,
            typing_strict=not as_json,  # a script's post keeps a malformed log as evidence
        )
    except ResponseRejected as exc:
        if as_json:
            return JsonResponse(_refusal_json(current, exc.problems), status=400)
        return _work_page(
            request, current, answers=_texts_only(answers), problems=exc.problems, active_seconds=active_seconds,
            telemetry=telemetry_text[:TELEMETRY_MAX_CHARS], status=400,
            typing=typing_text if not any(p.code == "typing_log" for p in exc.problems) else "",
        )
    except ClaimError as exc:
        return _message(
            request,
            409,
            "Not saved",
            f"{exc} Your text is shown below so that you can keep a copy.",
            links=[(reverse("home"), "Your jobs")] if current.worker.user_id else [],
            answers=_texts_only(answers),
        )
    if not submission.created:  # a simultaneous post of the same link was saved first
        return _already_saved(request, current, submission.response, answers)
    step = after_submit(submission.response.slot, submission.response)
    if as_json:
        return JsonResponse({"redirect": step.url})
    if request.headers.get(CYCLE_HEADER) == "page":
        return _next_page(request, step) if step.token is not None else _go_to(step.url)
    return redirect(step.url)


#: Sent by static/annotate.js with a form's submission: "answer with the next item's page".
CYCLE_HEADER = "X-Quorum-Cycle"
#: The URL of the page a one-request cycle answered with; the script puts it in the address bar.
LOCATION_HEADER = "X-Quorum-Location"
#: Where the script must send the browser itself (the done page, a provider's completion URL).
GO_TO_HEADER = "X-Quorum-Go-To"


def _go_to(url: str) -> HttpResponse:
    """A one-request cycle that does not end on a work page: the script navigates to `url` (a
    provider's completion URL is on another site, where a fetch could not follow a redirect)."""
    answer = HttpResponse(status=204)
    answer[GO_TO_HEADER] = url
    return answer


def _next_page(request, step: NextStep):
    """One request per cycle: the saved submission is answered with the next item's page itself,
    not a redirect the browser must follow. The script that asked shows it and names its URL in the
    address bar (history.replaceState), so a reload asks for the next item, never the submission
    again, and the back button leads where it did before. Without the script the form post gets
    the redirect (Post/Redirect/Get) as always."""
    following, denied = _resolve(request, step.token, for_page=True) if step.token else (None, None)
    if following is None:  # not expected for a slot just claimed for them; the redirect says what is wrong
        return redirect(step.url)
    page = _work_page(request, following, saved=True)
    page[LOCATION_HEADER] = step.url
    return page


def _already_saved(request, work: _Work, stored: Response, answers: dict):
    """The answer to a second submission of a slot: what was stored, and the sent text if it differs."""
    names = [f["name"] for f in task_types.get(work.job.task_type).answer_fields(work.job.settings)]
    kept = {name: stored.answers.get(name, "") for name in names if isinstance(stored.answers, dict)}
    sent = {name: answers.get(name, "") for name in names if name in _texts_only(answers)}
    differs = {k: str(v) for k, v in kept.items()} != {k: str(v) for k, v in sent.items()}
    return _message(
        request,
        200,
        "Already saved",
        "This item was already saved: your first text was kept, and it is shown below."
        + (" What you sent this time was not saved." if differs else ""),
        links=[(after_submit_url(stored.slot, stored), "Continue")],
        kept=kept,
        answers=sent if differs else None,
    )


@csrf_exempt  # identity is the signed token, not an ambient cookie: see the note above
@never_cache
@require_POST
def work_check(request, token):
    """Live feedback: POST {"answers": {field: text}} -> {"ok", "problems": [{field, code, message}]}.

    Runs the same validation as a submission and saves nothing.
    """
    current, denied = _resolve(request, token, as_json=True)
    if denied:
        return denied
    kind = task_types.get(current.job.task_type)
    answers = check_body_answers(request, kind, current.job.settings)
    if isinstance(answers, JsonResponse):
        return answers
    answers.update(_server_answers(kind, current))
    _cleaned, problems = check_answers(slot=current.slot, answers=answers)
    return JsonResponse({"ok": not problems, "problems": [p.as_dict() for p in problems]})


def check_body_answers(request, kind, settings_: dict) -> dict | JsonResponse:
    """The answers of a live check's body `{"answers": {field: value}}`, one per field of the form
    (the work page's and the organizer's preview's), or the 400 that says what to send."""
    try:
        body = strict_json.loads(request.body or b"{}")
    except ValueError as exc:  # not JSON, too deep, NaN, NUL or a lone surrogate: said, not a 500
        return JsonResponse({"error": f'Send a JSON object like {{"answers": {{"paraphrase": "..."}}}}: {exc}.'}, status=400)
    answers = body.get("answers") if isinstance(body, dict) else None
    if not isinstance(answers, dict):
        return JsonResponse({"error": 'Send a JSON object like {"answers": {"paraphrase": "..."}}.'}, status=400)
    return {f["name"]: answers.get(f["name"], "") for f in kind.answer_fields(settings_)}


CHAT_ACTIONS = ("open", "say", "end")
MAX_CHAT_TEXT = chat_relay.MAX_MESSAGE_CHARS


def _chat_text_problem(text) -> str | None:
    """Why a chat message cannot be sent, or None. A long one is refused whole, never cut: the page
    keeps the text for the worker to shorten."""
    if not isinstance(text, str) or not text.strip():
        return "Write a message first."
    if len(text) > MAX_CHAT_TEXT:
        return f"Your message has {len(text):,} characters; the limit is {MAX_CHAT_TEXT:,}. Shorten it and send it again (nothing was sent)."
    return None


@csrf_exempt  # identity is the signed token, not an ambient cookie: see the note above
@never_cache
@require_POST
def work_chat(request, token):
    """A chat item's conversation: POST {"action": "open"} | {"action": "say", "text"} |
    {"action": "end", "reason": "success"|"fail"} -> {"turns": [...], "ended"}. The relay
    registered for the item (annotation.chat_relay) reaches the system; the page never learns which."""
    current, denied = _resolve(request, token, as_json=True)
    if denied:
        return denied
    if not isinstance(task_types.get(current.job.task_type), task_types.RelaysChat):
        return JsonResponse({"error": "This item has no conversation."}, status=404)
    try:
        body = strict_json.loads(request.body or b"{}")
    except ValueError as exc:  # not JSON, too deep, NaN, NUL or a lone surrogate in the message
        return JsonResponse({"error": f"The message cannot be sent: {exc}."}, status=400)
    action = body.get("action") if isinstance(body, dict) else None
    if action not in CHAT_ACTIONS:
        return JsonResponse({"error": 'Send {"action": "open"}, {"action": "say", "text": "..."} or {"action": "end", "reason": "success"}.'}, status=400)
    refusal = limits.spend("chat", current.worker.pk)
    if refusal is not None:
        return _too_many(request, refusal, as_json=True)
    payload = current.item.payload
    key = chat_relay.session_key(current.slot)
    try:
        relay = chat_relay.relay_for(payload)
        if action == "open":
            return JsonResponse(relay.open(payload["endpoint"], key, payload.get("goal")))
        if action == "end":
            if body.get("reason") not in ("success", "fail", "abandoned"):
                return JsonResponse({"error": "The reason must be success, fail or abandoned."}, status=400)
            return JsonResponse(relay.end(payload["endpoint"], key, body["reason"]))
        text = body.get("text")
        problem = _chat_text_problem(text)
        if problem:
            return JsonResponse({"error": problem}, status=400)
        return JsonResponse(relay.say(payload["endpoint"], key, text.strip()))
    except chat_relay.RelayUnavailable:
        return JsonResponse({"error": "Conversations are not available right now; please skip this item."}, status=503)
    except chat_relay.ChatClosed as exc:
        return JsonResponse({"error": str(exc)}, status=409)


@csrf_exempt  # identity is the signed token, not an ambient cookie: see the note above
@require_POST
def work_skip(request, token):
    """Give the item back without answering."""
    current, denied = _resolve(request, token, need_open_job=False)
    if denied:
        return denied
    release_slot(slot_id=current.slot.pk, worker=current.worker)
    if current.worker.user_id is not None:
        messages.info(request, "Item skipped: it went back to the pool and will not be offered to you again.")
        try:
            following = claim_next_slot(job=current.job, worker=current.worker)
        except ClaimError:
            following = None
        return redirect("work", make_token(following)) if following else redirect("home")
    return _message(
        request, 200, "Item skipped",
        "The item went back to the pool; nothing is saved or paid for it. If you came from a crowd site, return the "
        "task there so that your place goes to someone else; then you can close this page.",
    )


@never_cache
@require_GET
def work_done(request, token):
    """'Nothing left for you in this job', reached after the last item the worker could do."""
    current, denied = _resolve(request, token, need_open_job=False)
    if denied:
        return denied
    context = {
        "job": current.job,
        "saved": request.GET.get("saved") == "1",
        "can_look_again": current.worker.user_id is not None and current.job.state == Job.State.LIVE,
        "your_responses": work_selectors.response_count(current.worker, current.job),
    }
    return render(request, "annotation/nothing_left.html", context)


def audio_response(reading) -> FileResponse:
    """A reading's WAV, streamed from the audio storage (never a public URL), not cached by proxies."""
    response = FileResponse(reading.audio.open("rb"), content_type="audio/wav")
    response["Cache-Control"] = "private, no-store"
    response["Content-Disposition"] = f'inline; filename="reading-{reading.index + 1}.wav"'
    return response


@never_cache
@require_GET
def work_reading_audio(request, token, index):
    """A voter's player: reading `index` of the response this vote item is about. Only the holder of
    the vote slot hears it (the token, as on every work page); nobody else learns it exists."""
    current, denied = _resolve(request, token)
    if denied:
        return denied
    slot = current.slot
    if slot.worker_id != current.worker.pk or slot.state != Slot.State.CLAIMED or (slot.expires_at and slot.expires_at <= timezone.now()):
        # The vote slot is no longer theirs (the claim expired or was freed): nor is the audio (issue 25).
        return _message(request, 403, "Claim expired", "Your claim on this item has ended; take a new item to vote again.")
    subject = current.item.subject_response_id
    reading = reading_of(subject, index) if subject is not None else None
    if reading is None:
        raise Http404("No such reading.")
    return audio_response(reading)
