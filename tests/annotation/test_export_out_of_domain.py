"""RADDLE's out-of-domain set as an export option: user turns replaced or interleaved, by seed and
rate, with utterances of another imported corpus, labelled in the corpus's own format, with the
mapping in the manifest; bad options refused before anything is recorded or written."""
import json
import math

import pytest

from annotation.exporters import ExportError
from annotation.exporters.base import OOS_REPLY, OOS_TURN, DialogRecord, TurnRecord
from annotation.exporters.out_of_domain import PoolUtterance, mix
from annotation.models import Corpus, ExportRun, RunStatus
from annotation.services.export_ood import OutOfDomain
from annotation.services.exports import export_job, start_export
from tests.annotation.test_exports import MULTIWOZ_RAW_SYSTEM, MULTIWOZ_RAW_USER, make_dialog, make_job

POOL = [PoolUtterance(f"o{i}", 0, f"what is the tallest mountain number {i}") for i in range(50)]


def _dialogs(count, user_turns=5):
    dialogs = []
    for d in range(count):
        turns = []
        for t in range(user_turns):
            turns.append(TurnRecord(2 * t, "user", f"book a table d{d} t{t}", [{"slot": "area", "value": "centre"}], {}))
            turns.append(TurnRecord(2 * t + 1, "system", f"which area d{d} t{t}", [], {}))
        dialogs.append(DialogRecord(f"d{d}", {}, turns))
    return dialogs


# --- the mixing, pure -------------------------------------------------------------------------------


def test_replace_mixes_the_share_asked_for_and_the_seed_fixes_which():
    dialogs = _dialogs(400)  # 2,000 user turns
    mixed, mapping = mix(dialogs, POOL, rate=0.3, seed=7, mode="replace")
    share = len(mapping) / 2000
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / 2000)  # four standard errors of a binomial share
    again, mapping_again = mix(dialogs, POOL, rate=0.3, seed=7, mode="replace")
    assert mapping_again == mapping and again == mixed
    _, other = mix(dialogs, POOL, rate=0.3, seed=8, mode="replace")
    assert other != mapping
    # Replacing keeps every dialog's length and speakers; each new turn is labelled, its slots dropped.
    for before, after in zip(dialogs, mixed, strict=True):
        assert [t.speaker for t in after.turns] == [t.speaker for t in before.turns]
    by_dialog = {d.external_id: d for d in mixed}
    pool_texts = {u.text: u for u in POOL}
    for row in mapping:
        turn = by_dialog[row["dialog"]].turns[row["position"]]
        assert turn.inserted == OOS_TURN and turn.slot_values == [] and turn.text == row["text"]
        assert pool_texts[row["text"]].dialog == row["source_dialog"]
        assert row["replaced_text"].startswith("book a table")
    untouched = [t for d in mixed for t in d.turns if t.speaker == "user" and not t.inserted]
    assert len(untouched) == 2000 - len(mapping)


def test_a_dialogs_draw_does_not_depend_on_the_other_dialogs_exported():
    dialogs = _dialogs(30)
    _, all_rows = mix(dialogs, POOL, rate=0.5, seed=3, mode="replace")
    _, one_rows = mix(dialogs[7:8], POOL, rate=0.5, seed=3, mode="replace")
    assert one_rows == [r for r in all_rows if r["dialog"] == "d7"]


def test_interleave_keeps_every_in_domain_turn_and_answers_each_new_one():
    dialogs = _dialogs(50)
    mixed, mapping = mix(dialogs, POOL, rate=0.4, seed=1, mode="interleave")
    assert mapping
    for before, after in zip(dialogs, mixed, strict=True):
        kept = [t for t in after.turns if not t.inserted]
        assert kept == list(before.turns)
        speakers = [t.speaker for t in after.turns]
        assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))  # still alternating
    by_dialog = {d.external_id: d for d in mixed}
    for row in mapping:
        turns = by_dialog[row["dialog"]].turns
        new, reply, original = turns[row["position"]], turns[row["position"] + 1], turns[row["position"] + 2]
        assert (new.inserted, reply.inserted) == (OOS_TURN, OOS_REPLY)
        assert original.index == row["inserted_before"] and original.speaker == "user" and not original.inserted
    assert sum(len(d.turns) for d in mixed) == sum(len(d.turns) for d in dialogs) + 2 * len(mapping)


@pytest.mark.parametrize(("rate", "seed", "mode", "words"), [
    (0, 0, "replace", "rate"), (1.5, 0, "replace", "rate"), ("0.2", 0, "replace", "rate"),
    (0.2, -1, "replace", "seed"), (0.2, 0, "shuffle", "mode"),
])
def test_bad_options_are_refused_in_words(rate, seed, mode, words):
    with pytest.raises(ExportError, match=words):
        mix(_dialogs(2), POOL, rate=rate, seed=seed, mode=mode)


def test_an_empty_pool_is_refused():
    with pytest.raises(ExportError, match="no user turns"):
        mix(_dialogs(2), [], rate=0.5, seed=0, mode="replace")


# --- the export -------------------------------------------------------------------------------------


@pytest.fixture
def corpora(db):
    home = Corpus.objects.create(name="restaurants", source_format="multiwoz")
    for d in range(6):
        make_dialog(home, f"R{d}.json", d, [
            ("user", f"i want a cheap restaurant {d}", MULTIWOZ_RAW_USER),
            ("system", "what food would you like", MULTIWOZ_RAW_SYSTEM),
            ("user", f"italian please {d}", MULTIWOZ_RAW_USER),
            ("system", "pizza hut is cheap", MULTIWOZ_RAW_SYSTEM),
        ])
    other = Corpus.objects.create(name="open-domain", source_format="jsonl")
    for d in range(3):
        make_dialog(other, f"chit{d}", d, [("user", f"do you like jazz {d}", {}), ("system", "i do", {})])
    return home, other


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["replace", "interleave"])
def test_a_rewrite_export_gets_an_out_of_domain_set_in_multiwoz_with_the_mapping(tmp_path, corpora, mode):
    home, other = corpora
    job = make_job(home, variants=["paraphrase"])
    files = export_job(job, tmp_path / "out", out_of_domain=OutOfDomain(other.pk, 0.5, seed=11, mode=mode))
    assert "out_of_domain/data.json" in files
    data = json.loads((tmp_path / "out" / "out_of_domain" / "data.json").read_text())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["out_of_domain"]
    assert (manifest["mode"], manifest["rate"], manifest["seed"]) == (mode, 0.5, 11)
    assert manifest["drawn_from"]["name"] == "open-domain" and manifest["user_turns"] == 12
    assert manifest["out_of_domain_turns"] == len(manifest["mapping"]) > 0
    for row in manifest["mapping"]:
        turn = data[row["dialog"]]["log"][row["position"]]
        assert turn["text"] == row["text"] and turn["text"].startswith("do you like jazz")
        assert turn["oos"] is True and "general-oos" in turn["dialog_act"]
        assert row["source_dialog"].startswith("chit")
    lengths = {d: len(v["log"]) for d, v in data.items()}
    added = {d: sum(1 for r in manifest["mapping"] if r["dialog"] == d) for d in lengths}
    assert all(lengths[d] == 4 + (2 * added[d] if mode == "interleave" else 0) for d in lengths)


@pytest.mark.django_db
def test_a_job_without_test_sets_of_its_own_gets_the_set_too(tmp_path, corpora):
    home, other = corpora
    job = make_job(home, task_type="hard_score")
    files = export_job(job, tmp_path / "out", out_of_domain=OutOfDomain(other.pk, 1.0, seed=0))
    assert "out_of_domain/data.json" in files
    data = json.loads((tmp_path / "out" / "out_of_domain" / "data.json").read_text())
    user_turns = [t for dialog in data.values() for t in dialog["log"][0::2]]
    assert len(user_turns) == 12 and all(t.get("oos") for t in user_turns)  # rate 1: every user turn


@pytest.mark.django_db
def test_bad_options_leave_no_run_and_no_files(tmp_path, corpora):
    home, other = corpora
    job = make_job(home, variants=["paraphrase"])
    for option, words in [
        (OutOfDomain(home.pk, 0.5), "another corpus"),
        (OutOfDomain(999999, 0.5), "no corpus"),
        (OutOfDomain(other.pk, 0.0), "rate"),
    ]:
        with pytest.raises(ExportError, match=words):
            start_export(job, out_of_domain=option)
        with pytest.raises(ExportError, match=words):
            export_job(job, tmp_path / "never", out_of_domain=option)
    assert not ExportRun.objects.exists()
    assert not (tmp_path / "never").exists()


@pytest.mark.django_db
def test_the_api_records_the_option_and_the_run_writes_the_set(client, corpora, settings, tmp_path, organizer, django_capture_on_commit_callbacks):
    settings.QUORUM_EXPORT_DIR = tmp_path
    home, other = corpora
    job = make_job(home, variants=["paraphrase"])
    client.force_login(organizer)
    url = f"/api/jobs/{job.pk}/exports/"
    refused = client.post(url, {"out_of_domain_corpus": other.pk}, content_type="application/json")
    assert refused.status_code == 400 and "out_of_domain_rate" in refused.json()
    # Each refusal is keyed by the field to change, not by the job.
    refused = client.post(url, {"out_of_domain_corpus": home.pk, "out_of_domain_rate": 0.3}, content_type="application/json")
    assert refused.status_code == 400 and "another corpus" in refused.json()["out_of_domain_corpus"][0]
    refused = client.post(url, {"out_of_domain_corpus": 99999, "out_of_domain_rate": 0.3}, content_type="application/json")
    assert refused.status_code == 400 and "no corpus 99999" in refused.json()["out_of_domain_corpus"][0]
    refused = client.post(url, {"out_of_domain_corpus": other.pk, "out_of_domain_rate": 0}, content_type="application/json")
    assert refused.status_code == 400 and "above 0" in refused.json()["out_of_domain_rate"][0]
    assert not ExportRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url, {"out_of_domain_corpus": other.pk, "out_of_domain_rate": 0.3, "out_of_domain_seed": 5,
                                   "out_of_domain_mode": "interleave"}, content_type="application/json")
    assert answer.status_code in (200, 201, 202), answer.content
    run = ExportRun.objects.get()
    assert answer.json()["out_of_domain_corpus"] == other.pk
    assert (run.out_of_domain_corpus_id, run.out_of_domain_rate, run.out_of_domain_seed, run.out_of_domain_mode) == (other.pk, 0.3, 5, "interleave")
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert "out_of_domain/data.json" in run.files


@pytest.mark.django_db
def test_the_command_writes_the_set_and_says_how_many_turns(tmp_path, corpora, capsys):
    from django.core.management import call_command

    home, other = corpora
    job = make_job(home, variants=["paraphrase"])
    call_command("export_job", str(job.pk), "--out", str(tmp_path / "out"), "--out-of-domain-corpus", str(other.pk),
                 "--out-of-domain-rate", "1", "--out-of-domain-mode", "interleave")
    assert "out_of_domain: 12 of 12 user turns interleaved with utterances of 'open-domain'" in capsys.readouterr().out


def test_the_export_form_offers_only_other_corpora_to_draw_from(corpora):
    """Drawing "out-of-domain" turns from the job's own corpus is refused by the service; the form
    does not offer it, and says what to do when no other corpus is there."""
    from annotation.web.organizer_forms import ExportForm

    home, other = corpora
    offered = ExportForm(corpus_id=home.pk).fields["out_of_domain_corpus"]
    assert list(offered.queryset) == [other]
    other.delete()
    alone = ExportForm(corpus_id=home.pk).fields["out_of_domain_corpus"]
    assert not alone.queryset.exists() and "No other corpus is imported yet" in alone.help_text
    assert "out_of_domain_corpus" not in ExportForm(corpus_id=None).fields  # a payload job mixes nothing
