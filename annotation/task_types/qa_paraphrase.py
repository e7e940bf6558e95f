"""CGoDial question paraphrases: given a question-answer pair, a worker writes N (9) paraphrases of
the question (PROTOCOLS.md 6b: 150 pairs, each paraphrased into nine similar pairs).

Items are payloads {id, question, answer}: from a JSONL file (one pair a line, `qa_pairs.read_jsonl`)
or the FAQ documents of a DSTC9 corpus's knowledge (title = question, body = answer). Checks, per
paraphrase: written, in the question's script (Latin, Han, Cyrillic, ...: the script most of its
letters are in must be a main script of the question), within length bounds relative to the
question, and distinct from the question and from the other paraphrases (case, spaces and
punctuation aside, and below a similarity threshold: near-duplicates are refused).

Voting is per paraphrase (`vote_parts`): each paraphrase becomes its own QA pair of the export, so
each must be usable on its own, and a writer learns which one was voted down.

Export (`answer_files`): `qa_pairs.jsonl`, one line per source pair (`paraphrase_index` 0) and per
accepted paraphrase (1..N), with the source's answer; with `heldout_share` above 0, the source pairs
drawn for the held-out set (by a hash of seed and id: stable as the job grows) and their
paraphrases go to `qa_pairs_heldout.jsonl` instead.
"""
import hashlib
import math
import unicodedata
from collections import Counter
from collections.abc import Mapping

from rapidfuzz import fuzz  # C implementation of string similarity

from ..text import qa_pairs, text_units
from .base import PayloadError, Problem, TaskType, TaskTypeSettingsError, check_number, clean_text, default_settings
from .capabilities import ExportsFiles, ExportSource, FromPayloads, Votable
from .registration import register

MAX_PARAPHRASES = 20
MAX_CHARS = 1000
MAIN_SCRIPT_SHARE = 0.2  # a script with at least this share of the question's letters is one of its own


def field(n: int) -> str:
    return f"paraphrase_{n}"


def script_of(char: str) -> str:
    """The Unicode script of a letter, from its name ("LATIN SMALL LETTER A" -> "LATIN"; CJK
    ideographs -> "HAN"). Pure."""
    name = unicodedata.name(char, "")
    if name.startswith("CJK"):
        return "HAN"
    return name.split(" ")[0] if name else "UNKNOWN"


def scripts(text: str) -> Counter:
    return Counter(script_of(c) for c in text if c.isalpha())


def script_problem(source: str, text: str) -> str | None:
    """Why `text` is not in `source`'s script, or None. Pure."""
    theirs, mine = scripts(source), scripts(text)
    if not theirs or not mine:
        return None
    total = sum(theirs.values())
    main = {s for s, n in theirs.items() if n >= MAIN_SCRIPT_SHARE * total}
    dominant = mine.most_common(1)[0][0]
    if dominant in main:
        return None
    return f"write it in the question's script ({', '.join(sorted(s.title() for s in main))}), not {dominant.title()}"


def heldout(pair_id: str, seed: int, share: float) -> bool:
    """Whether a source pair belongs to the held-out set: a stable draw per (seed, id). Pure."""
    digest = hashlib.sha256(f"quorum-qa-heldout:{seed}:{pair_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class QaParaphraseTaskType(TaskType, FromPayloads, Votable, ExportsFiles):
    key = "qa_paraphrase"
    label = "Paraphrase knowledge questions (CGoDial QA pairs)"
    template = "annotation/tasks/qa_paraphrase.html"
    agreement_level = "nominal"  # free text: no agreement table
    vote_question = "Does this question ask the same as the original, so that the same answer fits, and is it natural?"
    settings_help = {
        "count": (9, f"How many paraphrases of the question each worker writes (CGoDial: 9; at most {MAX_PARAPHRASES})."),
        "similarity_threshold": (
            90,
            "A paraphrase at least this similar (from 0 to 100, where 100 is the same text; case and spaces aside) to the question or to "
            "another paraphrase is refused as a near-duplicate.",
        ),
        "min_length_ratio": (0.5, "A paraphrase has at least this share of the question's words (characters in scripts without spaces)."),
        "max_length_ratio": (3.0, "A paraphrase has at most this many times the question's words (characters in scripts without spaces)."),
        "heldout_share": (0.0, "Share of the source pairs set apart, with their paraphrases, as a held-out test file (CGoDial held 200 out); 0: none."),
        "seed": (0, "Seed of the held-out draw: the same seed holds out the same pairs."),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}

        check_number(cleaned, errors, "count", 1, MAX_PARAPHRASES, whole=True)
        check_number(cleaned, errors, "similarity_threshold", 1, 100)
        check_number(cleaned, errors, "min_length_ratio", 0, 10)
        check_number(cleaned, errors, "max_length_ratio", 0.1, 100)
        check_number(cleaned, errors, "heldout_share", 0, 1)
        check_number(cleaned, errors, "seed", 0, 2**31 - 1, whole=True)
        if not errors and cleaned["min_length_ratio"] > cleaned["max_length_ratio"]:
            errors["max_length_ratio"] = "at least min_length_ratio"
        if errors:
            raise TaskTypeSettingsError(errors)
        return cleaned

    payload_file = 'QA pairs: a JSONL file, one {"id", "question", "answer"} a line, ids unique; an optional "about" names what the question is about, shown to the worker.'

    # --- Items ------------------------------------------------------------------------------------

    def read_payloads(self, text, name):
        try:
            return qa_pairs.read_jsonl(text, name, with_id=True)
        except qa_pairs.QaPairsError as exc:
            raise PayloadError(str(exc)) from None

    def payloads_from_corpus(self, corpus_meta):
        return qa_pairs.from_knowledge(corpus_meta.get("knowledge"))

    def build_payload(self, source) -> dict:
        try:
            return qa_pairs.clean_pair(source.payload, "the pair", with_id=True)
        except qa_pairs.QaPairsError as exc:
            raise PayloadError(str(exc).removeprefix("the pair: ")) from None

    # --- Responses --------------------------------------------------------------------------------

    def answer_fields(self, settings):
        count = settings.get("count", self.settings_help["count"][0])
        return [
            {"name": field(n), "label": f"Paraphrase {n}", "help": "The same question in other words; the answer shown must still fit."}
            for n in range(1, count + 1)
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        defaults = default_settings(self)
        threshold = settings.get("similarity_threshold", defaults["similarity_threshold"])
        source = payload["question"]
        unspaced = text_units.is_unspaced(source)
        size = text_units.length(source, unspaced)
        low = math.ceil(settings.get("min_length_ratio", defaults["min_length_ratio"]) * size)
        high = max(1, math.floor(settings.get("max_length_ratio", defaults["max_length_ratio"]) * size))
        unit = text_units.unit_name(unspaced, 2)
        cleaned, problems, kept = {}, [], []  # kept: (label, normalised text) of the paraphrases so far
        for f in self.answer_fields(settings):
            name, label = f["name"], f["label"]
            text, found = clean_text(answers.get(name, ""), name, label, MAX_CHARS)
            if text is not None:
                cleaned[name] = text
            if found or text is None:
                problems.extend(found)
                continue
            if not text:
                problems.append(Problem(name, "required", f"{label}: write a paraphrase of the question."))
                continue
            mine = text_units.normalize(text)
            length = text_units.length(text, unspaced)
            if (why := script_problem(source, text)) is not None:
                problems.append(Problem(name, "script", f"{label}: {why}."))
            if length < low:
                problems.append(Problem(name, "too_short", f"{label}: use at least {low} {unit} ({length} now)."))
            elif length > high:
                problems.append(Problem(name, "too_long", f"{label}: use at most {high} {unit} ({length} now)."))
            if text_units.comparable(text) == text_units.comparable(source) or fuzz.ratio(mine, text_units.normalize(source)) >= threshold:
                problems.append(Problem(name, "unchanged", f"{label}: this is (almost) the question itself; say it in other words."))
            else:
                twin = next((other for other, theirs in kept if fuzz.ratio(mine, theirs) >= threshold
                             or text_units.comparable(text) == text_units.comparable(theirs)), None)
                if twin is not None:
                    problems.append(Problem(name, "duplicate", f"{label}: (almost) the same as {twin}; make each paraphrase different."))
            kept.append((label, mine))
        return cleaned, problems

    def vote_parts(self, settings):
        """Each paraphrase is its own QA pair of the export, so voters judge each one."""
        return [{"name": f["name"], "label": f["label"]} for f in self.answer_fields(settings)]

    def combine(self, answer_rows, settings):
        """Every counted paraphrase of an item, response by response, earliest first."""
        names = [f["name"] for f in self.answer_fields(settings)]
        return {"paraphrases": [row[n] for row in answer_rows for n in names if row.get(n)], "responses": len(answer_rows)}

    def subject_of(self, payload):
        return str(payload.get("question", ""))

    # --- Export -----------------------------------------------------------------------------------

    def answer_file_words(self, settings):
        pairs = (
            "one JSON object a line, `{source_id, question, answer, paraphrase_index, worker, source_question}`: each source "
            "pair (`paraphrase_index` 0, `worker` null) followed by every paraphrase of its question in the responses that "
            "count (1..N), with the source's answer."
        )
        files = {"qa_pairs.jsonl": pairs}
        if settings.get("heldout_share", default_settings(self)["heldout_share"]) > 0:
            files["qa_pairs_heldout.jsonl"] = "the held-out source pairs and their paraphrases, written as `qa_pairs.jsonl`."
        return files

    def answer_files(self, source: ExportSource, settings):
        defaults = default_settings(self)
        share, seed = settings.get("heldout_share", defaults["heldout_share"]), settings.get("seed", defaults["seed"])
        names = [f["name"] for f in self.answer_fields(settings)]
        files = {"qa_pairs.jsonl": []}
        if share > 0:
            files["qa_pairs_heldout.jsonl"] = []
        for payload, responses in source.counted_items():
            target = files["qa_pairs_heldout.jsonl" if share > 0 and heldout(payload["id"], seed, share) else "qa_pairs.jsonl"]
            base = {"source_id": payload["id"], "answer": payload["answer"], **({"about": payload["about"]} if payload.get("about") else {})}
            target.append({**base, "question": payload["question"], "paraphrase_index": 0, "worker": None})
            for worker, answers in responses:
                for index, name in enumerate(names, start=1):
                    if answers.get(name):
                        target.append({**base, "question": answers[name], "paraphrase_index": index, "worker": worker,
                                       "source_question": payload["question"]})
        return files


register(QaParaphraseTaskType())
