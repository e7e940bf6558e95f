"""Reads: how robust a pairwise job's ranking is (issue 24). Beside the Bradley-Terry ranking of
`selectors.pairwise_ranking`, from the same counted responses: the votes that hold each order
(`stats.fragility`), the ranking with response length and formatting controlled, and the share of
choices that went to the output shown on the left (`stats.style`). Computed on request, as the
ranking is."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from annotation.lazy_modules import lazy
from evaluation.campaigns.selectors import pairwise_records

if TYPE_CHECKING:
    from evaluation.stats import bradley_terry, fragility, style
else:
    bradley_terry = lazy("evaluation.stats.bradley_terry")
    fragility = lazy("evaluation.stats.fragility")
    style = lazy("evaluation.stats.style")


def pairwise_controls(job, ranking: bradley_terry.BradleyTerryBootstrap | None) -> dict | None:
    """{"fragility", "style" (rows beside the raw ranking, coefficients; or "error"), "position"}; None without a ranking."""
    if ranking is None:
        return None
    records = pairwise_records(job)
    comparisons = [(r["a"], r["b"], r["outcome"], r["instance"]) for r in records]
    order = [row.system for row in sorted(ranking.fit.per_system, key=lambda row: -row.log_strength)]
    board = fragility.bt_leaderboard(comparisons, order, mark_share=settings.QUORUM_FRAGILITY_MARK_SHARE)
    styled = [style.StyledComparison(r["a"], r["b"], r["outcome"], style.features(r["text_a"]), style.features(r["text_b"])) for r in records]
    try:
        controlled = style.fit(styled)
        styled_result = {**controlled, "rows": style.beside_raw(controlled, bradley_terry.export_rows(ranking))}
    except ValueError as exc:
        styled_result = {"error": str(exc)}
    position = style.position_bias([(r["outcome"], r["left"]) for r in records if r["left"] is not None])
    return {"fragility": board, "fragility_rows": fragility.display_rows(board), "fragility_mark": fragility.mark_text(board),
            "style": styled_result, "position": position}
