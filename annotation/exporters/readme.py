"""The README written into every export directory. Pure: no Django import."""
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quorum import numbers

from . import flag_summary
from .raw_csv import EVIDENCE_SEPARATOR

FORMAT_NOTES = {
    "multiwoz": (
        "`<set>/data.json` has the MultiWOZ 2.x shape: a dict from dialog id to `{goal, log}`. "
        "Every log entry of a source turn keeps its `metadata`, `dialog_act` and `span_info` as imported, but where said below."
    ),
    "dstc9": (
        "`<set>/logs.json` has the DSTC9 Track 1 shape (a list of instances, each a list of "
        "`{speaker: U|S, text}`). `labels.json` is the corpus labels of the exported instances, in "
        "the same order as `logs.json`, and `knowledge.json` a copy of the corpus knowledge base; "
        "each is present only if the corpus had it."
    ),
    "dstc6": (
        "`<set>/dialogs.json` has the DSTC6 Track 1 shape: a list of "
        "`{dialog_id, utterances, candidates}`; candidates and other fields are as imported."
    ),
    "jsonl": (
        "`<set>/dialogs.jsonl` holds one dialog per line: "
        "`{dialog_id, turns: [{speaker, text, slot_values}], meta}`."
    ),
}
#: The formats whose test sets hold slot values (DSTC9 and DSTC6 turns are text alone), so only
#: their READMEs say what a changed turn's slot values are worth.
SLOT_VALUE_FORMATS = frozenset({"multiwoz", "jsonl"})


@dataclass(frozen=True)
class TestSetWords:
    """What a task type's test sets are, in the README's words (`ExportsTestSets.test_set_words`)."""

    #: What the test-set directories hold: a paragraph.
    sets: str
    #: What a changed turn's slot values are worth, in words true of every format that has them
    #: (`SLOT_VALUE_FORMATS`); the README of a format without slot values leaves it out.
    slot_values: str
    #: How the export chooses what goes in: bullets, without the leading "- ".
    selection: Sequence[str]
    #: The headers of the count table: the set, the item turns changed, the item turns left as they were.
    counts: tuple[str, str, str] = ("test set", "turns changed", "item turns left as imported")
    #: Source format -> what is true of that format alone (MultiWOZ `span_info`, a format's label of
    #: an inserted turn): only its own README says it.
    format_words: Mapping[str, str] = field(default_factory=dict)


def about_format(source_format: str, words: TestSetWords) -> str:
    """The README's paragraph on what the corpus's format holds: nothing said of another format."""
    slot_values = words.slot_values if source_format in SLOT_VALUE_FORMATS else ""
    parts = (FORMAT_NOTES.get(source_format, ""), slot_values, words.format_words.get(source_format, ""))
    return " ".join(p for p in parts if p)


FLAGS_FILE_WORDS = (
    "- `flags.jsonl`: one JSON object a line per flagged response, as the last flag run stored its flags: "
    "`response_id`, `worker`, `status` and `flags`, a list of `{code, name, evidence}` (the code, the flag in words, "
    "and why in words with the numbers measured). Flags are evidence for a person to weigh, not verdicts."
)

DIALOGS_RULE = "Dialogs: only those with at least one item in this job are included, in corpus order."


def earliest_rule(what: str) -> str:
    """The bullet that says which of a turn's accepted responses a test set takes; `what` names the
    text taken from it ("rewrite", "out-of-scope turn")."""
    return (
        f"Responses: only responses that count (status `accepted`) are used. When a turn has several accepted "
        f"responses (redundancy above 1, or a voted-down response accepted by a reviewer after all beside its "
        f"re-collection), the test set takes the {what} of the earliest accepted one (by submission time, then response "
        f"id) whose {what} passed the vote or was not voted on; a {what} that was voted down and then accepted by a "
        f"reviewer after all is used only where no other accepted response has one. `responses.csv` has them all."
    )


def field_words(field: Mapping) -> str:
    """An answer field in words: its label, then its help, then what kind of answer it is."""
    words = str(field.get("label") or field.get("name") or "")
    if field.get("help"):
        words += f" ({str(field['help']).rstrip('.')})"
    choices = field.get("choices")
    if isinstance(choices, Mapping):
        words += "; one of " + ", ".join(f"`{value}` ({label})" if str(label) != str(value) else f"`{value}`" for value, label in choices.items())
    elif choices:
        words += "; one of " + ", ".join(f"`{c}`" for c in choices)
    elif field.get("upload"):
        words += "; a file"
    else:
        words += "; free text"
    return words


def column_lines(columns: Mapping[str, str]) -> list[str]:
    """The answer columns of `responses.csv`, each with what it holds."""
    return [f"  - `{name}`: {words}" for name, words in columns.items()]


def render(
    *, manifest: Mapping, files: Sequence[str], columns: Mapping[str, str], words: TestSetWords, file_words: Mapping[str, str] | None = None,
) -> str:
    variants = manifest["variants"]
    lines = [
        f"# Export of job {manifest['job']['id']} ({manifest['job']['name']})",
        "",
        f"Corpus `{manifest['corpus']['name']}` ({manifest['corpus']['source_format']}), exported "
        f"{manifest['exported_at']} by Quorum {manifest['quorum_version']}.",
        "",
        "## Test sets",
        "",
        words.sets,
        "",
        about_format(manifest["corpus"]["source_format"], words),
        "",
        *(f"- {bullet}" for bullet in words.selection),
        "",
        "| {} | {} | {} |".format(*words.counts),
        "|---|---|---|",
    ]
    for variant, counts in variants.items():
        lines.append(f"| {variant} | {counts['turns_replaced']} | {counts['turns_without_accepted_rewrite']} |")
    lines += span_lines(variants)
    speech = manifest.get("speech_errors")
    if speech:
        lines += speech_lines(speech, manifest["corpus"]["source_format"])
    lines += ["", *flag_summary.readme_lines(manifest["flags"], part="test set")] if manifest.get("flags") else []
    lines += [
        "",
        "## Other files",
        "",
        "- `manifest.json`: the job, its settings, the counts above, and per dialog which turns "
        "have items and which were changed in each test set (`replaced`; turn indices of the source, from 0).",
        FLAGS_FILE_WORDS,
        "- `responses.csv`: one row per response, whatever became of it (accepted, awaiting review, "
        "held, rejected, excluded; crowd responses the provider has not confirmed are left out): item id, dialog id, turn index, source text, worker (`provider:id`), the answer "
        "columns below, status, claim and submission times (ISO 8601, UTC), seconds from claim to "
        "submission, active seconds measured by the browser, failed checks (`field:code`), the response's id "
        "and its flags (codes joined by `; `, as the last flag run stored them), then `flag_evidence`: why, each flag's "
        f"evidence in words as `code: why`, in the order of `flags`, apart by `{EVIDENCE_SEPARATOR.strip()}`. "
        "Text is stored as written; read it with a CSV parser. The answer columns:",
        *column_lines(columns),
        *file_lines({name: what for name, what in (file_words or {}).items() if any(f.startswith(name) for f in files)}),
        *files_section(files),
    ]
    return "\n".join(lines)


def speech_lines(speech: Mapping, source_format: str) -> list[str]:
    """The speech-error set in words: how it was made, what became of its slot values and spans
    (said only of a format that holds them)."""
    values = " Slot values no longer in the ASR text are left out of the turn." if source_format in SLOT_VALUE_FORMATS else ""
    moved, dropped = speech.get("span_info_moved", 0), speech.get("span_info_dropped", 0)
    spans = (
        f" `span_info` of the `speech_errors/` user turns: {moved} spans placed in the ASR text, {dropped} left out because "
        "it does not hold their value (`manifest.json`: `speech_errors.span_info_moved`, `span_info_dropped`)."
    ) if moved or dropped else ""
    return [
        "",
        f"Speech errors: `speech_errors/` has every user turn of these dialogs, as imported (not the test sets' texts), "
        f"replaced by simulated ASR text: spoken by {speech['engine']}, mixed with {speech['noise']} noise at "
        f"{speech['snr_db']} dB SNR and recognised; corpus WER {speech['wer']} (target {speech['target_wer']}, "
        f"clean floor {speech['clean_floor_wer']}) over {speech['utterances']} user turns.{values}{spans} "
        "`speech_errors.jsonl` has one line per user turn: dialog, turn, source text, ASR text and WER.",
    ]


def span_lines(variants: Mapping) -> list[str]:
    """What became of the MultiWOZ `span_info` of changed turns (the writer's counts), where there was any."""
    moved = sum(c.get("span_info_moved", 0) for c in variants.values())
    dropped = sum(c.get("span_info_dropped", 0) for c in variants.values())
    if not moved and not dropped:
        return []
    return [
        "",
        f"`span_info` of changed turns: {moved} spans placed in the new text, {dropped} left "
        "out because the new text does not hold their value (per set in `manifest.json`: `variants.<set>.span_info_moved`, "
        "`span_info_dropped`).",
    ]


#: The CSV files carry no byte order mark (a reader of plain UTF-8 would take it for part of the first
#: header), so Excel on Windows guesses the local code page when such a file is opened by double-click.
CSV_ENCODING = (
    "The `.csv` files are UTF-8 without a byte order mark. Excel on Windows opens such a file (by double-click) in "
    "the computer's local code page and garbles text outside it, Chinese for one: open it from Excel's Data tab "
    "instead, with From Text/CSV, and choose File Origin 65001: Unicode (UTF-8). Python, pandas, R and LibreOffice "
    "read them as UTF-8."
)


def files_section(files: Sequence[str]) -> list[str]:
    """The README's list of files, with how to open its CSV files."""
    csv_note = ["", CSV_ENCODING] if any(name.endswith(".csv") for name in files) else []
    return ["", "## Files", "", *(f"- `{name}`" for name in files), *csv_note, ""]


def file_lines(file_words: Mapping[str, str]) -> list[str]:
    """The extra files a task type writes (`ExportsFiles.answer_file_words`), each with what it holds."""
    return [f"- `{name}`: {words}" for name, words in file_words.items()]


def render_answers(
    *, manifest: Mapping, files: Sequence[str], columns: Mapping[str, str], file_words: Mapping[str, str],
    item_columns: Mapping[str, str] | None = None,
) -> str:
    """The README of a job exported without test sets (ratings, scores, votes, comparisons, QA paraphrases);
    `item_columns`: words for the columns of `items.csv` whose name does not say what they count."""
    job = manifest["job"]
    agreement = manifest.get("agreement") or []
    lines = [
        f"# Export of job {job['id']} ({job['name']})",
        "",
        f"A `{job['task_type']}` job, exported {manifest['exported_at']} by Quorum {manifest['quorum_version']}.",
        "",
        "- `responses.csv`: one row per response, whatever became of it (accepted, awaiting review, held, "
        "rejected, excluded; crowd responses the provider has not confirmed are left out): item id, worker "
        "(`provider:id`), the answer columns below, status, claim and submission times (ISO 8601, UTC), "
        "seconds from claim to submission, active seconds measured by the browser, failed checks, the "
        "response's id and its flags (codes joined by `; `), then `flag_evidence` (each flag's evidence in words, "
        f"`code: why`, apart by `{EVIDENCE_SEPARATOR.strip()}`). The answer columns:",
        *column_lines(columns),
        "- `items.csv`: per item with responses that count (status `accepted`), what they say together: "
        "for ratings the mean per question and overall, for choices the most chosen answer and its share; "
        "`in_subset` says whether the item is in the job's subset (e.g. the hard test subset), empty when "
        "the job has none.",
        *column_lines(item_columns or {}),
        "- `manifest.json`: the job and its settings, and Krippendorff's alpha per question over the "
        "responses that count.",
        FLAGS_FILE_WORDS,
        *file_lines({name: words for name, words in file_words.items() if any(f.startswith(name) for f in files)}),
        "",
        "## Agreement",
        "",
    ]
    if agreement:
        lines += ["| question | alpha | level | items with 2+ answers |", "|---|---|---|---|"]
        for a in agreement:
            alpha = numbers.decimals(a["alpha"]) if a["alpha"] is not None else a["note"]
            lines.append(f"| {a['question']} | {alpha} | {a['level']} | {a['units']} |")
    else:
        lines.append(
            "None measured: no answer of this task type is a choice or a rating (they are free text or files), "
            "and Krippendorff's alpha is computed here on those only."
        )
    if manifest.get("flags"):
        lines += ["", *flag_summary.readme_lines(manifest["flags"], part="answer field")]
    lines += files_section(files)
    return "\n".join(lines)
