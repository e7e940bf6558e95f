"""How robust a pairwise job's ranking is (issue 24). Beside the Bradley-Terry ranking, from the same
counted votes (`selectors.pairwise_records`): the votes that hold each order (`stats.fragility`),
the ranking with response length and formatting controlled, and the share of choices that went to
the output shown on the left (`stats.style`). Computed with the ranking into the job's stored
report (`services/pairwise.py`), never on a page's request."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    from evaluation.stats import bradley_terry, fragility, style
else:
    bradley_terry = lazy("evaluation.stats.bradley_terry")
    fragility = lazy("evaluation.stats.fragility")
    style = lazy("evaluation.stats.style")


def pairwise_controls(records: list[dict], ranking: bradley_terry.BradleyTerryBootstrap, step=lambda: None) -> dict:
    """{"fragility", "fragility_rows", "fragility_mark", "style" (rows beside the raw ranking,
    coefficients; or "error"), "position"} of `records` (`selectors.pairwise_records`); `step()`
    is called after the fragility search and after the style fit (a run's progress)."""
    comparisons = [(r["a"], r["b"], r["outcome"], r["instance"]) for r in records]
    order = [row.system for row in sorted(ranking.fit.per_system, key=lambda row: -row.log_strength)]
    board = fragility.bt_leaderboard(comparisons, order, mark_share=settings.QUORUM_FRAGILITY_MARK_SHARE)
    step()
    styled = [style.StyledComparison(r["a"], r["b"], r["outcome"], style.features(r["text_a"]), style.features(r["text_b"])) for r in records]
    try:
        controlled = style.fit(styled)
        styled_result = {**controlled, "rows": style.beside_raw(controlled, bradley_terry.export_rows(ranking))}
    except ValueError as exc:
        styled_result = {"error": str(exc)}
    step()
    position = style.position_bias([(r["outcome"], r["left"]) for r in records if r["left"] is not None])
    return {"fragility": board, "fragility_rows": fragility.display_rows(board), "fragility_mark": fragility.mark_text(board),
            "style": styled_result, "position": position}
