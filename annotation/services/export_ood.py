"""The out-of-domain test set of an export (RADDLE, PROTOCOLS.md 6c): the exported dialogs as
imported, with user turns replaced or interleaved, by seed and rate, by utterances of another
imported corpus (`exporters.out_of_domain.mix`). Written as `out_of_domain/` in the job corpus's
own format beside the other test sets, with the mapping in the manifest."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..exporters import ExportError
from ..exporters import out_of_domain as ood
from ..selectors import out_of_domain as reads

SET_NAME = ood.SET_NAME


@dataclass(frozen=True)
class OutOfDomain:
    """An export's out-of-domain option: the corpus drawn from, the share of user turns, the seed, the mode."""

    corpus_id: int
    rate: float
    seed: int = 0
    mode: str = "replace"


def check_out_of_domain(job, option: OutOfDomain | None) -> None:
    """Refuse an option the export cannot carry out, before anything is recorded or written."""
    if option is None:
        return
    if job.corpus_id is None:
        raise ExportError(f"Job {job.id} is not over a corpus, so it has no dialogs to mix out-of-domain utterances into.")
    ood.check_options(option.rate, option.seed, option.mode)
    corpus = reads.corpus_named(option.corpus_id)
    if corpus is None:
        raise ExportError(f"There is no corpus {option.corpus_id!r} to draw out-of-domain utterances from; import it first.",
                          field="out_of_domain_corpus")
    if corpus.pk == job.corpus_id:
        raise ExportError("The out-of-domain utterances must come from another corpus than the job's own.", field="out_of_domain_corpus")


def write_out_of_domain(sources, writer_cls, corpus_meta, staging: Path, option: OutOfDomain, *, directory_taken=()) -> tuple[list[str], dict]:
    """Write `out_of_domain/` from `sources` (the exported dialogs as imported); return its files and
    the manifest's part (settings, counts and the mapping of every new turn)."""
    if SET_NAME in directory_taken:
        raise ExportError(f"The job already has a test set named {SET_NAME}; rename that variant to add the out-of-domain set.")
    corpus = reads.corpus_named(option.corpus_id)
    if corpus is None:
        raise ExportError(f"The corpus {option.corpus_id!r} to draw out-of-domain utterances from no longer exists.")
    pool = reads.user_utterances(corpus)
    if len(pool) > reads.MAX_POOL:
        raise ExportError(f"Corpus {corpus.name!r} has more than {reads.MAX_POOL:,} user turns; choose a smaller one to draw from.")
    dialogs, mapping = ood.mix(sources, pool, rate=option.rate, seed=option.seed, mode=option.mode)
    writer = writer_cls(staging / SET_NAME, corpus_meta)
    try:
        for dialog in dialogs:
            writer.add(dialog)
        files = [f"{SET_NAME}/{name}" for name in writer.finish()]
    finally:
        writer.close()
    user_turns = sum(1 for d in sources for t in d.turns if t.speaker == "user" and t.text.strip())
    manifest = {
        SET_NAME: {
            "source": "the exported dialogs as imported (not the rewrites)",
            "drawn_from": {"id": corpus.pk, "name": corpus.name, "source_format": corpus.source_format, "utterances": len(pool)},
            "mode": option.mode, "rate": option.rate, "seed": option.seed,
            "default_answer": ood.DEFAULT_ANSWER if option.mode == "interleave" else None,
            "user_turns": user_turns, "out_of_domain_turns": len(mapping),
            "label": "each new user turn is labelled out of scope as the format allows (docs/formats.md)",
            "mapping": mapping,
        }
    }
    return files, manifest
