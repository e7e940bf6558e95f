"""The README written into every export directory. Pure: no Django import."""
from collections.abc import Mapping, Sequence

from quorum import numbers

from . import flag_summary

FORMAT_NOTES = {
    "multiwoz": (
        "`<variant>/data.json` has the MultiWOZ 2.x shape: a dict from dialog id to `{goal, log}`. "
        "Every log entry keeps its `metadata`, `dialog_act` and `span_info` as imported. "
        "**`span_info` start/end word positions refer to the original user text and may not match a "
        "rewrite**; the slot values themselves were required verbatim in every rewrite, so locate "
        "them in the text (case-insensitively) rather than by position."
    ),
    "dstc9": (
        "`<variant>/logs.json` has the DSTC9 Track 1 shape (a list of instances, each a list of "
        "`{speaker: U|S, text}`). `labels.json` is the corpus labels of the exported instances, in "
        "the same order as `logs.json`, and `knowledge.json` a copy of the corpus knowledge base; "
        "each is present only if the corpus had it."
    ),
    "dstc6": (
        "`<variant>/dialogs.json` has the DSTC6 Track 1 shape: a list of "
        "`{dialog_id, utterances, candidates}`; candidates and other fields are as imported."
    ),
    "jsonl": (
        "`<variant>/dialogs.jsonl` holds one dialog per line: "
        "`{dialog_id, turns: [{speaker, text, slot_values}], meta}`."
    ),
}


def column_lines(columns: Mapping[str, str]) -> list[str]:
    """The answer columns of `responses.csv`, each with what it holds."""
    return [f"  - `{name}`: {words}" for name, words in columns.items()]


def render(*, manifest: Mapping, files: Sequence[str], columns: Mapping[str, str]) -> str:
    variants = manifest["variants"]
    lines = [
        f"# Export of job {manifest['job']['id']} ({manifest['job']['name']})",
        "",
        f"Corpus `{manifest['corpus']['name']}` ({manifest['corpus']['source_format']}), exported "
        f"{manifest['exported_at']} by Quorum {manifest['quorum_version']}.",
        "",
        "## Test sets",
        "",
        "One directory per rewrite variant. Each is the source corpus in its own format with every "
        "user turn that has an accepted rewrite replaced by that rewrite; everything else is as "
        "imported.",
        *(
            ["", "Spoken readings: directory `spoken_k` has every user turn replaced by the ASR hypothesis of "
             "the k-th reading (\"rewrite\" below means that hypothesis); `readings.jsonl` has one line per "
             "reading with the text read, the hypothesis, its confidence and the audio's path (`audio/` when "
             "the recordings were exported)."]
            if any(str(v).startswith("spoken_") for v in variants) else []
        ),
        "",
        FORMAT_NOTES.get(manifest["corpus"]["source_format"], ""),
        "",
        "- Dialogs: only those with at least one item in this job are included, in corpus order.",
        "- Responses: only responses that count (status `accepted`) are used. When a turn has several "
        "accepted rewrites (redundancy above 1), the test set takes the earliest accepted one "
        "(by submission time, then response id); `responses.csv` has them all.",
        "- Turns of the job without an accepted rewrite keep their original text.",
        "",
        "| variant | turns replaced | turns without an accepted rewrite |",
        "|---|---|---|",
    ]
    for variant, counts in variants.items():
        lines.append(f"| {variant} | {counts['turns_replaced']} | {counts['turns_without_accepted_rewrite']} |")
    speech = manifest.get("speech_errors")
    if speech:
        lines += [
            "",
            f"Speech errors: `speech_errors/` has every user turn of these dialogs, as imported (not the rewrites), "
            f"replaced by simulated ASR text: spoken by {speech['engine']}, mixed with {speech['noise']} noise at "
            f"{speech['snr_db']} dB SNR and recognised; corpus WER {speech['wer']} (target {speech['target_wer']}, "
            f"clean floor {speech['clean_floor_wer']}) over {speech['utterances']} user turns. Slot values no longer in "
            "the ASR text are left out of the turn. `speech_errors.jsonl` has one line per user turn: "
            "dialog, turn, source text, ASR text and WER.",
        ]
    lines += ["", *flag_summary.readme_lines(manifest["flags"])] if manifest.get("flags") else []
    lines += [
        "",
        "## Other files",
        "",
        "- `manifest.json`: the job, its settings, the counts above, and per dialog which turns "
        "have items and which were replaced in each variant (turn indices from 0).",
        "- `responses.csv`: one row per response, whatever became of it (accepted, awaiting review, "
        "held, rejected, excluded; crowd responses the provider has not confirmed are left out): item id, dialog id, turn index, source text, worker (`provider:id`), the answer "
        "columns below, status, claim and submission times (ISO 8601, UTC), seconds from claim to "
        "submission, active seconds measured by the browser, failed checks (`field:code`), the response's id "
        "and its flags (codes joined by `; `, as the last flag run stored them). "
        "Text is stored as written; read it with a CSV parser. The answer columns:",
        *column_lines(columns),
        "",
        "## Files",
        "",
        *(f"- `{name}`" for name in files),
        "",
    ]
    return "\n".join(lines)


def render_answers(*, manifest: Mapping, files: Sequence[str]) -> str:
    """The README of a job exported without test sets (ratings, scores, votes, comparisons)."""
    job = manifest["job"]
    lines = [
        f"# Export of job {job['id']} ({job['name']})",
        "",
        f"A `{job['task_type']}` job, exported {manifest['exported_at']} by Quorum {manifest['quorum_version']}.",
        "",
        "- `responses.csv`: one row per response, whatever became of it (accepted, awaiting review, held, "
        "rejected, excluded; crowd responses the provider has not confirmed are left out): item id, worker "
        "(`provider:id`), one column per answer field, status, claim and submission times (ISO 8601, UTC), "
        "seconds from claim to submission, active seconds measured by the browser, failed checks, the "
        "response's id and its flags (codes joined by `; `).",
        "- `items.csv`: per item with responses that count (status `accepted`), what they say together: "
        "for ratings the mean per question and overall, for choices the most chosen answer and its share; "
        "`in_subset` says whether the item is in the job's subset (e.g. the hard test subset), empty when "
        "the job has none.",
        "- `manifest.json`: the job and its settings, and Krippendorff's alpha per question over the "
        "responses that count.",
        *(
            [
                "- `qa_pairs.jsonl` (and `qa_pairs_heldout.jsonl` with a held-out share): one JSON object a line, "
                "`{source_id, question, answer, paraphrase_index, worker, source_question}`: each source pair "
                "(`paraphrase_index` 0, `worker` null) followed by every paraphrase of its question in the responses "
                "that count (1..N), with the source's answer.",
            ]
            if "qa_pairs.jsonl" in files else []
        ),
        "",
        "## Agreement",
        "",
        "| question | alpha | level | items with 2+ answers |",
        "|---|---|---|---|",
    ]
    for a in manifest.get("agreement", []):
        alpha = numbers.decimals(a["alpha"]) if a["alpha"] is not None else a["note"]
        lines.append(f"| {a['question']} | {alpha} | {a['level']} | {a['units']} |")
    if manifest.get("flags"):
        lines += ["", *flag_summary.readme_lines(manifest["flags"])]
    lines += ["", "## Files", "", *(f"- `{name}`" for name in files), ""]
    return "\n".join(lines)
