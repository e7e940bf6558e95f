"""A small DSTC9-shaped test set written for the crowd-campaign tests: system outputs whose texts
never name their system, so a test can look for system identities on the raters' pages."""
import json

from annotation.services.claims import claim_next_slot, submit_response

# Team and entry ids that must never reach a rater's page.
IDENTITIES = ["team-alpha", "sub-a1", "team-beta", "sub-b7", "baseline-team", "base-0", "reference-team", "gold-entry"]

KNOWLEDGE = {
    "hotel": {
        "1": {
            "name": "Birch House",
            "docs": {
                "0": {"title": "Are pets allowed?", "body": "Dogs under 10 kg are welcome for a small fee."},
                "1": {"title": "Is there parking?", "body": "Free parking is available on site."},
                "2": {"title": "When is check-in?", "body": "Check-in starts at 3 pm."},
            },
        }
    }
}
SEEKING = [0, 1, 2, 4]  # knowledge-seeking instances in the ground truth
N = 6


def _labels():
    labels = []
    for i in range(N):
        if i in SEEKING:
            labels.append({"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": SEEKING.index(i) % 3}], "response": f"Reference reply number {i}."})
        else:
            labels.append({"target": False})
    return labels


def _logs():
    return [
        [
            {"speaker": "U", "text": "I am looking for a guesthouse in the north."},
            {"speaker": "S", "text": "Birch House is a guesthouse in the north."},
            {"speaker": "U", "text": f"Question {i} about Birch House, please?"},
        ]
        for i in range(N)
    ]


def _outputs(wording, undetected=()):
    return [
        {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": 0}], "response": f"{wording} reply {i}."}
        if i in SEEKING and i not in undetected
        else {"target": False}
        for i in range(N)
    ]


def write_files(directory):
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in {"labels.json": _labels(), "knowledge.json": KNOWLEDGE, "logs.json": _logs()}.items():
        (directory / name).write_text(json.dumps(data))
    outputs = {
        ("team-alpha", "sub-a1"): _outputs("Cheerful"),
        ("team-beta", "sub-b7"): _outputs("Terse", undetected=(2,)),
        ("baseline-team", "base-0"): _outputs("Plain"),
    }
    for (team, entry), data in outputs.items():
        (directory / team).mkdir(exist_ok=True)
        (directory / team / f"{entry}.json").write_text(json.dumps(data))
    return directory


def make_test_set(directory, with_logs=True, name="crowd-test"):
    """(test_set, finalists): the two competing entries; the baseline and the ground truth exist as reference rows."""
    from evaluation.campaigns.services.imports import add_ground_truth_entry, import_entry, import_test_set

    write_files(directory)
    test_set = import_test_set(
        "DSTC9 Track 1", name, directory / "labels.json", directory / "knowledge.json", directory / "logs.json" if with_logs else None
    )
    alpha = import_entry(test_set, "team-alpha", "sub-a1", directory / "team-alpha" / "sub-a1.json")
    beta = import_entry(test_set, "team-beta", "sub-b7", directory / "team-beta" / "sub-b7.json")
    import_entry(test_set, "baseline-team", "base-0", directory / "baseline-team" / "base-0.json", is_baseline=True)
    add_ground_truth_entry(test_set, "reference-team", "gold-entry")
    return test_set, [alpha, beta]


def rating_for(entry_label, instance, worker_name, question):
    """A deterministic, varied rating, so that results depend on every input."""
    return 1 + (len(entry_label) * 3 + instance * 7 + sum(map(ord, worker_name)) + (2 if question == "accuracy" else 0)) % 5


def rate_everything(job, worker, capture):
    """The worker claims and answers every item open to them; returns the items in the order met.
    `capture` is pytest-django's django_capture_on_commit_callbacks (the signal is sent on commit)."""
    from evaluation.models import CampaignItem

    met = []
    while True:
        slot = claim_next_slot(job=job, worker=worker)
        if slot is None:
            return met
        pair = CampaignItem.objects.select_related("entry__team").get(item_id=slot.item_id)
        answers = {q: rating_for(pair.entry.label, pair.instance, worker.external_id, q) for q in ("appropriateness", "accuracy")}
        with capture(execute=True):
            submit_response(slot_id=slot.pk, worker=worker, answers=answers)
        met.append(slot.item_id)
