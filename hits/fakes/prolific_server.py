"""A fake of the parts of Prolific's HTTP API that Quorum uses.

Like Prolific, it checks the `Authorization: Token ...` header, creates studies unpublished,
requires a rejection message of at least 100 characters, and pays a bulk bonus every time its pay
endpoint is called (not idempotent) — so a test can count double payments. Simulated participants
start submissions with `start_submission` and complete them with `complete`, or as a browser does:
by opening `<fake url>/submissions/complete?cc=CODE` with their session cookie (`completions`);
`return_submission` and `time_out` end them the other ways.

Money as Prolific's API reference states it: a study's `reward` is whole cents; a bonus CSV amount is a
decimal in the study's currency; "Set up bonuses" answers `amount`, `fees`, `vat` and `total_amount` in
cents, fees in hundredths of a cent (its example: 283.34 on 850). The fake rounds each participant's fee
and VAT to the hundredth of a cent, half up (141.67 on 425, as that example adds up), at `fee_rate` and
`vat_rate`, and keeps what each publish and each paid bulk bonus takes from the balance in `charges`
(cents), so a test can hold Quorum's reservations against them.

Hooks, as Prolific documents them: one signing secret per workspace (/api/v1/hooks/secrets/), a
subscription that answers with an X-Hook-Secret header and is enabled only once that value is posted
back to /api/v1/hooks/subscriptions/<id>/. Every submission status change then makes a signed
delivery per enabled subscription (X-Prolific-Request-Signature: base64 HMAC-SHA256 of timestamp +
body; X-Event-ID), kept in `deliveries` for a test to hand to Quorum (with `deliver`, over HTTP).
"""
import base64
import hashlib
import hmac
import json
import random
import string
import time
import uuid
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from urllib.parse import parse_qs, urlparse

import requests

from .base import FakeServer

SESSION_COOKIE = "prolific_session"


def _oid(rng):
    return "".join(rng.choice("0123456789abcdef") for _ in range(24))


class FakeProlific(FakeServer):
    def __init__(self, *, token="test-token", latency=0.0, seed=0, fee_rate="0.3333", vat_rate="0", **kw):
        super().__init__(**kw)
        self.token = token
        self.fee_rate, self.vat_rate = Decimal(fee_rate), Decimal(vat_rate)
        self.charges = []  # (what, id, cents taken from the balance): a publish, a paid bulk bonus
        self.latency = latency
        self.rng = random.Random(seed)
        self.studies = {}
        self.submissions = {}
        self.bulk_bonuses = {}
        self.paid = []  # one entry per pay call that paid: (bulk id, participant, amount)
        self.calls = Counter()
        self.completions = []  # every visit to the completion URL with a valid code
        self.hook_secrets = {}  # workspace id -> secret
        self.subscriptions = {}  # subscription id -> {id, workspace_id, event_type, target_url, is_enabled, confirm}
        self.deliveries = []  # signed hook requests: {url, headers, body}

    def handle(self, method, path, headers, raw):
        if path.startswith("/_control/simulate"):
            # For tests whose Quorum runs in another process: a participant starts and completes.
            body = json.loads(raw or b"{}")
            session = self.start_submission(body["posting"], body["worker"])
            self.complete(session)
            return 200, {"id": session}, {}
        if path.startswith("/submissions/complete"):
            return self._complete_by_code(path, headers)
        if self.latency:
            time.sleep(self.latency)
        auth = headers.get("Authorization") or headers.get("authorization") or ""
        if auth != f"Token {self.token}":
            return 401, {"error": "Invalid token"}, {}
        url = urlparse(path)
        parts = [p for p in url.path.split("/") if p][2:]  # after api/v1
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        body = json.loads(raw or b"{}")
        with self.lock:
            self.calls[f"{method} /{'/'.join(parts)}"] += 1
            try:
                return self._route(method, parts, query, body)
            except KeyError as exc:
                return 404, {"error": f"not found: {exc}"}, {}
            except ValueError as exc:
                return 400, {"error": str(exc)}, {}

    def _route(self, method, parts, query, body):
        """Hand the request to the handler of its first path segment."""
        handler = {
            "hooks": self._hooks, "studies": self._studies, "submissions": self._submissions,
            "bulk-bonus-payments": self._bulk_bonus_payments,
        }.get(parts[0] if parts else "")
        if handler is None:
            raise KeyError("/".join(parts))
        return handler(method, parts[1:], query, body)

    # Studies ----------------------------------------------------------------------------------------
    def _studies(self, method, parts, query, body):
        if not parts and method == "POST":
            return 201, self._create_study(body), {}
        if not parts and method == "GET":
            return 200, {"results": list(self.studies.values())}, {}
        if len(parts) == 1 and method == "GET":
            return 200, self.studies[parts[0]], {}
        if len(parts) == 2 and parts[1] == "transition":
            return 200, self._study_transition(self.studies[parts[0]], body.get("action")), {}
        raise KeyError("studies/" + "/".join(parts))

    def _study_transition(self, study, action):
        if action == "PUBLISH":
            if study["status"] != "UNPUBLISHED":
                raise ValueError("the study is already published")
            study["status"] = "ACTIVE"
            places, reward = int(study["total_available_places"]), Decimal(study["reward"])
            self.charges.append(("study", study["id"], places * (reward + sum(self._fee_and_vat(reward)))))
        elif action == "STOP":
            study["status"] = "COMPLETED"
        else:
            raise ValueError(f"unknown action {action}")
        return study

    # Submissions and bonuses ------------------------------------------------------------------------
    def _submissions(self, method, parts, query, body):
        if not parts and method == "GET":
            return 200, self._submission_page(query), {}
        if parts == ["bonus-payments"] and method == "POST":
            return 201, self._setup_bonus(body), {}
        if len(parts) == 1 and method == "GET":
            return 200, self.submissions[parts[0]], {}
        if len(parts) == 2 and parts[1] == "transition":
            return 200, self._transition(self.submissions[parts[0]], body), {}
        raise KeyError("submissions/" + "/".join(parts))

    def _submission_page(self, query):
        items = [s for s in self.submissions.values() if s["study_id"] == query.get("study")]
        page, size = int(query.get("page", 1)), int(query.get("page_size", 20))
        chunk = items[(page - 1) * size : page * size]
        more = page * size < len(items)
        return {"results": chunk, "_links": {"next": {"href": f"?page={page + 1}" if more else None}}}

    def _bulk_bonus_payments(self, method, parts, query, body):
        if len(parts) != 2 or parts[1] != "pay":
            raise KeyError("bulk-bonus-payments/" + "/".join(parts))
        bulk = self.bulk_bonuses[parts[0]]
        for pid, amount in bulk["rows"]:
            self.paid.append((parts[0], pid, amount))
            for s in self.submissions.values():
                if s["participant_id"] == pid and s["study_id"] == bulk["study"]:
                    s["bonus_payments"].append(int(amount * 100))
        self.charges.append(("bonus", parts[0], bulk["total"]))
        return 202, {}, {}

    def _fee_and_vat(self, cents: Decimal) -> tuple[Decimal, Decimal]:
        """One participant's fee and its VAT on `cents`, each to the hundredth of a cent, half up."""
        hundredth = Decimal("0.01")
        fee = (cents * self.fee_rate).quantize(hundredth, rounding=ROUND_HALF_UP)
        return fee, (fee * self.vat_rate).quantize(hundredth, rounding=ROUND_HALF_UP)

    def charged_cents(self) -> Decimal:
        """Everything taken from the balance so far, in cents (hundredths of a cent kept)."""
        return sum((cents for _what, _id, cents in self.charges), Decimal("0"))

    # Hooks ------------------------------------------------------------------------------------------
    def _hooks(self, method, parts, query, body):
        if parts == ["event-types"] and method == "GET":
            return 200, {"results": ["study.status.change", "submission.status.change"]}, {}
        if parts == ["secrets"] and method in ("GET", "POST"):
            return self._hook_secrets(method, query, body)
        if parts and parts[0] == "subscriptions" and method == "POST":
            return self._subscribe(body) if len(parts) == 1 else self._confirm_subscription(parts[1], body)
        raise KeyError("hooks/" + "/".join(parts))

    def _hook_secrets(self, method, query, body):
        if method == "GET":
            ws = query.get("workspace_id", "")
            found = [{"id": ws, "value": v, "workspace_id": ws} for w, v in self.hook_secrets.items() if w == ws]
            return 200, {"results": found}, {}
        ws = body.get("workspace_id") or ""
        if not ws:
            raise ValueError("workspace_id is required")
        self.hook_secrets[ws] = _oid(self.rng) + _oid(self.rng)  # one active secret per workspace
        return 201, {"id": ws, "value": self.hook_secrets[ws], "workspace_id": ws}, {}

    def _subscribe(self, body):
        for field in ("workspace_id", "event_type", "target_url"):
            if not body.get(field):
                raise ValueError(f"{field} is required")
        if body["workspace_id"] not in self.hook_secrets:
            raise ValueError("create a secret for the workspace first")
        sub = {"id": _oid(self.rng), "is_enabled": False, "confirm": _oid(self.rng), **body}
        self.subscriptions[sub["id"]] = sub
        public = {k: v for k, v in sub.items() if k != "confirm"}
        return 201, public, {"X-Hook-Secret": sub["confirm"]}

    def _confirm_subscription(self, sub_id, body):
        sub = self.subscriptions[sub_id]
        if body.get("secret") != sub["confirm"]:
            raise ValueError("the secret does not match the one sent as X-Hook-Secret")
        sub["is_enabled"] = True
        return 200, {k: v for k, v in sub.items() if k != "confirm"}, {}

    def _status_changed(self, submission):
        """Called under the lock after a submission's status changed: one signed delivery per enabled subscription."""
        for sub in self.subscriptions.values():
            if not sub["is_enabled"] or sub["event_type"] != "submission.status.change":
                continue
            body = json.dumps({
                "resource_id": submission["id"], "event_type": "submission.status.change",
                "participant_id": submission["participant_id"], "status": submission["status"],
            }).encode()
            timestamp = str(int(time.time()))
            digest = hmac.new(self.hook_secrets[sub["workspace_id"]].encode(), timestamp.encode() + body, hashlib.sha256)
            self.deliveries.append({
                "url": sub["target_url"], "body": body,
                "headers": {
                    "Content-Type": "application/json", "X-Event-ID": str(uuid.UUID(int=self.rng.getrandbits(128))),
                    "X-Prolific-Request-Timestamp": timestamp,
                    "X-Prolific-Request-Signature": base64.b64encode(digest.digest()).decode(),
                },
            })

    def deliver(self, session=None) -> list[int]:
        """POST every pending delivery to its target URL over HTTP; the status codes, in order."""
        with self.lock:
            pending, self.deliveries = self.deliveries, []
        http = session or requests
        return [http.post(d["url"], data=d["body"], headers=d["headers"], timeout=30).status_code for d in pending]

    def _create_study(self, body):
        for field in ("name", "external_study_url", "completion_codes", "total_available_places", "reward", "prolific_id_option"):
            if field not in body:
                raise ValueError(f"{field} is required")
        if "{{%PROLIFIC_PID%}}" not in body["external_study_url"]:
            raise ValueError("external_study_url should carry {{%PROLIFIC_PID%}}")
        study = dict(body, id=_oid(self.rng), status="UNPUBLISHED")
        self.studies[study["id"]] = study
        return study

    def _transition(self, submission, body):
        action = body.get("action")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(action)
        if target is None:
            raise ValueError(f"unknown action {action}")
        if submission["status"] == target:
            return submission  # idempotent, as documented
        if submission["status"] != "AWAITING REVIEW":
            raise ValueError(f"cannot {action.lower()} a submission that is {submission['status']}")
        if action == "REJECT":
            if len(body.get("message", "")) < 100:
                raise ValueError("message must be at least 100 characters")
            if not body.get("rejection_category"):
                raise ValueError("rejection_category is required")
        submission["status"] = target
        self._status_changed(submission)
        return submission

    def _setup_bonus(self, body):
        study = self.studies[body["study_id"]]
        rows = []
        for line in body.get("csv_bonuses", "").strip().splitlines():
            pid, amount = line.split(",")
            try:
                value = Decimal(amount.strip())
            except InvalidOperation:
                raise ValueError(f"the bonus {amount!r} is not a decimal amount") from None
            if not value.is_finite() or value <= 0:
                raise ValueError(f"the bonus {amount!r} is not an amount above zero")
            rows.append((pid.strip(), value))
        cents = sum((a * 100 for _, a in rows), Decimal("0"))
        charges = [self._fee_and_vat(a * 100) for _, a in rows]
        fees, vat = sum((f for f, _ in charges), Decimal("0")), sum((v for _, v in charges), Decimal("0"))
        bulk_id = _oid(self.rng)
        self.bulk_bonuses[bulk_id] = {"id": bulk_id, "study": study["id"], "rows": rows, "total": cents + fees + vat}
        return {
            "id": bulk_id, "study": study["id"], "amount": float(cents), "fees": float(fees), "vat": float(vat),
            "total_amount": float(cents + fees + vat),
        }

    # Simulated participants ---------------------------------------------------------------------
    def start_submission(self, study_id, participant_id) -> str:
        with self.lock:
            if self.studies[study_id]["status"] != "ACTIVE":
                raise RuntimeError("the study is not published")
            sid = "".join(self.rng.choice(string.ascii_lowercase + string.digits) for _ in range(24))
            self.submissions[sid] = {
                "id": sid, "study_id": study_id, "participant_id": participant_id, "status": "ACTIVE",
                "started_at": time.time(), "bonus_payments": [],
            }
            return sid

    def complete(self, submission_id):
        self._set_status(submission_id, "AWAITING REVIEW")

    def return_submission(self, submission_id):
        """The participant returns the study (gives the place back)."""
        self._set_status(submission_id, "RETURNED")

    def time_out(self, submission_id):
        """The participant ran out of the study's maximum time."""
        self._set_status(submission_id, "TIMED-OUT")

    def _set_status(self, submission_id, status):
        with self.lock:
            submission = self.submissions[submission_id]
            submission["status"] = status
            self._status_changed(submission)

    def _complete_by_code(self, path, headers):
        """The participant's browser opens the completion URL; Prolific knows them by their own session
        cookie (here `prolific_session=<submission id>`) and checks the code against the study's."""
        code = parse_qs(urlparse(path).query).get("cc", [""])[0]
        cookies = dict(
            part.strip().split("=", 1) for part in (headers.get("Cookie") or headers.get("cookie") or "").split(";")
            if "=" in part
        )
        with self.lock:
            submission = self.submissions.get(cookies.get(SESSION_COOKIE, ""))
            if submission is None:
                return 401, {"error": "log in to Prolific to complete a study"}, {}
            codes = [c.get("code") for c in self.studies[submission["study_id"]].get("completion_codes", [])]
            if code not in codes:
                return 400, {"error": "this completion code does not belong to the study"}, {}
            if submission["status"] == "ACTIVE":
                submission["status"] = "AWAITING REVIEW"
                self._status_changed(submission)
            self.completions.append({"submission": submission["id"], "code": code})
            return 200, {"status": submission["status"]}, {}

    def payments_per_participant(self) -> Counter:
        return Counter(pid for _, pid, _ in self.paid)
