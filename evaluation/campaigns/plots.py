"""PNG plots of a stored report (matplotlib, Agg backend: no display needed). No Django."""
from __future__ import annotations


def _pyplot():
    """matplotlib's pyplot on the Agg backend, imported when a plot is first drawn: web workers that
    never draw one do not carry matplotlib (issue 26)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _has_ratings(system) -> bool:
    return any(q["ratings"] for q in system["questions"].values())


def scores_with_intervals(report: dict, path) -> None:
    """One panel per question plus the final score: points with their bootstrap intervals."""
    plt = _pyplot()
    systems = [s for s in reversed(report["systems"]) if _has_ratings(s)]  # best at the top; unrated rows are not drawn at 0
    panels = report["questions"] + ["final"]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 0.4 * len(systems) + 1.5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, panel in zip(axes, panels, strict=False):
        for y, system in enumerate(systems):
            part = system if panel == "final" else system["questions"][panel]
            score = part["final"] if panel == "final" else part["score"]
            low = part["final_ci_low"] if panel == "final" else part["ci_low"]
            high = part["final_ci_high"] if panel == "final" else part["ci_high"]
            if score is None:
                continue
            color = "tab:blue" if system["kind"] == "entry" else "tab:gray"
            ax.errorbar(score, y, xerr=[[score - (low if low is not None else score)], [(high if high is not None else score) - score]], fmt="o", color=color, capsize=3)
        ax.set_title(panel.capitalize())
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(systems)))
    axes[0].set_yticklabels([s["system"] for s in systems])
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def rating_distributions(report: dict, path) -> None:
    """Stacked share of ratings 1-5 per system, one panel per question."""
    plt = _pyplot()
    distribution = report["rating_distribution"]
    systems = [s["system"] for s in reversed(report["systems"]) if _has_ratings(s)]
    questions = report["questions"]
    fig, axes = plt.subplots(1, len(questions), figsize=(5 * len(questions), 0.4 * len(systems) + 1.5), sharey=True, squeeze=False)
    colors = ["#d7191c", "#fdae61", "#ffffbf", "#a6d96a", "#1a9641"]
    for ax, question in zip(axes[0], questions, strict=False):
        left = [0.0] * len(systems)
        for value, color in zip(range(1, 6), colors, strict=False):
            shares = []
            for _k, system in enumerate(systems):
                counts = distribution[system][question]
                total = sum(counts.values()) or 1
                shares.append(counts[str(value)] / total)
            ax.barh(range(len(systems)), shares, left=left, color=color, label=str(value))
            left = [a + b for a, b in zip(left, shares, strict=False)]
        ax.set_title(question.capitalize())
        ax.set_xlim(0, 1)
    axes[0][0].set_yticks(range(len(systems)))
    axes[0][0].set_yticklabels(systems)
    axes[0][-1].legend(title="rating", loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
