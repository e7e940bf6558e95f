"""The management commands write a figure as the pages do (quorum.numbers: half up from the value the
JSON carries, no sign on zero), so what an organizer copies from a terminal is what the page and
the downloads show. They used Python's format, which rounds the binary value: an alpha of 0.5625
read 0.562 from `agreement` and 0.563 on a page, a DSTC6 precision@1 of 1/32 read 0.0312 from
`score_entries` and 0.0313 on the objective scores page, and an alpha of -2e-16 read "-0.000".
(select_finalists: tests/evaluation/test_finalists_agree.py.)"""
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from quorum import numbers

pytestmark = pytest.mark.django_db

# Two raters on four items; Krippendorff's alpha of these is 0.5625 (interval) exactly in binary.
HALF_WAY = [("i0", "r0", 3), ("i0", "r1", 2), ("i1", "r0", 1), ("i1", "r1", 1), ("i2", "r0", 1), ("i2", "r1", 2), ("i3", "r0", 1), ("i3", "r1", 1)]
# Alpha of these is 0 up to rounding (nominal): -2.2e-16 in binary.
ZERO = [("i0", "r0", 3), ("i0", "r1", 3), ("i1", "r0", 1), ("i1", "r1", 2), ("i2", "r0", 3), ("i2", "r1", 3), ("i3", "r0", 2), ("i3", "r1", 3), ("i4", "r0", 3), ("i4", "r1", 2)]


@pytest.mark.parametrize(("rows", "level"), [(HALF_WAY, "interval"), (ZERO, "nominal")])
def test_the_agreement_command_writes_alpha_as_the_pages_write_the_apis_value(rows, level, organizer_api, tmp_path):
    text = "item,rater,value\n" + "".join(f"{i},{r},{v}\n" for i, r, v in rows)
    path = tmp_path / "ratings.csv"
    path.write_text(text)
    api = organizer_api.post("/api/evaluation/agreement/", {"file": SimpleUploadedFile("r.csv", text.encode()), "level": level, "bootstrap": 0}, format="multipart")
    alpha = api.json()["alpha"]["alpha"]
    out = io.StringIO()
    call_command("agreement", str(path), "--level", level, "--bootstrap", "0", stdout=out)
    printed = re.match(rf"alpha \({level}\) = (\S+) ", out.getvalue()).group(1)
    assert printed == numbers.decimals(alpha)
    assert not printed.startswith("-0.000")


def test_score_entries_writes_dstc6_precision_as_the_objective_scores_page(client, organizer, test_set, tmp_path):
    # 32 dialogs of six candidates, the answer ranked first in one: precision@1 is 1/32 = 0.03125.
    dialogs = [{"dialog_id": f"d{d}", "utterances": ["hi"], "candidates": [{"candidate_id": f"c{i}", "utterance": f"u{i}"} for i in range(1, 7)],
                "answer": {"candidate_id": "c1" if d == 0 else "c6"}} for d in range(32)]
    results = [{"dialog_id": f"d{d}", "lst_candidate_id": [{"candidate_id": f"c{i}", "rank": i} for i in range(1, 7)]} for d in range(32)]
    (tmp_path / "test.json").write_text(json.dumps(dialogs))
    (tmp_path / "results.json").write_text(json.dumps(results))
    client.force_login(organizer)
    page = client.post(
        f"/evaluation/test-sets/{test_set.pk}/objective/dstc6/",
        {"test_set": SimpleUploadedFile("t.json", json.dumps(dialogs).encode()), "results": SimpleUploadedFile("r.json", json.dumps(results).encode())},
    ).content.decode()
    shown = dict(re.findall(r"(precision@\d) (\d\.\d+)", page))
    out = io.StringIO()
    call_command("score_entries", "--dstc6-test-set", str(tmp_path / "test.json"), "--dstc6-results", str(tmp_path / "results.json"), stdout=out)
    printed = dict(re.findall(r"(precision@\d)=(\d\.\d+)", out.getvalue()))
    assert printed == shown
    assert shown["precision@1"] == numbers.decimals(1 / 32, 4)
