"""FED questionnaires (DSTC9 Track 3): the presets' questions and scales, N/A with a reason, static
sets from JSONL, frozen transcripts of chats, the offensive-word filter and its review queue."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation import task_types
from annotation.models import Response, Slot
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.errors import EvaluationInputError
from evaluation.fed import selectors
from evaluation.fed.dataset import StaticSetError, parse
from evaluation.fed.results import run_fed_results
from evaluation.fed.services import create_fed_set_from_chats, import_fed_static, launch_fed_job, review_candidate
from evaluation.interactive.offensive import WordListError, load_words, matcher
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from evaluation.models import FedCandidate, FedSet

from .systems import running

CONTEXT = [{"speaker": "user", "text": "Hi! Any plans for the weekend?"}]


def _line(context_id, responses, **extra):
    return json.dumps({"context_id": context_id, "context": CONTEXT, "responses": responses, **extra})


STATIC = "\n".join([
    _line("c1", {"bot-a": "Hiking, you?", "bot-b": "I don't know."}),
    _line("c2", {"bot-a": "Reading a book.", "bot-b": "Shut up, you idiot."}),
]).encode()


def test_the_fed_presets_have_the_published_questions_and_scales():
    fields = task_types.get("fed_dialog").answer_fields(task_types.get("fed_dialog").clean_settings({}))
    assert [f["name"] for f in fields if "choices" not in f] == ["error_recovery_na_reason"]  # a text field of its own
    dialog = [f for f in fields if "choices" in f]
    assert [f["name"] for f in dialog] == [
        "coherent", "error_recovery", "consistent", "diverse", "topic_depth", "likeable", "understanding", "flexible",
        "informative", "inquisitive", "overall",
    ]
    scales = {f["name"]: [a["label"] for a in f["anchors"]] for f in dialog}
    assert scales["coherent"] == ["No", "Somewhat", "Yes"] and scales["consistent"] == ["No", "Yes"]
    assert [a["value"] for a in dialog[-1]["anchors"]] == [1, 2, 3, 4, 5]
    assert [f["name"] for f in dialog if f["allows_na"]] == ["error_recovery"]
    turn = task_types.get("fed_turn").answer_fields(task_types.get("fed_turn").clean_settings({}))
    assert [f["name"] for f in turn] == [
        "interesting", "engaging", "specific", "relevant", "correct", "semantically_appropriate", "understandable", "fluent", "overall",
    ]
    assert {f["name"]: len(f["anchors"]) for f in turn}["understandable"] == 2


def test_na_needs_a_reason_and_only_where_allowed():
    kind = task_types.get("fed_dialog")
    settings = kind.clean_settings({})
    answers = {f["name"]: "2" for f in kind.answer_fields(settings) if "choices" in f}
    cleaned, problems = kind.validate({}, settings, {**answers, "error_recovery": "na"})
    assert [p.field for p in problems] == ["error_recovery_na_reason"]
    cleaned, problems = kind.validate({}, settings, {**answers, "error_recovery": "na", "error_recovery_na_reason": " It made no error. "})
    assert not problems and cleaned["error_recovery"] is None and cleaned["error_recovery_na_reason"] == "It made no error."
    assert "error_recovery" not in kind.agreement_values(cleaned, settings)  # N/A is missing, not a value
    assert kind.combine([cleaned, {**cleaned, "error_recovery": 3}], settings)["error_recovery"] == 3  # left out of the mean
    _cleaned, problems = kind.validate({}, settings, {**answers, "coherent": "na", "coherent_na_reason": "why not"})
    assert [p.field for p in problems] == ["coherent"]  # coherent has no N/A


@pytest.mark.parametrize("setting, error", [([1], "entry 1"), ("", "must be a list"), ("/nonexistent/words.txt", "'words.txt' cannot be read")])
def test_bad_word_lists_are_refused(setting, error):
    with pytest.raises(WordListError, match=error):
        load_words(setting)


def test_the_word_filter_matches_whole_words_any_case_plurals_and_phrases(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("# house list\nidiot\nCrap  # mild\nshut up\n\n", encoding="utf-8")
    find = matcher(load_words(str(path)))
    assert load_words(str(path)) == ["crap", "idiot", "shut up"]
    assert find("You IDIOTS! Shut   up.") == ["idiot", "shut up"]
    assert find("My scrapbook of idiotic crapshoots") == []  # not inside other words


@pytest.mark.parametrize("line, error", [
    ("not json", "line 1: not a JSON object"),
    (_line("c1", {"bot-a": "x"}, system="bot-a"), "line 1: unknown field(s) 'system'; the fields are context_id, context, responses"),
    (json.dumps({"context_id": "c1", "context": CONTEXT}), "line 1: missing responses"),
    (_line("c1", {"bot-a": ""}), "line 1: response of 'bot-a' must be a non-empty text"),
    (_line("c1", {"bot-a": "x"}).replace('"user"', '"narrator"'), "line 1: context turn 0"),
    ('{"context_id": "c1", "context": [], "responses": {"a": NaN}}', "line 1: not a JSON object"),
])
def test_bad_static_lines_are_named(line, error):
    with pytest.raises(StaticSetError) as caught:
        parse(line.encode())
    assert str(caught.value).startswith(error)


def test_every_context_needs_the_same_systems_and_ids_are_unique():
    with pytest.raises(StaticSetError, match=r"line 3: every context needs a response from the same systems .* 'bot-c'"):
        parse("\n".join([_line("c1", {"bot-a": "x", "bot-b": "y"}), "", _line("c2", {"bot-a": "x", "bot-c": "y"})]).encode())
    with pytest.raises(StaticSetError, match="line 2: context_id 'c1' is used on line 1 already"):
        parse("\n".join([_line("c1", {"bot-a": "x"}), _line("c1", {"bot-a": "y"})]).encode())


def test_a_bad_static_file_writes_nothing(db):
    with pytest.raises(EvaluationInputError, match="line 3: not a JSON object"):
        import_fed_static(name="s", jsonl=STATIC + b"\n{")
    assert not FedSet.objects.exists() and not FedCandidate.objects.exists()


def test_flagged_items_wait_for_review_and_dropped_ones_never_reach_raters(db):
    fed_set = import_fed_static(name="static", jsonl=STATIC)
    candidates = list(fed_set.candidates.order_by("position"))
    assert [(c.system, c.review) for c in candidates] == [("bot-a", "clean"), ("bot-b", "clean"), ("bot-a", "clean"), ("bot-b", "pending")]
    flagged = candidates[3]
    assert flagged.flagged_words == ["idiot", "shut up"]
    assert flagged.payload == {"dialog": [*CONTEXT, {"speaker": "system", "text": "Shut up, you idiot."}]}  # no system name
    with pytest.raises(EvaluationInputError, match="1 flagged item"):
        launch_fed_job(fed_set)
    with pytest.raises(EvaluationInputError, match="nothing to review"):
        review_candidate(candidates[0], keep=False)
    review_candidate(flagged, keep=False)
    job = launch_fed_job(fed_set)
    assert job.task_type == "fed_dialog" and job.items.count() == 3
    assert Slot.objects.filter(job=job).count() == 9  # 3 raters each
    assert not any("idiot" in json.dumps(i.payload) for i in job.items.all())
    flagged.refresh_from_db()
    assert flagged.item is None and flagged.review == "dropped"
    with pytest.raises(EvaluationInputError, match="launched already"):
        review_candidate(flagged, keep=True)


def test_turn_level_static_set_and_results_leave_na_out(db, make_annotator, settings, organizer):
    settings.QUORUM_OFFENSIVE_WORDS = ["weekend"]  # the setting replaces the default list
    fed_set = import_fed_static(name="static", jsonl=STATIC, level="turn")
    assert set(fed_set.candidates.values_list("review", flat=True)) == {"pending"}  # every context says "weekend"
    for c in fed_set.candidates.all():
        review_candidate(c, keep=True)
    job = launch_fed_job(fed_set, raters=1)
    assert job.task_type == "fed_turn" and job.items.first().payload["response"] == "Hiking, you?"
    fields = task_types.get("fed_turn").answer_fields(job.settings)
    user, worker = make_annotator("r")
    client = Client()
    client.force_login(user)
    for _n in range(4):
        slot = claim_next_slot(job=job, worker=worker)
        answers = {f["name"]: str(list(f["choices"])[-1 if slot.item.payload["response"] != "I don't know." else 0]) for f in fields}
        assert client.post(reverse("work", args=[make_token(slot)]), answers).status_code == 302
    rows = {r["system"]: r for r in selectors.fed_results(FedSet.objects.get(pk=fed_set.pk))}
    assert rows["bot-a"]["items"] == 2 and rows["bot-a"]["questions"][0] == {"name": "interesting", "label": "Interesting", "mean": 3.0, "n": 2, "na": 0, "low": 3.0, "high": 3.0, "ci_clipped": False, "coding": "1 = No, 2 = Somewhat, 3 = Yes"}
    assert rows["bot-b"]["questions"][0]["mean"] == 2.0  # one 1 ("I don't know.") and one 3
    listed = [q["name"] for q in rows["bot-a"]["questions"]]
    assert listed and not any(name.endswith("_na_reason") for name in listed)  # questions only
    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    assert listed == [f["name"] for f in fields if f.get("choices")]
    org = Client()
    org.force_login(organizer)
    page = org.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert '3.000 <span class="interval">[3.000, 3.000]</span>' in page  # bot-a: every answer 3 on two dialogs
    assert f'href="/organize/jobs/{job.pk}/"' in page and "4 of 4 ratings collected" in page


def chats_completed(make_annotator, names, *, job_name="chat", workers=("w",)):
    """A chat job over reference systems called `names` (one goal), with a dialog completed and judged by each of `workers`."""
    goals = import_goals(name="g", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n',
                         databases={"restaurant": json.dumps(RESTAURANTS).encode()})
    with running(ReferenceSystem("a-secret-of-twenty-chars")) as url:
        systems = [register_system(name=name, url=url, secret="a-secret-of-twenty-chars") for name in names]
        chat = create_chat_job(name=job_name, systems=systems, goal_set=goals)
        for name in workers:
            user, worker = make_annotator(name)
            client = Client()
            client.force_login(user)
            token = make_token(claim_next_slot(job=chat, worker=worker))
            chat_url = reverse("work-chat", args=[token])
            client.post(chat_url, {"action": "open"}, content_type="application/json")
            client.post(chat_url, {"action": "say", "text": "chinese food please"}, content_type="application/json")
            client.post(reverse("work", args=[token]), {"outcome": "success", "understanding": "4", "understanding_reason": "ok",
                                                        "appropriateness": "4", "appropriateness_reason": "ok"})
    return chat


def test_frozen_transcripts_of_chats_at_dialog_and_turn_level_and_na_through_the_page(db, make_annotator, organizer):
    chat = chats_completed(make_annotator, ["ref"])
    transcript = Response.objects.get().answers["transcript"]
    dialog_set = create_fed_set_from_chats(name="dialogs", chat_job=chat)
    turn_set = create_fed_set_from_chats(name="turns", chat_job=chat, level="turn")
    assert dialog_set.candidates.get().payload["dialog"][1] == {"speaker": "user", "text": "chinese food please"}
    assert dialog_set.candidates.get().system == "ref" and len(dialog_set.candidates.get().payload["dialog"]) == len(transcript)
    assert turn_set.candidates.count() == 1  # the reply to the user's turn (the opening has no context)
    with pytest.raises(EvaluationInputError, match="exists already"):
        create_fed_set_from_chats(name="dialogs", chat_job=chat)

    job = launch_fed_job(dialog_set, raters=1)
    rater, rater_worker = make_annotator("rater")
    client = Client()
    client.force_login(rater)
    token = make_token(claim_next_slot(job=job, worker=rater_worker))
    page = client.get(reverse("work", args=[token])).content.decode()
    assert 'id="rated-dialog"' in page and "chinese food please" in page and "ref" not in page.split('id="rated-dialog"')[1].split("</ol>")[0]
    assert "<kbd>a</kbd> answers N/A" in page  # error recovery offers N/A, so the key hint says how
    answers = {f["name"]: "2" for f in task_types.get("fed_dialog").answer_fields(job.settings) if "choices" in f}
    refused = client.post(reverse("work", args=[token]), {**answers, "error_recovery": "na"})
    assert refused.status_code == 400 and "say why it does not apply" in refused.content.decode()
    assert client.post(reverse("work", args=[token]), {**answers, "error_recovery": "na", "error_recovery_na_reason": "no errors"}).status_code == 302
    row, = selectors.fed_results(FedSet.objects.get(pk=dialog_set.pk))
    recovery = next(q for q in row["questions"] if q["name"] == "error_recovery")
    assert recovery == {"name": "error_recovery", "label": "Error recovery", "mean": None, "n": 0, "na": 1, "low": None, "high": None, "ci_clipped": False, "coding": "1 = No, 2 = Somewhat, 3 = Yes"}
    run_fed_results(dialog_set.pk)  # the background computation the answers asked for

    org = Client()
    org.force_login(organizer)
    page = org.get(reverse("evaluation:fed-set", args=[dialog_set.pk])).content.decode()
    assert 'id="fed-results"' in page and "N/A 1" in page


def test_pages_and_command(db, organizer, tmp_path):
    client = Client()
    client.force_login(organizer)
    assert client.get(reverse("evaluation:fed-sets")).status_code == 200
    bad_file = tmp_path / "bad.jsonl"
    bad_file.write_bytes(STATIC + b'\n{"context_id": "c3"}')
    with bad_file.open("rb") as fh:
        answer = client.post(reverse("evaluation:fed-static"), {"name": "s", "level": "dialog", "jsonl": fh})
    assert answer.status_code == 400 and "line 3: missing context, responses" in answer.content.decode() and not FedSet.objects.exists()
    good = tmp_path / "good.jsonl"
    good.write_bytes(STATIC)
    with good.open("rb") as fh:
        answer = client.post(reverse("evaluation:fed-static"), {"name": "s", "level": "dialog", "jsonl": fh})
    fed_set = FedSet.objects.get(name="s")
    assert answer.status_code == 302
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert "<mark>idiot</mark>" in page and "Shut up, you idiot." in page
    flagged = fed_set.candidates.get(review="pending")
    assert client.post(reverse("evaluation:fed-launch", args=[fed_set.pk]), {"raters": 3, "reward": "0.2"}).status_code == 400
    client.post(reverse("evaluation:fed-review", args=[fed_set.pk, flagged.pk]), {"decision": "drop"})
    assert client.post(reverse("evaluation:fed-launch", args=[fed_set.pk]), {"raters": 3, "reward": "0.2"}).status_code == 302
    assert FedSet.objects.get(pk=fed_set.pk).job.items.count() == 3

    out = StringIO()
    call_command("create_fed_set", "cmd", "--static", str(good), "--level", "turn", stdout=out)
    assert "4 to rate, 1 flagged for review" in out.getvalue()
    with pytest.raises(CommandError, match="1 flagged item"):
        call_command("create_fed_set", "cmd2", "--static", str(good), "--launch", stdout=StringIO())
    with pytest.raises(CommandError, match="line 3: missing context, responses"):
        call_command("create_fed_set", "cmd3", "--static", str(bad_file))
    with pytest.raises(CommandError, match="--chat-job: no interactive job with id 999"):
        call_command("create_fed_set", "cmd4", "--chat-job", "999")


def test_the_combined_mean_is_per_scale_when_questions_have_different_scales():
    fed = task_types.get("fed_dialog")
    settings = fed.clean_settings({})
    fields = [f for f in fed.answer_fields(settings) if "choices" in f]
    top = {f["name"]: max(f["choices"]) for f in fields}  # every question at the top of its scale
    bottom = {f["name"]: min(f["choices"]) for f in fields}
    combined = fed.combine([top, bottom], settings)
    assert combined["mean"] is None  # 1-2, 1-3 and 1-5 are not averaged together
    assert combined["mean_1_2"] == 1.5 and combined["mean_1_3"] == 2.0 and combined["mean_1_5"] == 3.0
    assert combined["mean_normalised"] == 0.5
    likert = task_types.get("likert")
    one_scale = likert.clean_settings({})
    names = [f["name"] for f in likert.answer_fields(one_scale) if "choices" in f]
    assert likert.combine([dict.fromkeys(names, 4), dict.fromkeys(names, 2)], one_scale)["mean"] == 3.0  # one scale: the plain mean


def test_agreement_per_question_is_krippendorffs_ordinal_alpha_of_the_raters(db, make_annotator, settings, organizer):
    import krippendorff

    from annotation.services.claims import submit_response

    settings.QUORUM_OFFENSIVE_WORDS = ["zebra"]  # nothing in STATIC: no review needed
    fed_set = import_fed_static(name="agreed", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=2)
    fields = [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if "choices" in f]
    coherent = {"ann": [1, 2, 3, 3], "bea": [1, 2, 3, 2]}  # by item position
    for name in coherent:
        _user, worker = make_annotator(name)
        for _n in range(4):
            slot = claim_next_slot(job=job, worker=worker)
            answers = {f["name"]: list(f["choices"])[0] for f in fields}
            answers["coherent"] = coherent[name][slot.item.position]
            submit_response(slot_id=slot.pk, worker=worker, answers=answers)
    rows = {a["name"]: a for a in selectors.fed_agreement(FedSet.objects.get(pk=fed_set.pk))}
    expected = krippendorff.alpha(reliability_data=[coherent["ann"], coherent["bea"]], level_of_measurement="ordinal", value_domain=[1, 2, 3])
    coherent_alpha = rows["coherent"]
    withheld = f"{expected:.3f} (no interval: too few units, 4 of the 30 needed)"  # four items: no 95% interval
    assert coherent_alpha["defined"] and coherent_alpha["shown"] == withheld and coherent_alpha["units"] == 4
    assert coherent_alpha["alpha"] == pytest.approx(expected, abs=1e-4) and coherent_alpha["ci_low"] is None
    assert not rows["diverse"]["defined"] and rows["diverse"]["alpha"] is None  # every answer the same: nothing to agree beyond chance
    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    page = Client()
    page.force_login(organizer)
    body = page.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert 'id="fed-agreement"' in body and withheld in body


def _csv_rows(text):
    import csv

    return list(csv.DictReader(StringIO(text)))


def test_results_download_and_api_give_the_pages_figures(db, make_annotator, settings, organizer):
    from annotation.services.claims import submit_response

    settings.QUORUM_OFFENSIVE_WORDS = ["zebra"]
    fed_set = import_fed_static(name="published", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=2)
    fields = [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if "choices" in f]
    for name, shift in (("ann", 0), ("bea", 1)):
        _user, worker = make_annotator(name)
        for _n in range(4):
            slot = claim_next_slot(job=job, worker=worker)
            answers = {f["name"]: list(f["choices"])[0] for f in fields}
            answers["coherent"] = 1 + (slot.item.position + shift) % 3
            submit_response(slot_id=slot.pk, worker=worker, answers=answers)
    run_fed_results(fed_set.pk)  # the background computation the answers asked for
    results, agreement = selectors.fed_report(FedSet.objects.get(pk=fed_set.pk))
    client = Client()
    client.force_login(organizer)
    download = client.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk]))
    assert download.status_code == 200 and download["Content-Disposition"] == f'attachment; filename="fed-{fed_set.pk}-results.csv"'
    rows = _csv_rows(download.content.decode())
    means = {(r["system"], r["question"]): r for r in rows if r["statistic"] == "mean"}
    assert len(means) == len(results) * len(fields)  # every system and question
    for system in results:
        for q in system["questions"]:
            row = means[(system["system"], q["name"])]
            assert float(row["value"]) == pytest.approx(q["mean"], abs=1e-4) and int(row["answers"]) == q["n"] == 4
            assert int(row["items"]) == system["items"] == 2
            # The CSV carries the full value; the page rounds it (quorum.numbers).
            assert (row["ci_low"], row["ci_high"]) == (("", "") if q["low"] is None else (repr(float(q["low"])), repr(float(q["high"]))))
    alphas = {r["question"]: r for r in rows if r["statistic"] == "krippendorff_alpha_ordinal"}
    assert set(alphas) == {f["name"] for f in fields}
    coherent = next(a for a in agreement if a["name"] == "coherent")
    assert float(alphas["coherent"]["value"]) == pytest.approx(coherent["alpha"], abs=1e-4) and alphas["coherent"]["items"] == "4"
    assert alphas["diverse"]["value"] == ""  # undefined: no figure rather than a made-up one
    page = client.get(reverse("evaluation:fed-set", args=[fed_set.pk])).content.decode()
    assert reverse("evaluation:fed-results-csv", args=[fed_set.pk]) in page

    api = reverse("evaluation-api:fed-results", args=[fed_set.pk])
    body = client.get(api).json()
    assert body["job"] == job.pk and body["level"] == "dialog" and body["results"] == results and body["agreement"] == agreement
    as_csv = client.get(api, {"format": "csv"})
    assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv") and as_csv.content == download.content
    refused = client.get(api, {"format": "xlsx"})
    assert refused.status_code == 400 and "format must be one of json, csv" in refused.json()["format"][0]
    assert client.get(reverse("evaluation-api:fed-results", args=[fed_set.pk + 99])).status_code == 404
    annotator = Client()
    annotator.force_login(make_annotator("cat")[0])
    assert annotator.get(api).status_code == 403
    assert annotator.get(reverse("evaluation:fed-results-csv", args=[fed_set.pk])).status_code in (302, 403)


def test_a_system_name_that_looks_like_a_formula_is_written_as_text():
    from evaluation.fed.results_file import results_csv

    results = [{"system": "=cmd()", "items": 1, "questions": [{"name": "coherent", "mean": 2.0, "n": 1, "na": 0, "low": None, "high": None, "ci_clipped": False, "coding": "1 = No, 2 = Somewhat, 3 = Yes"}]}]
    row, = _csv_rows(results_csv(results, []))
    assert row["system"] == "'=cmd()" and row["value"] == "2.0" and row["ci_low"] == ""
