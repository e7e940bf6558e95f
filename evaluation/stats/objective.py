"""Objective scores as the challenges published them (pure: no Django).

DSTC9 Track 1 (`dstc9_scores`): the official scorer (`scripts/scores.py` of the challenge's
repository) counts detection true/false positives and negatives, and sums each selection and
generation metric over the instances both the labels and the entry mark as knowledge-seeking. Every
sum then becomes an F-measure: precision = sum / (entry's positives), recall = sum / (true
positives + false negatives), F1 of the two. Detection reports precision, recall and F1; the other
metrics report that F1. Texts are normalised as the scorer did (lower case, punctuation and the
articles a/an/the replaced by spaces, whitespace collapsed) before:

- BLEU-n: NLTK's `sentence_bleu` against the one reference with uniform weights 1/n, no smoothing
  (NLTK is the library the scorer used);
- ROUGE-1/2/L: the F score of the `rouge` package (pltrdy's pure-Python ROUGE, the one the scorer
  imported), asked for as its version 1.0.0 computed them (see `rouge_f`); an empty normalised
  text, which that package refuses, scores 0;
- METEOR: NLTK's `single_meteor_score` on the normalised tokens. It needs the WordNet 3.0 database,
  which no PyPI package ships (NLTK downloads it at run time, which Quorum never does); when
  `wordnet_dir` names a folder holding it (Debian's `wordnet-base`: /usr/share/wordnet) it is
  computed, otherwise METEOR is left out and taken from the uploaded score.csv.

DSTC6 Track 1 (`check_dstc6_results`, `dstc6_precision`): a result file is a list of
{"dialog_id", "lst_candidate_id": [{"candidate_id", "rank"}, ...]}; every dialog of the test set
appears once, every one of its candidates is ranked exactly once with ranks 1..n. Precision@k is the
share of dialogs whose correct candidate is ranked k or better.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DETECTION = ("detection_prec", "detection_rec", "detection_f1")
SELECTION = ("selection_mrr@5", "selection_r@1", "selection_r@5")
BLEU = ("generation_bleu-1", "generation_bleu-2", "generation_bleu-3", "generation_bleu-4")
METEOR = "generation_meteor"
ROUGE = ("generation_rouge_1", "generation_rouge_2", "generation_rouge_l")
DSTC9_METRICS = DETECTION + SELECTION + BLEU + (METEOR,) + ROUGE
WORDNET_FILES = ("data.noun", "index.noun", "data.verb", "index.verb", "data.adj", "index.adj", "data.adv", "index.adv")
METEOR_REASON = (
    "METEOR needs the WordNet 3.0 database, which no PyPI package ships; install Debian's wordnet-base "
    "(or set QUORUM_WORDNET_DIR) to compute it, until then it is taken from the uploaded score.csv"
)

# The official scorer's normalisation: punctuation, then the articles, become spaces.
_PUNCTUATION = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    text = _PUNCTUATION.sub(" ", text.lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


# ---------------------------------------------------------------------------------------------
# DSTC9 Track 1


def _same_snippet(a: Mapping, b: Mapping) -> bool:
    return (a.get("domain"), a.get("entity_id"), a.get("doc_id")) == (b.get("domain"), b.get("entity_id"), b.get("doc_id"))


def _relevance(reference: Sequence[Mapping], predicted: Sequence[Mapping], k: int) -> list[bool]:
    return [any(_same_snippet(p, r) for r in reference) for p in list(predicted)[:k]]


def reciprocal_rank(reference, predicted, k: int = 5) -> float:
    relevance = _relevance(reference, predicted, k)
    return 1.0 / (relevance.index(True) + 1) if True in relevance else 0.0


def recall_at(reference, predicted, k: int) -> float:
    return 1.0 if True in _relevance(reference, predicted, k) else 0.0


def bleu(reference: str, hypothesis: str, n: int) -> float:
    """BLEU-n of two texts after normalisation: one of `bleu_1_to_4`'s values."""
    return bleu_1_to_4(normalize(reference).split(), normalize(hypothesis).split())[n - 1]


_BLEU_WEIGHTS = [(1.0 / n,) * n for n in range(1, len(BLEU) + 1)]


def bleu_1_to_4(ref: list[str], hyp: list[str]) -> list[float]:
    """BLEU-1 to BLEU-4 of normalised tokens, each the value `bleu` gives: NLTK counts the n-grams
    once for all four weightings (its list of weights) instead of once per BLEU-n."""
    from nltk.translate.bleu_score import sentence_bleu  # imported here: NLTK is slow to import

    # NLTK warns when an n-gram order has no match and uses the smallest float there, as in 2020.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [float(value) for value in sentence_bleu([ref], hyp, _BLEU_WEIGHTS)]


def rouge_f(reference: str, hypothesis: str) -> dict[str, float]:
    """ROUGE-1, -2 and -L F scores of the `rouge` package on the normalised texts; 0 for an empty one."""
    return _rouge_f_normalised(normalize(reference), normalize(hypothesis))


def _rouge_f_normalised(ref: str, hyp: str) -> dict[str, float]:
    from rouge import Rouge

    if not ref or not hyp:
        return {"rouge-1": 0.0, "rouge-2": 0.0, "rouge-l": 0.0}
    # The scorer ran `rouge` 1.0.0, which counted repeated n-grams for ROUGE-1/2 (exclusive=False)
    # and forced exclusive=True inside ROUGE-L; 1.0.1 passes one flag to both, so each is asked for
    # as 1.0.0 computed it.
    counted = Rouge(metrics=["rouge-1", "rouge-2"], exclusive=False).get_scores(hyp, ref)[0]
    lcs = Rouge(metrics=["rouge-l"], exclusive=True).get_scores(hyp, ref)[0]
    return {"rouge-1": float(counted["rouge-1"]["f"]), "rouge-2": float(counted["rouge-2"]["f"]), "rouge-l": float(lcs["rouge-l"]["f"])}


@functools.cache
def wordnet_reader(wordnet_dir: str | Path | None):
    """NLTK's WordNet reader over a WordNet 3.0 database folder, or None where it is not there.

    Debian's folder lacks the `lexnames` list NLTK reads (the 45 lexicographer file names of
    WordNet 3.0, used only by `Synset.lexname`), so the folder is read through a copy of its files
    with that list beside them (`_with_lexnames`)."""
    if not wordnet_dir:
        return None
    folder = Path(wordnet_dir)
    if not all((folder / name).is_file() for name in WORDNET_FILES):
        return None
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    warnings.filterwarnings("ignore", message="The multilingual functions are not available")
    roots = [folder.resolve()]
    if not (folder / "lexnames").is_file():
        roots.append(_with_lexnames(folder).resolve())
    # NLTK reads corpora only under its data path (nltk.pathsec): the folder (and the copy whose
    # links lead into it) are added to it, as its refusal message says to.
    for root in roots:
        if str(root) not in nltk.data.path:
            nltk.data.path.append(str(root))

    class WordNet30(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            # NLTK maps another WordNet onto its downloaded 3.0 for the multilingual data (OMW),
            # which Quorum does not use; this folder is 3.0 itself, so there is nothing to map.
            return None

    return WordNet30(str(roots[-1]), None)


_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object noun.person "
    "noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition verb.consumption "
    "verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
    "verb.weather adj.ppl"
).split()


def _with_lexnames(folder: Path) -> Path:
    """A copy of `folder` with `lexnames`, kept in the temporary directory under a name made of the
    folder and its files' sizes and times, so every process reuses one copy (built aside, then
    renamed into place: a reader never sees half of it)."""
    files = sorted(path for path in folder.iterdir() if path.is_file())
    stamp = hashlib.sha256(repr([(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"quorum-wordnet-{stamp}"
    if (target / "lexnames").is_file():
        return target
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    for path in files:  # copied: NLTK refuses a link that leads out of the folder it reads
        shutil.copyfile(path, staging / path.name)
    kinds = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
    lines = [f"{i:02d}\t{name}\t{kinds[name.split('.')[0]]}" for i, name in enumerate(_LEXNAMES)]
    (staging / "lexnames").write_text("\n".join(lines) + "\n")
    try:
        os.rename(staging, target)
    except OSError:  # another process put its copy there first
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _meteor_tokens(ref: list[str], hyp: list[str], wordnet) -> float:
    """METEOR of normalised, split texts (the scorer's own order: normalise, split, then score)."""
    from nltk.translate.meteor_score import single_meteor_score

    stemmer, synonyms = _word_lookups(wordnet)
    return float(single_meteor_score(ref, hyp, stemmer=stemmer, wordnet=synonyms))


_WORDS_REMEMBERED = 100_000


@functools.cache
def _word_lookups(wordnet):
    """A Porter stemmer and a WordNet whose answers per word are remembered: METEOR stems and looks
    up every word of every response, and a test set's responses share a small vocabulary, so
    without this nearly all of its time goes to repeating the same lookups. Both are what
    `single_meteor_score` calls (`stem(word)`, `synsets(word)`), answering as NLTK's own would."""
    from types import SimpleNamespace

    from nltk.stem.porter import PorterStemmer

    stem = functools.lru_cache(maxsize=_WORDS_REMEMBERED)(PorterStemmer().stem)
    synsets = functools.lru_cache(maxsize=_WORDS_REMEMBERED)(wordnet.synsets)
    return SimpleNamespace(stem=stem), SimpleNamespace(synsets=synsets)


@dataclass
class _Sums:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    totals: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.totals[name] = self.totals.get(name, 0.0) + value

    def f1(self, total: float) -> tuple[float, float, float]:
        precision = total / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = total / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def _add_instance(sums: _Sums, label: Mapping, output: Mapping, wordnet) -> None:
    if not label.get("target"):
        if output.get("target") is True:
            sums.fp += 1
        else:
            sums.tn += 1
        return
    if output.get("target") is not True:
        sums.fn += 1
        return
    sums.tp += 1
    reference, predicted = label.get("knowledge") or [], output.get("knowledge") or []
    sums.add("selection_mrr@5", reciprocal_rank(reference, predicted, 5))
    sums.add("selection_r@1", recall_at(reference, predicted, 1))
    sums.add("selection_r@5", recall_at(reference, predicted, 5))
    ref_text, hyp_text = normalize(label.get("response") or ""), normalize(output.get("response") or "")
    ref, hyp = ref_text.split(), hyp_text.split()
    for name, value in zip(BLEU, bleu_1_to_4(ref, hyp), strict=True):
        sums.add(name, value)
    for key, value in _rouge_f_normalised(ref_text, hyp_text).items():
        sums.add("generation_rouge_" + key.split("-")[1], value)
    if wordnet is not None:
        sums.add(METEOR, _meteor_tokens(ref, hyp, wordnet))


def dstc9_scores(labels: Sequence[Mapping], outputs: Sequence[Mapping], *, wordnet=None, progress=None) -> dict[str, float]:
    """Every DSTC9 Track 1 metric of `outputs` against `labels` (aligned lists), as the official
    scorer computes it; METEOR only with a `wordnet` reader (see `wordnet_reader`). `progress`, if
    given, is called with the number of instances done every 500 instances."""
    if len(labels) != len(outputs):
        raise ValueError(f"the entry has {len(outputs)} instances but the labels have {len(labels)}")
    sums = _Sums()
    for index, (label, output) in enumerate(zip(labels, outputs, strict=True), start=1):
        _add_instance(sums, label, output, wordnet)
        if progress is not None and index % 500 == 0:
            progress(index)
    precision, recall, f1 = sums.f1(float(sums.tp))
    scores = {"detection_prec": precision, "detection_rec": recall, "detection_f1": f1}
    for name in SELECTION + BLEU + ((METEOR,) if wordnet is not None else ()) + ROUGE:
        scores[name] = sums.f1(sums.totals.get(name, 0.0))[2]
    return {name: scores[name] for name in DSTC9_METRICS if name in scores}


def score_differences(computed: Mapping[str, float], published: Mapping[str, float], tolerance: float = 0.0) -> list[dict]:
    """Per metric both have: computed, published, their difference, and whether it is within `tolerance`."""
    rows = []
    for metric in DSTC9_METRICS:
        if metric in computed and metric in published:
            difference = computed[metric] - published[metric]
            rows.append({
                "metric": metric, "computed": computed[metric], "published": published[metric],
                "difference": difference, "within": abs(difference) <= tolerance,
            })
    return rows


# ---------------------------------------------------------------------------------------------
# DSTC6 Track 1


class Dstc6ResultProblem(ValueError):
    """A DSTC6 result file that cannot be scored; the message names the place (line, dialog, candidate)."""


@dataclass(frozen=True)
class Dstc6Dialog:
    dialog_id: str
    candidates: tuple[str, ...]
    answer: str | None


def _place(line: int | None, dialog=None, candidate=None) -> str:
    parts = [f"line {line}" if line is not None else None, f"dialog {dialog}" if dialog is not None else None,
             f"candidate {candidate}" if candidate is not None else None]
    return ", ".join(p for p in parts if p)


def _check_ranking(dialog: Dstc6Dialog, ranking, line: int | None) -> dict[str, int]:
    if not isinstance(ranking, list):
        raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id)}: lst_candidate_id must be a list of {{candidate_id, rank}}")
    ranks: dict[str, int] = {}
    for row in ranking:
        candidate = row.get("candidate_id") if isinstance(row, dict) else None
        if candidate is None:
            raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id)}: every element of lst_candidate_id needs a candidate_id and a rank")
        candidate = str(candidate)
        rank = row.get("rank")
        if candidate not in dialog.candidates:
            raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id, candidate)}: not a candidate of this dialog")
        if candidate in ranks:
            raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id, candidate)}: ranked twice")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= len(dialog.candidates):
            raise Dstc6ResultProblem(
                f"{_place(line, dialog.dialog_id, candidate)}: rank {rank!r} is not a whole number from 1 to {len(dialog.candidates)} (ranks are 1-indexed)"
            )
        ranks[candidate] = rank
    missing = [c for c in dialog.candidates if c not in ranks]
    if missing:
        raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id, missing[0])}: not ranked ({len(missing)} candidate(s) missing)")
    if sorted(ranks.values()) != list(range(1, len(dialog.candidates) + 1)):
        raise Dstc6ResultProblem(f"{_place(line, dialog.dialog_id)}: the ranks must be 1 to {len(dialog.candidates)}, each used once")
    return ranks


def check_dstc6_results(dialogs: Iterable[Dstc6Dialog], results, lines: Sequence[int] | None = None) -> dict[str, dict[str, int]]:
    """The rank of every candidate of every dialog, checked; `lines[i]` is the line where result i
    starts (for the messages). Refused (Dstc6ResultProblem) with its place on the first problem."""
    expected = {d.dialog_id: d for d in dialogs}
    if not isinstance(results, list):
        raise Dstc6ResultProblem("the result file must be a JSON list with one {dialog_id, lst_candidate_id} per dialog")
    ranked: dict[str, dict[str, int]] = {}
    for index, result in enumerate(results):
        line = lines[index] if lines is not None and index < len(lines) else None
        if not isinstance(result, dict) or "dialog_id" not in result or "lst_candidate_id" not in result:
            raise Dstc6ResultProblem(f"{_place(line) or f'result {index + 1}'}: each result needs dialog_id and lst_candidate_id")
        dialog_id = str(result["dialog_id"])
        if dialog_id not in expected:
            raise Dstc6ResultProblem(f"{_place(line, dialog_id)}: not a dialog of the test set")
        if dialog_id in ranked:
            raise Dstc6ResultProblem(f"{_place(line, dialog_id)}: the dialog has a second result")
        ranked[dialog_id] = _check_ranking(expected[dialog_id], result["lst_candidate_id"], line)
    missing = [d for d in expected if d not in ranked]
    if missing:
        raise Dstc6ResultProblem(f"{_place(None, missing[0])}: no result ({len(missing)} dialog(s) missing)")
    return ranked


def dstc6_precision(dialogs: Iterable[Dstc6Dialog], ranked: Mapping[str, Mapping[str, int]], ks=(1, 2, 5)) -> dict[str, float]:
    """precision@k: the share of the dialogs with a known answer whose answer is ranked k or better."""
    answers = {d.dialog_id: d.answer for d in dialogs if d.answer is not None}
    if not answers:
        raise Dstc6ResultProblem("no dialog of the test set has a known answer to score against")
    return {f"precision@{k}": sum(ranked[dialog][answer] <= k for dialog, answer in answers.items()) / len(answers) for k in ks}
