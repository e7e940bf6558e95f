"""A fake of MTurk's JSON API (the protocol boto3's `mturk` client speaks), for endpoint_url.

It keeps HITs, assignments and bonuses in memory and behaves like MTurk where Quorum depends on it:
a repeated UniqueRequestToken creates nothing and answers RequestError "already exists" (with or
without the HIT id in the message, to exercise both recoveries); SendBonus deduplicates by token;
settling an assignment twice is refused. It can add latency and throttle a share of the calls
(ThrottlingException, HTTP 400) or fault them (ServiceFault, HTTP 500). Simulated workers accept
HITs through `accept` and submit either through `submit` or, as a browser does, by posting the
form to `<fake url>/mturk/externalSubmit` (recorded in `external_submits`).

Run standalone: `python -m hits.fakes.mturk_server --port 8765` (the benchmark does); `manage.py rehearse`
runs it in-process.
"""
import json
import random
import string
import time
from collections import Counter
from urllib.parse import parse_qs

from .base import FakeServer

TARGET_PREFIX = "MTurkRequesterServiceV20170117."


def _id(rng, n=30):
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(n))


class FakeMTurk(FakeServer):
    def __init__(self, *, latency=0.0, throttle_rate=0.0, fault_rate=0.0, id_in_duplicate_message=True, seed=0, **kw):
        super().__init__(**kw)
        self.latency = latency
        self.throttle_rate = throttle_rate
        self.fault_rate = fault_rate
        self.id_in_duplicate_message = id_in_duplicate_message
        self.rng = random.Random(seed)
        self.hit_types = {}
        self.hits = {}  # HITId -> HIT dict
        self.hit_order = []
        self.tokens = {}  # UniqueRequestToken -> HITId
        self.assignments = {}  # AssignmentId -> assignment dict
        self.bonuses = []  # every bonus paid
        self.bonus_tokens = set()
        self.worker_blocks = {}
        self.granted_qualifications = {}
        self.calls = Counter()
        self.throttled = 0
        self.faulted = 0
        self.duplicates_refused = 0
        self.requests = []  # (operation, params) of every accepted call, for assertions
        self.external_submits = []  # the forms workers posted to /mturk/externalSubmit

    # HTTP ---------------------------------------------------------------------------------------
    def handle(self, method, path, headers, raw):
        if path.startswith("/_control/stats"):
            with self.lock:
                return 200, self.stats(), {}
        if path.startswith("/_control/simulate"):
            # For tests whose Quorum runs in another process: a worker accepts and submits.
            body = json.loads(raw or b"{}")
            assignment_id = self.accept(body["posting"], body["worker"])
            self.submit(assignment_id)
            return 200, {"id": assignment_id}, {}
        if path.startswith("/mturk/externalSubmit"):
            return self._external_submit(method, raw)
        if self.latency:
            time.sleep(self.latency)
        target = headers.get("X-Amz-Target") or headers.get("x-amz-target") or ""
        operation = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else ""
        params = json.loads(raw or b"{}")
        with self.lock:
            self.calls[operation] += 1
            roll = self.rng.random()
            if roll < self.throttle_rate:
                self.throttled += 1
                return 400, {"__type": "ThrottlingException", "message": "Rate exceeded"}, {}
            if roll < self.throttle_rate + self.fault_rate:
                self.faulted += 1
                return 500, {"__type": "ServiceFault", "Message": "Internal service fault"}, {}
            handler = getattr(self, f"op_{operation}", None)
            if handler is None:
                return 400, {"__type": "RequestError", "Message": f"Unsupported operation {operation!r}"}, {}
            self.requests.append((operation, params))
            try:
                return 200, handler(params), {}
            except RequestError as exc:
                return 400, {"__type": "RequestError", "Message": str(exc)}, {}

    def forget_tokens(self):
        """MTurk remembers a UniqueRequestToken for 24 hours only: this is that day passing. A
        repeat of an old call is then carried out again unless the caller looks first."""
        with self.lock:
            self.tokens.clear()
            self.bonus_tokens.clear()

    # Operations ---------------------------------------------------------------------------------
    def op_CreateHITType(self, p):
        key = json.dumps({k: p.get(k) for k in sorted(p)}, sort_keys=True)
        if key not in self.hit_types:
            self.hit_types[key] = _id(self.rng)
        return {"HITTypeId": self.hit_types[key]}

    def _hit_type(self, type_id):
        for key, value in self.hit_types.items():
            if value == type_id:
                return json.loads(key)
        raise RequestError(f"HIT type {type_id} does not exist. ({int(time.time() * 1000)})")

    def _create(self, p, props):
        token = p.get("UniqueRequestToken")
        if token and token in self.tokens:
            self.duplicates_refused += 1
            hit_id = self.tokens[token]
            if self.id_in_duplicate_message:
                raise RequestError(f'The HIT with ID "{hit_id}" already exists. ({int(time.time() * 1000)})')
            raise RequestError(f'The request token "{token}" has already been processed. ({int(time.time() * 1000)})')
        hit_id = _id(self.rng)
        now = time.time()
        hit = {
            "HITId": hit_id,
            "HITTypeId": p.get("HITTypeId", ""),
            "Title": props.get("Title", ""),
            "Description": props.get("Description", ""),
            "Question": p.get("Question", ""),
            "HITStatus": "Assignable",
            "MaxAssignments": int(p.get("MaxAssignments", 1)),
            "Reward": props.get("Reward", "0.00"),
            "CreationTime": now,
            "Expiration": now + int(p.get("LifetimeInSeconds", 0)),
            "RequesterAnnotation": p.get("RequesterAnnotation", ""),
            "QualificationRequirements": props.get("QualificationRequirements", []),
            "NumberOfAssignmentsPending": 0,
            "NumberOfAssignmentsAvailable": int(p.get("MaxAssignments", 1)),
            "NumberOfAssignmentsCompleted": 0,
        }
        self.hits[hit_id] = hit
        self.hit_order.append(hit_id)
        if token:
            self.tokens[token] = hit_id
        return {"HIT": hit}

    def op_CreateHITWithHITType(self, p):
        return self._create(p, self._hit_type(p["HITTypeId"]))

    def op_CreateHIT(self, p):
        return self._create(p, p)

    def op_GetHIT(self, p):
        if p["HITId"] not in self.hits:
            raise RequestError(f"Hit {p['HITId']} does not exist.")
        return {"HIT": self.hits[p["HITId"]]}

    def op_UpdateExpirationForHIT(self, p):
        hit = self.hits.get(p["HITId"])
        if hit is None:
            raise RequestError(f"Hit {p['HITId']} does not exist.")
        hit["Expiration"] = p["ExpireAt"]
        hit["HITStatus"] = "Unassignable"
        return {}

    def _page(self, items, p, key):
        start = int(p.get("NextToken") or 0)
        size = int(p.get("MaxResults") or 10)
        chunk = items[start : start + size]
        out = {key: chunk, "NumResults": len(chunk)}
        if start + size < len(items):
            out["NextToken"] = str(start + size)
        return out

    def op_ListHITs(self, p):
        return self._page([self.hits[h] for h in self.hit_order], p, "HITs")

    def op_ListAssignmentsForHIT(self, p):
        statuses = set(p.get("AssignmentStatuses") or ["Submitted", "Approved", "Rejected"])
        items = [
            a for a in self.assignments.values()
            if a["HITId"] == p["HITId"] and a["AssignmentStatus"] in statuses
        ]
        return self._page(items, p, "Assignments")

    def op_GetAssignment(self, p):
        a = self.assignments.get(p["AssignmentId"])
        # MTurk shows an assignment only once submitted (the service model's statuses are Submitted,
        # Approved and Rejected): one a worker is still working on is not there yet.
        if a is None or a["AssignmentStatus"] == "Accepted":
            raise RequestError(f"Assignment {p['AssignmentId']} does not exist.")
        return {"Assignment": a, "HIT": self.hits[a["HITId"]]}

    def _settle(self, p, status):
        a = self.assignments.get(p["AssignmentId"])
        if a is None:
            raise RequestError(f"Assignment {p['AssignmentId']} does not exist.")
        if a["AssignmentStatus"] != "Submitted" and not (status == "Approved" and p.get("OverrideRejection")):
            raise RequestError(
                f"This operation can be called with a status of: Submitted ({int(time.time() * 1000)})"
            )
        a["AssignmentStatus"] = status
        a["RequesterFeedback"] = p.get("RequesterFeedback", "")
        a["ApprovalTime" if status == "Approved" else "RejectionTime"] = time.time()
        return {}

    def op_ApproveAssignment(self, p):
        return self._settle(p, "Approved")

    def op_RejectAssignment(self, p):
        return self._settle(p, "Rejected")

    def op_SendBonus(self, p):
        token = p.get("UniqueRequestToken")
        if token and token in self.bonus_tokens:
            raise RequestError(f'The idempotency token "{token}" has already been processed. ({int(time.time() * 1000)})')
        a = self.assignments.get(p["AssignmentId"])
        if a is None or a["WorkerId"] != p["WorkerId"]:
            raise RequestError("The assignment does not belong to this worker.")
        if token:
            self.bonus_tokens.add(token)
        self.bonuses.append({
            "WorkerId": p["WorkerId"], "BonusAmount": p["BonusAmount"], "AssignmentId": p["AssignmentId"],
            "Reason": p.get("Reason", ""), "GrantTime": time.time(), "Token": token,
        })
        return {}

    def op_ListBonusPayments(self, p):
        items = [
            {k: v for k, v in b.items() if k != "Token"} for b in self.bonuses
            if b["AssignmentId"] == p.get("AssignmentId") or self.assignments.get(b["AssignmentId"], {}).get("HITId") == p.get("HITId")
        ]
        return self._page(items, p, "BonusPayments")

    def op_AssociateQualificationWithWorker(self, p):
        self.granted_qualifications.setdefault(p["QualificationTypeId"], {})[p["WorkerId"]] = p.get("IntegerValue", 1)
        return {}

    def op_CreateWorkerBlock(self, p):
        self.worker_blocks[p["WorkerId"]] = p["Reason"]
        return {}

    # Simulated workers --------------------------------------------------------------------------
    def _external_submit(self, method, raw):
        """The worker's form POST to turkSubmitTo/mturk/externalSubmit, as MTurk's worker site takes it."""
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        assignment_id = form.get("assignmentId", "")
        with self.lock:
            a = self.assignments.get(assignment_id)
            if method != "POST" or a is None:
                return 400, {"error": "post the form with the assignmentId of an accepted assignment"}, {}
            if a["AssignmentStatus"] != "Accepted":
                return 409, {"error": f"the assignment is already {a['AssignmentStatus'].lower()}"}, {}
            self.external_submits.append(form)
        self.submit(assignment_id)
        return 200, {"submitted": assignment_id}, {}

    def accept(self, hit_id, worker_id) -> str:
        """A worker accepts a HIT: an assignment that MTurk does not list until it is submitted."""
        with self.lock:
            hit = self.hits[hit_id]
            if hit["NumberOfAssignmentsAvailable"] < 1:
                raise RuntimeError("no assignment left on this HIT")
            if any(a["HITId"] == hit_id and a["WorkerId"] == worker_id for a in self.assignments.values()):
                raise RuntimeError("a worker takes one assignment per HIT")
            assignment_id = _id(self.rng)
            now = time.time()
            self.assignments[assignment_id] = {
                "AssignmentId": assignment_id, "WorkerId": worker_id, "HITId": hit_id,
                "AssignmentStatus": "Accepted", "AcceptTime": now, "AutoApprovalTime": now + 3 * 86400,
                "Answer": "",
            }
            hit["NumberOfAssignmentsAvailable"] -= 1
            hit["NumberOfAssignmentsPending"] += 1
            return assignment_id

    def submit(self, assignment_id):
        """The worker's browser posts to /mturk/externalSubmit."""
        with self.lock:
            a = self.assignments[assignment_id]
            a["AssignmentStatus"] = "Submitted"
            a["SubmitTime"] = time.time()
            hit = self.hits[a["HITId"]]
            hit["NumberOfAssignmentsPending"] -= 1
            hit["NumberOfAssignmentsCompleted"] += 1

    # Counts for assertions ----------------------------------------------------------------------
    def duplicate_hits(self) -> int:
        """HITs beyond the first for the same RequesterAnnotation: what a non-idempotent client creates."""
        counts = Counter(h["RequesterAnnotation"] for h in self.hits.values())
        return sum(n - 1 for n in counts.values() if n > 1)

    def stats(self) -> dict:
        return {
            "calls": sum(self.calls.values()), "throttled": self.throttled, "faulted": self.faulted,
            "duplicates_refused": self.duplicates_refused, "hits": len(self.hits), "duplicates": self.duplicate_hits(),
        }

    def bonuses_per_assignment(self) -> Counter:
        return Counter(b["AssignmentId"] for b in self.bonuses)


class RequestError(Exception):
    pass


def main(argv=None):  # pragma: no cover - the benchmark runs the fake in its own process
    import argparse

    parser = argparse.ArgumentParser(description="A fake MTurk endpoint; prints its URL on the first line.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--throttle", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    fake = FakeMTurk(port=args.port, latency=args.latency, throttle_rate=args.throttle, seed=args.seed).start()
    print(fake.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
