"""The export's reliability files and README section (issue 22). Pure: no Django import.

- `worker_reliability.csv`: per worker and role the stored model's numbers (the audit of workers
  beside `responses.csv`): as a rater or voter the expected accuracy and the spammer score with
  their 95% intervals; as a writer the expected share of their voted parts judged usable (in the
  accuracy columns).
- the README says which rule decided the votes, and what the model columns of `items.csv` mean.
"""
from collections.abc import Mapping, Sequence

from quorum import csv_safety

WORKER_COLUMNS = ["worker", "role", "job_id", "answers", "accuracy", "accuracy_low", "accuracy_high",
                  "spammer_score", "spammer_low", "spammer_high", "fitted_at"]
WORKER_FILE = "worker_reliability.csv"


def write_workers(fh, rows: Sequence[Mapping]) -> None:
    writer = csv_safety.Writer(fh)
    writer.writerow(WORKER_COLUMNS)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row[c] for c in WORKER_COLUMNS])


def readme_section(decision: Mapping, model_columns: Sequence[str] = ()) -> str:
    lines = ["", "## Who decided, and how sure", ""]
    if not decision.get("voting"):
        lines.append("- No vote decided this job's responses.")
    elif decision["rule"] == "model":
        lines.append(
            f"- Votes were decided by the reliability model (Dawid-Skene, each voter weighed by the confusion matrix the last "
            f"flag run stored): a response was re-collected or passed once the posterior that it is unusable was "
            f"{decision['model_sure']:.0%} sure either way, after {decision['votes_per_response']} votes and up to "
            f"{decision['model_max_votes']}."
        )
    else:
        lines.append(
            f"- Votes were decided by the published rule (CGoDial): {decision['against_threshold']} or more of "
            f"{decision['votes_per_response']} votes against re-collect a response."
        )
    lines.append(
        f"- `{WORKER_FILE}`: per worker and role, the reliability model's expected accuracy and spammer score "
        "(0 = answers unrelated to the item, 1 = perfect) with 95% intervals; for writers the expected share of "
        "their voted parts judged usable. Empty when no flag run has fitted a model."
    )
    if model_columns:
        lines.append(
            "- `items.csv`: beside the majority, `<question>_model` is the model's posterior outcome and "
            "`<question>_model_confidence` its probability, as the last flag run fitted it."
        )
    return "\n".join(lines) + "\n"
