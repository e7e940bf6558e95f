"""Worker flags: evidence for a reviewer that a worker's responses deserve a look. Pure: no Django.

Input is three tables (pandas DataFrames), so that a million responses are judged with array
operations rather than a loop over rows:

- `responses`: response, worker, job, item, seconds (time spent; NaN when unknown)
- `ratings`:   response, worker, item, key (criterion or field), value (number), order (submission order)
- `texts`:     response, worker, item, field, text, source, order, pasted_chars, typed_chars, typing
               (one row per free-text field of a response: `field` the variant, `source` the text
               the work was about, `order` the submission order; missing columns mean one field,
               no source, and the rows' own order; `typing` is the field's typing-process log, a
               dict in the format of `annotation/text/typing_log.py`, or None)
- `readings` (optional, spoken readings only): response, worker, reading (index from 0), turn (the
               text read), hypothesis (what the recogniser heard; None until transcribed),
               speech_seconds, seconds (the recording's duration), fingerprint (of its samples)

Response-level flags (each names the responses that carry it):
- `fast`: time below `fast_ratio` x the median time per response of the same job;
- `pasted`: at least `paste_share` of the typed-or-pasted characters were pasted (telemetry);
- `near_duplicate`: a field's text (of at least `MIN_WORDS` words) is at least
  `near_duplicate_similarity` similar to an earlier text of another worker in the same field of
  the same item, and closer to it than either is to the source (at most `MARGIN` times as far from
  it as the nearer of the two is from the source). Rewrites of one source resemble each other because they resemble the source (two
  typo versions differ from it, and from each other, by a few letters); only a text that is nearer
  to someone else's rewrite than to what both rewrote was taken from that rewrite, and only the
  later of the two can have been;
- the typing-process flags of `typing.py`, from each field's log: `paste_dominant`,
  `transcription_rhythm`, `composed_offscreen`, `synthetic_input`, `implausible_speed`,
  `revision_free`, `malformed_log` (`pasted` above reads the page's older counts, which responses
  stored before the logs have);
- `worth_a_listen` (given the `readings` table): a reading with little speech, whose hypothesis
  holds under half of the turn's words, or whose recording is the same as another reading's of the
  job (`speech.evidence.doubts`); its evidence names each such reading with its numbers. It never
  rejects anything, even where the job rejects flagged responses (`NEVER_REJECTS`): a person
  listens and decides.

Every response-level flag carries its evidence (`FlagReport.evidence`: response -> code -> text).
Worker-level flags:
- those above, when at least `flag_share` of the worker's responses carry them;
- `straight_lining`: one rating value makes up at least `straight_line_share` of the worker's
  ratings (with at least `pattern_min_ratings` ratings);
- `alternating`: the ratings alternate between two values (a, b, a, b, ...) in at least
  `straight_line_share` of the positions where that can be judged;
- `low_agreement`: the worker's ratings agree with the other raters of the same items (same
  value; within one point for ordinal keys) less often than `low_agreement`.

Flags are evidence, never verdicts: what is done with them is the job's and the reviewer's call.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz.distance import Indel

from quorum.lazy_modules import lazy

from ..speech.evidence import listen_evidence, turn_match
from ..text import text_units
from . import typing as typing_flags
from .reliability import two_places

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy("numpy")
    pd = lazy("pandas")


@dataclass(frozen=True)
class FlagThresholds:
    """Defaults equal the QualityPolicy defaults; `from_policy` reads a job's settings."""

    fast_ratio: float = 0.25
    flag_share: float = 0.2
    straight_line_share: float = 0.9
    pattern_min_ratings: int = 10
    low_agreement: float = 0.5
    paste_share: float = 0.5
    near_duplicate_similarity: float = 0.9
    # Typing-process flags (defaults and their sources: typing.py).
    transcription_pause_share: float = 0.015
    transcription_min_chars: int = 40
    offscreen_min_chars: int = 20
    synthetic_min_chars: int = 10
    implausible_iki_ms: int = 60
    revision_free_min_chars: int = 200
    ordinal_keys: frozenset = frozenset()  # rating keys compared within one point

    @classmethod
    def from_policy(cls, policy, ordinal_keys=()):
        if policy is None:
            return cls(ordinal_keys=frozenset(ordinal_keys))
        names = [f for f in cls.__dataclass_fields__ if f != "ordinal_keys"]
        return cls(**{n: getattr(policy, n) for n in names}, ordinal_keys=frozenset(ordinal_keys))

    def typing(self) -> typing_flags.TypingThresholds:
        names = typing_flags.TypingThresholds.__dataclass_fields__
        return typing_flags.TypingThresholds(**{n: getattr(self, n) for n in names})


@dataclass
class WorkerFlag:
    code: str
    message: str
    value: float  # the measured share (or agreement)
    count: int  # responses or ratings it is based on

    @property
    def name(self) -> str:
        """The flag in words, as pages name it (`flag_name`)."""
        return flag_name(self.code)


@dataclass
class FlagReport:
    #: worker -> flags raised on the worker
    workers: dict = field(default_factory=dict)
    #: response -> list of response-level flag codes
    responses: dict = field(default_factory=dict)
    #: worker -> measures, for a worker page even when nothing is flagged
    measures: dict = field(default_factory=dict)
    #: how many responses the flags were computed over
    responses_seen: int = 0
    #: response -> {code: why, in words a reviewer can check}
    evidence: dict = field(default_factory=dict)

    def flagged_workers(self) -> list:
        return sorted(w for w, flags in self.workers.items() if flags)

    def as_json(self) -> dict:
        """The report as JSON data, to be stored: ids become strings (JSON object keys are), numbers
        plain Python ones, and workers without flags are left out of "workers"."""
        return {
            "responses": {str(int(r)): list(codes) for r, codes in self.responses.items()},
            "workers": {
                str(int(w)): [{"code": f.code, "message": f.message, "value": float(f.value), "count": int(f.count)} for f in flags]
                for w, flags in self.workers.items() if flags
            },
            "measures": {str(int(w)): {k: _plain_number(v) for k, v in m.items()} for w, m in self.measures.items()},
            "responses_seen": int(self.responses_seen),
            "evidence": {str(int(r)): dict(e) for r, e in self.evidence.items()},
        }

    @classmethod
    def from_json(cls, data: dict) -> FlagReport:
        """The report `as_json` stored, with integer ids again. The per-response parts (one entry per
        flagged response: 100,000 on a large job) are read through `IntKeyed` views of the stored
        JSON rather than copied, so a page that shows fifty responses does not rebuild them all."""
        return cls(
            responses=IntKeyed(data.get("responses", {})),  # type: ignore[arg-type]  # a read-only Mapping
            workers={int(w): [WorkerFlag(**f) for f in flags] for w, flags in data.get("workers", {}).items()},
            measures={int(w): dict(m) for w, m in data.get("measures", {}).items()},
            responses_seen=int(data.get("responses_seen", 0)),
            evidence=IntKeyed(data.get("evidence", {})),  # type: ignore[arg-type]  # a read-only Mapping
        )


class IntKeyed(Mapping):
    """A read-only view, keyed by integer ids, of a stored JSON object keyed by their text."""

    def __init__(self, stored: dict):
        self._stored = stored

    def __getitem__(self, key):
        return self._stored[str(int(key))]

    def __contains__(self, key) -> bool:
        try:
            return str(int(key)) in self._stored
        except (TypeError, ValueError):
            return False

    def __iter__(self):
        return (int(k) for k in self._stored)

    def __len__(self) -> int:
        return len(self._stored)

    def values(self):  # the stored values as they are (no key to convert)
        return self._stored.values()


def _plain_number(value):
    """A measure as JSON takes it: None, int or float (pandas hands out numpy numbers; JSON has no NaN)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    return None if np.isnan(value) else value


RESPONSE_COLUMNS = ["response", "worker", "job", "item", "seconds"]
RATING_COLUMNS = ["response", "worker", "item", "key", "value", "order"]
TEXT_COLUMNS = ["response", "worker", "item", "field", "text", "source", "order", "pasted_chars", "typed_chars", "typing"]
READING_COLUMNS = ["response", "worker", "reading", "turn", "hypothesis", "speech_seconds", "seconds", "fingerprint"]

#: A spoken reading worth a listen: what a person hears decides, so a job that rejects flagged
#: responses (`flags_reject`) never rejects on this flag alone.
WORTH_A_LISTEN = "worth_a_listen"
#: Flags that never reject a response by themselves, whatever the job's policy.
NEVER_REJECTS = frozenset({WORTH_A_LISTEN})


def empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in columns})


#: What each response flag marks, as a page says it ("4 of 20 responses far faster than the job's norm").
RESPONSE_FLAG_WORDS = {
    "fast": "responses far faster than the job's norm",
    "pasted": "responses mostly pasted rather than typed",
    "near_duplicate": "rewrites closer to another worker's earlier rewrite than to the source",
    WORTH_A_LISTEN: "responses with a reading worth a listen",
    **typing_flags.AS_COUNT,
}

#: What each response flag says of one response, as a page names it ("text that arrived without key presses").
RESPONSE_FLAG_NAMES = {
    "fast": "far faster than the job's norm",
    "pasted": "mostly pasted rather than typed",
    "near_duplicate": "closer to another worker's earlier rewrite than to the source",
    WORTH_A_LISTEN: "a reading worth a listen",
    **typing_flags.CODES,
}


#: What each flag raised on a worker alone says, as a page names it beside its evidence.
WORKER_FLAG_NAMES = {
    "straight_lining": "the same rating again and again",
    "alternating": "ratings alternating between two values",
    "low_agreement": "low agreement with the other raters",
    "unreliable_rater": "answers the reliability model finds unreliable",
    "unreliable_voter": "votes the reliability model finds unreliable",
    "voted_down": "responses voted down more often than the job's",
}


def count_flags(response_flags: Mapping) -> dict[str, int]:
    """{code: responses carrying it} of a report's `responses` (response -> codes), most first."""
    counts = Counter(code for codes in response_flags.values() for code in codes)
    return dict(sorted(counts.items(), key=lambda c: (-c[1], c[0])))


def flag_name(code: str) -> str:
    """A flag in words (a response's, or a worker's alone); a code this module does not know
    (another run's flag) as itself."""
    return RESPONSE_FLAG_NAMES.get(code) or WORKER_FLAG_NAMES.get(code) or code.replace("_", " ")


#: How a page says each stored measure of a worker: (words, kind); kind says how the number reads.
MEASURE_WORDS = {
    "ratings": ("ratings", "count"),
    "mode_share": ("ratings of their most common value", "share"),
    "alternating_share": ("places where their ratings alternate", "share"),
    "agreement": ("agreement with the other raters of the same items", "share"),
    "typing_logged_fields": ("fields with a typing log", "count"),
    "typing_pasted_share": ("characters pasted or dropped in", "share"),
    "typing_median_iki_ms": ("median time between keys", "ms"),
    "reliability_answers": ("answers the reliability model saw", "count"),
    "reliability_accuracy": ("expected accuracy (reliability model)", "share"),
    "reliability_spammer_score": ("spammer score (reliability model; 0 = answers unrelated to the item)", "score"),
}


def described_measures(measures: Mapping) -> list[tuple[str, str]]:
    """A worker's stored measures as (words, number as read): shares in percent, counts whole, times
    in ms; each response flag's share first, named by what it marks. Measures not taken are left out."""
    described = []
    for name, value in measures.items():
        if value is None:
            continue
        code = name.removesuffix("_share")
        if name.endswith("_share") and code in RESPONSE_FLAG_WORDS:
            described.append((0, RESPONSE_FLAG_WORDS[code], _as_read(value, "share")))
            continue
        words, kind = MEASURE_WORDS.get(name, (name.replace("_", " "), "score"))
        described.append((1, words, _as_read(value, kind)))
    return [(words, shown) for _, words, shown in sorted(described, key=lambda row: row[0])]


def _as_read(value: float, kind: str) -> str:
    if kind == "share":
        return f"{value:.0%}"
    if kind == "count":
        return f"{int(value):,}"
    if kind == "ms":
        return f"{value:.0f} ms"
    return two_places(value)


def compute_flags(responses: pd.DataFrame, ratings: pd.DataFrame | None = None, texts: pd.DataFrame | None = None,
                  thresholds: FlagThresholds = FlagThresholds(), readings: pd.DataFrame | None = None) -> FlagReport:
    """Every flag for every worker in the tables; `worth_a_listen` only when `readings` is given (a
    job of spoken readings), so other jobs' workers carry no share of it."""
    ratings = empty(RATING_COLUMNS) if ratings is None else ratings
    texts = empty(TEXT_COLUMNS) if texts is None else texts
    report = FlagReport(responses_seen=len(responses))

    texts = _with_text_defaults(texts)
    response_flags = _response_flags(responses, texts, thresholds, report)
    if readings is not None:
        listen = readings_worth_a_listen(readings)
        response_flags[WORTH_A_LISTEN] = np.array(sorted(listen), dtype=np.int64)
        for rid, why in listen.items():
            report.evidence.setdefault(rid, {})[WORTH_A_LISTEN] = why

    per_worker_total = responses.groupby("worker").size()
    for code, ids in response_flags.items():
        for rid in ids.tolist():
            report.responses.setdefault(rid, []).append(code)
    worker_of = pd.Series(responses["worker"].to_numpy(), index=responses["response"].to_numpy())
    for worker in per_worker_total.index:  # a share for every worker, so a page can show 0%
        report.measures.setdefault(worker, {}).update({f"{code}_share": 0.0 for code in response_flags})
    for code, ids in response_flags.items():
        if len(ids) == 0:
            continue
        counts = worker_of.reindex(ids).value_counts()
        shares = counts / per_worker_total.reindex(counts.index)
        for worker, share in shares.items():
            n = int(counts[worker])
            report.measures.setdefault(worker, {})[f"{code}_share"] = float(share)
            if share >= thresholds.flag_share:
                report.workers.setdefault(worker, []).append(
                    WorkerFlag(code, f"{n} of {int(per_worker_total[worker])} {RESPONSE_FLAG_WORDS[code]} ({share:.0%})", float(share), n)
                )

    if len(ratings):
        _rating_flags(ratings, thresholds, report)
    for worker in per_worker_total.index:
        report.workers.setdefault(worker, [])
    return report


def _response_flags(responses, texts, thresholds: FlagThresholds, report: FlagReport) -> dict[str, np.ndarray]:
    """code -> the responses carrying it; each one's evidence written into `report`."""
    response_flags: dict[str, np.ndarray] = {}
    fast = fast_responses(responses, thresholds.fast_ratio)
    response_flags["fast"] = responses["response"].to_numpy()[fast]
    _fast_evidence(responses, fast, thresholds.fast_ratio, report)
    pasted = pasted_shares(texts, thresholds.paste_share)
    response_flags["pasted"] = pasted.index.to_numpy()
    for rid, (share, chars) in zip(pasted.index.tolist(), pasted.itertuples(index=False), strict=True):
        report.evidence.setdefault(rid, {})["pasted"] = f"{share:.0%} of {int(chars)} characters entered were pasted"
    duplicates = near_duplicate_evidence(texts, thresholds.near_duplicate_similarity)
    response_flags["near_duplicate"] = np.array(sorted(duplicates), dtype=np.int64)
    for rid, why in duplicates.items():
        report.evidence.setdefault(rid, {})["near_duplicate"] = why
    typed, summary = typing_evidence(texts, thresholds.typing())
    for worker, measures in summary.items():
        report.measures.setdefault(worker, {}).update(measures)
    for code, found in typed.items():
        response_flags[code] = np.array(sorted(found), dtype=np.int64)
        for rid, why in found.items():
            report.evidence.setdefault(rid, {})[code] = why
    return response_flags


def readings_worth_a_listen(readings: pd.DataFrame) -> dict[int, str]:
    """response -> why, for each response with a reading worth a listen: each such reading named
    ("reading 2: heard 3 of the turn's 11 words, 0.8 s of speech in a 4.1 s recording, WER 0.73"),
    readings apart by "; ". The same recording is looked for among all the table's readings (a file
    sent for several readings or turns); a reading not transcribed yet is judged on its speech."""
    rows = list(readings[READING_COLUMNS].itertuples(index=False, name=None))
    by_fingerprint: dict[str, list[tuple[int, int]]] = {}
    for rid, _worker, index, _turn, _hypothesis, _speech, _seconds, fp in rows:
        if isinstance(fp, str) and fp:
            by_fingerprint.setdefault(fp, []).append((int(rid), int(index)))
    found: dict[int, list[str]] = {}
    for rid, _worker, index, turn, hypothesis, speech, seconds, fp in sorted(rows, key=lambda row: (row[0], row[2])):
        rid, index = int(rid), int(index)
        same = by_fingerprint.get(fp, []) if isinstance(fp, str) and fp else []
        same_as = [
            f"reading {other_index + 1} of {'this response' if other == rid else f'response {other}'}"
            for other, other_index in same if (other, other_index) != (rid, index)
        ]
        heard = isinstance(hypothesis, str) and isinstance(turn, str) and turn.strip()
        why = listen_evidence(
            speech=_number(speech), seconds=_number(seconds), match=turn_match(turn, hypothesis) if heard else None, same_as=same_as,
        )
        if why:
            found.setdefault(rid, []).append(f"reading {index + 1}: {why}")
    return {rid: "; ".join(said) for rid, said in found.items()}


def _number(value) -> float | None:
    """A measure that may be missing (None, NaN: a reading stored before it was taken) as a float or None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(value) else value


def fast_responses(responses: pd.DataFrame, ratio: float) -> np.ndarray:
    """Boolean mask: time below `ratio` x its job's median time (responses without a time are never fast)."""
    seconds = responses["seconds"].astype(float)
    median = seconds.groupby(responses["job"]).transform("median")
    return (seconds < ratio * median).fillna(False).to_numpy(dtype=bool)


def _with_text_defaults(texts: pd.DataFrame) -> pd.DataFrame:
    """The texts table with the columns older callers leave out: one field, no source, and the
    rows' own order as the submission order."""
    missing = {"field": "", "source": "", "order": np.arange(len(texts))}
    extra = {k: v for k, v in missing.items() if k not in texts.columns}
    return texts.assign(**extra) if extra else texts


def _fast_evidence(responses: pd.DataFrame, fast: np.ndarray, ratio: float, report: FlagReport) -> None:
    if not fast.any():
        return
    seconds = responses["seconds"].astype(float)
    median = seconds.groupby(responses["job"]).transform("median").to_numpy()
    for rid, took, norm in zip(responses["response"].to_numpy()[fast].tolist(), seconds.to_numpy()[fast], median[fast], strict=True):
        report.evidence.setdefault(rid, {})["fast"] = (
            f"took {took:.0f} s; the job's median is {norm:.0f} s (flagged below {ratio:.0%} of it, {ratio * norm:.0f} s)"
        )


def pasted_shares(texts: pd.DataFrame, share: float) -> pd.DataFrame:
    """Per response at or above `share` pasted: (share pasted, characters entered), indexed by response.
    Telemetry is per field, so a response's fields are added up first."""
    frame = pd.DataFrame({
        "response": texts["response"].to_numpy(),
        "pasted": texts["pasted_chars"].astype(float).fillna(0).to_numpy(),
        "typed": texts["typed_chars"].astype(float).fillna(0).to_numpy(),
    }).groupby("response", sort=True).sum()
    total = frame["pasted"] + frame["typed"]
    shares = frame["pasted"] / total.where(total > 0, 1)
    keep = (total > 0) & (shares >= share)
    return pd.DataFrame({"share": shares[keep], "chars": total[keep]})


def typing_evidence(texts: pd.DataFrame, thresholds: typing_flags.TypingThresholds) -> tuple[dict, dict]:
    """(code -> {response: why}, worker -> typing summary) from the fields' typing logs (a field
    without one says nothing). Every code of `typing.CODES` is present, so a page can show 0% for
    each; the summary is the worker's logged fields, the share of their characters pasted or dropped,
    and the median of their fields' median key intervals."""
    found: dict[str, dict] = {code: {} for code in typing_flags.CODES}
    per_worker: dict = {}
    if "typing" not in texts.columns:
        return found, {}
    sources = texts["source"].tolist() if "source" in texts.columns else [""] * len(texts)
    rows = zip(texts["response"].tolist(), texts["worker"].tolist(), texts["field"].astype(str).tolist(),
               texts["text"].tolist(), texts["typing"].tolist(), sources, strict=True)
    judged: dict[int, list[dict]] = {}  # response -> its fields' features, for the rhythm flag's whole-response test
    read = []
    for rid, worker, name, text, record, source in rows:
        if not isinstance(record, dict):
            continue
        features = typing_flags.features(record, text or "")
        if isinstance(source, str) and source and text and "malformed" not in features:
            features["source_similarity"] = similarity(text, source)
        judged.setdefault(int(rid), []).append(features)
        read.append((int(rid), worker, name, features))
    for fields in judged.values():
        typing_flags.unless_all_retyped(fields)
    for rid, worker, name, features in read:
        _add_to_summary(per_worker.setdefault(worker, {"fields": 0, "entered": 0, "brought": 0, "ikis": []}), features)
        for code, why in typing_flags.field_flags(features, thresholds).items():
            earlier = found[code].get(rid)
            said = f"{name}: {why}" if name else why
            found[code][rid] = f"{earlier}; {said}" if earlier else said
    rhythm = found["transcription_rhythm"]
    for rid in list(rhythm):
        hesitated = typing_flags.response_hesitations(judged[rid], thresholds)
        if hesitated is None:
            continue
        hesitations, intervals = hesitated
        if hesitations / intervals >= thresholds.transcription_pause_share:
            del rhythm[rid]  # the response as a whole hesitates as composing does: one even field is no evidence
        elif len(judged[rid]) > 1:
            rhythm[rid] += (f" (the whole response: {hesitations} hesitations in {intervals} intervals, "
                            f"{hesitations / intervals:.1%})")
    summary = {
        worker: {
            "typing_logged_fields": s["fields"],
            "typing_pasted_share": s["brought"] / s["entered"] if s["entered"] else None,
            "typing_median_iki_ms": float(np.median(s["ikis"])) if s["ikis"] else None,
        }
        for worker, s in per_worker.items()
    }
    return found, summary


def _add_to_summary(summary: dict, features: dict) -> None:
    summary["fields"] += 1
    if "malformed" in features:
        return
    summary["entered"] += features["keyed"] + features["pasted"] + features["dropped"] + features["unkeyed"]
    summary["brought"] += features["pasted"] + features["dropped"]
    if features["median_iki_ms"] is not None:
        summary["ikis"].append(features["median_iki_ms"])


def similarity(a: str, b: str) -> float:
    """0-1 similarity of two texts after normalization (1 - normalized Indel distance)."""
    return Indel.normalized_similarity(a, b)


#: Near-duplicates: how much nearer to each other than to the source two texts must be (see below),
#: and the fewest words a text needs before its likeness to another says anything.
MARGIN = 0.5
MIN_WORDS = 5


def near_duplicate_evidence(texts: pd.DataFrame, threshold: float) -> dict:
    """response -> why, for each text at least `threshold` similar to an earlier text of another
    worker in the same field of the same item and closer to it than either text is to the source.
    Only the later text is flagged: the earlier one's author was copied, not copying."""
    texts = _with_text_defaults(texts)
    if len(texts) < 2:
        return {}
    frame = texts[["response", "worker", "item", "field", "text", "source", "order"]].sort_values(
        ["item", "field", "order"], kind="stable"
    )
    groups = pd.MultiIndex.from_arrays([frame["item"].to_numpy(), frame["field"].astype(str).to_numpy()])
    codes, _ = pd.factorize(groups)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[starts[1:], len(codes)]
    multi = np.flatnonzero(ends - starts >= 2)
    rids, workers = frame["response"].to_numpy(), frame["worker"].to_numpy()
    fields, texts_list, sources = frame["field"].astype(str).tolist(), frame["text"].tolist(), frame["source"].tolist()
    found = {}
    for g in multi.tolist():
        s, e = int(starts[g]), int(ends[g])
        normalized = [text_units.normalize(t or "") for t in texts_list[s:e]]
        # Short answers repeat honestly ("Thanks", "Cheap Thai food, please"): not evidence of copying.
        normalized = [t if len(t.split()) >= MIN_WORDS else "" for t in normalized]
        source = text_units.normalize(sources[s] or "")
        to_source = [Indel.normalized_similarity(t, source) if source else 0.0 for t in normalized]
        for j in range(1, e - s):  # j: the later text; i: an earlier one
            if not normalized[j] or int(rids[s + j]) in found:
                continue
            for i in range(j):
                if workers[s + i] == workers[s + j] or not normalized[i]:
                    continue
                between = Indel.normalized_similarity(normalized[i], normalized[j], score_cutoff=threshold)
                # At most half as far from each other as the nearer of them is from the source: two
                # typo versions that happen to share a misspelling are as far apart as each is from
                # the source, not half as far; a copy is nowhere near the source by comparison.
                if between and 1 - between <= MARGIN * (1 - max(to_source[i], to_source[j])):
                    what = f"{fields[s]} " if fields[s] else ""
                    found[int(rids[s + j])] = (
                        f"{what}text {between:.0%} similar to response {rids[s + i]} by another worker, submitted earlier;"
                        f" each is far less similar to the source ({to_source[j]:.0%} and {to_source[i]:.0%})"
                    )
                    break
    return found


def _rating_flags(ratings: pd.DataFrame, t: FlagThresholds, report: FlagReport) -> None:
    frame = ratings.sort_values(["worker", "key", "order"], kind="stable").reset_index(drop=True)
    workers = frame["worker"].to_numpy()
    values = frame["value"].to_numpy(dtype=float)
    keys = frame["key"].astype(str).to_numpy()
    n_per_worker = frame.groupby("worker").size()

    # Straight-lining: the share of the worker's most used value.
    mode_share = frame.groupby(["worker", "value"]).size().groupby(level=0).max() / n_per_worker
    # Alternating: v[i] == v[i-2] != v[i-1], within one worker and one key.
    same_run = np.zeros(len(frame), dtype=bool)
    same_run[2:] = (workers[2:] == workers[:-2]) & (keys[2:] == keys[:-2])
    alt = np.zeros(len(frame), dtype=bool)
    alt[2:] = (values[2:] == values[:-2]) & (values[2:] != values[1:-1])
    judged = pd.Series(same_run).groupby(workers).sum()
    alternations = pd.Series(alt & same_run).groupby(workers).sum()

    # Agreement with the other raters of the same item and key.
    agree, others = _agreement(frame, t.ordinal_keys)
    comparable = others > 0
    agree_share = pd.Series(np.where(comparable, agree / np.where(comparable, others, 1), np.nan)).groupby(workers)
    mean_agreement = agree_share.mean()
    n_comparable = pd.Series(comparable).groupby(workers).sum()

    for worker, n in n_per_worker.items():
        m = report.measures.setdefault(worker, {})
        m["ratings"] = int(n)
        m["mode_share"] = float(mode_share[worker])
        j = int(judged.get(worker, 0))
        m["alternating_share"] = float(alternations.get(worker, 0) / j) if j else None
        m["agreement"] = None if np.isnan(mean_agreement.get(worker, np.nan)) else float(mean_agreement[worker])
        flags = report.workers.setdefault(worker, [])
        if n >= t.pattern_min_ratings and m["mode_share"] >= t.straight_line_share:
            flags.append(WorkerFlag("straight_lining", f"{m['mode_share']:.0%} of {n} ratings are the same value", m["mode_share"], int(n)))
        if j >= t.pattern_min_ratings and m["alternating_share"] >= t.straight_line_share:
            flags.append(WorkerFlag("alternating", f"ratings alternate between two values in {m['alternating_share']:.0%} of {j} places", m["alternating_share"], j))
        c = int(n_comparable.get(worker, 0))
        if c >= t.pattern_min_ratings and m["agreement"] is not None and m["agreement"] < t.low_agreement:
            flags.append(WorkerFlag("low_agreement", f"agrees with the other raters of the same items {m['agreement']:.0%} of the time ({c} ratings)", m["agreement"], c))


def _agreement(frame: pd.DataFrame, ordinal_keys) -> tuple[np.ndarray, np.ndarray]:
    """Per rating: how many other raters of its (item, key) gave an agreeing value, and how many there are."""
    group = pd.MultiIndex.from_arrays([frame["item"].to_numpy(), frame["key"].astype(str).to_numpy()])
    gcode, _ = pd.factorize(group)
    vcode, domain = pd.factorize(frame["value"].to_numpy(dtype=float), sort=True)
    counts = np.zeros((gcode.max() + 1, len(domain)), dtype=np.int32)
    np.add.at(counts, (gcode, vcode), 1)
    totals = counts.sum(axis=1)
    others = totals[gcode] - 1
    same = counts[gcode, vcode] - 1
    if ordinal_keys:
        ordinal = frame["key"].astype(str).isin(list(ordinal_keys)).to_numpy()
        # Neighbouring values of the domain within one point count as agreement for ordinal keys.
        near = same.copy()
        for shift in (-1, 1):
            neighbour = vcode + shift
            valid = (neighbour >= 0) & (neighbour < len(domain))
            idx = np.clip(neighbour, 0, len(domain) - 1)
            close = valid & (np.abs(domain[idx] - domain[vcode]) <= 1)
            near = near + np.where(close, counts[gcode, idx], 0)
        same = np.where(ordinal, near, same)
    return same, others
