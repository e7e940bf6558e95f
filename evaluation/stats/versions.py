"""Which method computed a stored result, and what its outputs say when it is not today's. Pure.

Each kind of stored result that is computed once and read after declares here today's method and
its words: the ratings results (`CampaignResult.report["format"]`), a pairwise job's ranking
(`PairwiseReport.method`) and a FED set's results (`FedResult.method`). A number is raised with
every change to what a stored result of its kind says; one stored by an older method is never read
as current: it is computed again, and until then every output (page, CSV, Markdown, API) says so
first with `standing(kind, stored).note(then)`, `then` being what happens next in the reader's words.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResultKind:
    """A kind of stored result: today's method (`current`), what its outputs call it (`subject`,
    `verb`), what the stored number is called (`label`) and what an older one may get wrong
    (`consequence`, "" when nothing in particular)."""

    current: int
    subject: str
    verb: str
    label: str = "method"
    consequence: str = ""


#: The ratings results' report format (`evaluation.stats.report.build_report` writes it, the
#: campaign's inputs version names it). 7: objective metrics correlated on the uploaded and the
#: computed scores apart (score_sources), rank ranges from 1 + the entries significantly better;
#: 6: response length and score "too few" below 5 responses; 5: "better" from the Holm decision the
#: tie groups read; 4: pairwise intervals within the difference the scales allow, too few instances
#: to compare; 3: tie groups and rank ranges from Holm-adjusted comparisons, intervals on the scale,
#: "too few" correlations; 2: tie-group ranks, paired-difference pairwise table, rater-aware
#: intervals. A report that names no format (none has since format 2) is not judged by it.
RATINGS = ResultKind(
    current=7, subject="These results", verb="were", label="report format",
    consequence="their rank ranges may contradict the pairwise table's Holm-adjusted decisions",
)

#: A pairwise job's stored ranking. 2: the style-controlled ranking's tie groups and rank ranges from
#: Holm-adjusted Wald tests of every pair (it ranked by the point estimates alone, 1, 2, 3 where the
#: intervals overlapped); 1: rank ranges from 1 + the entries significantly better (Holm) to N less
#: those significantly worse; 0: reports stored before the method was recorded (ranges from the tie
#: group's first place).
PAIRWISE = ResultKind(
    current=2, subject="This ranking", verb="was",
    consequence="its rank ranges may contradict the Holm-adjusted pairwise decisions",
)

#: A FED set's stored results. 1: the first stored results (clustered means with `ci_clipped`,
#: agreement with its bootstrap interval).
FED = ResultKind(current=1, subject="These results", verb="were")


@dataclass(frozen=True)
class Standing:
    """A stored result's method beside today's. `stored`: the number it was stored with (None, or
    anything not a whole number: it names none, and is not judged by it)."""

    kind: ResultKind
    stored: int | None

    @property
    def older(self) -> bool:
        return self.stored is not None and self.stored < self.kind.current

    @property
    def current(self) -> bool:
        return not self.older

    def note(self, then: str = "") -> str:
        """What every output of a result an older method computed says first, without a closing full
        stop (each output ends it its own way); "" for a current one. `then`: what happens next."""
        if not self.older:
            return ""
        kind = self.kind
        words = (f"{kind.subject} {kind.verb} computed with an older method ({kind.label} {self.stored}; "
                 f"the current one is {kind.current})")
        if kind.consequence:
            words += f": {kind.consequence}"
        if then:
            words += f". {then}" if kind.consequence else f": {then}"
        return words


def standing(kind: ResultKind, stored: object) -> Standing:
    """Whether a result stored with method `stored` is current for its kind, and its note if not."""
    return Standing(kind, stored if isinstance(stored, int) else None)
