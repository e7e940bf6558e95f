"""The stored report's format number, apart from `report.py` so that a campaign's inputs version can
be computed without loading numpy, pandas and SciPy (`campaigns/services/inputs.py`)."""

REPORT_FORMAT = 7  # 7: objective metrics correlated on the uploaded and the computed scores apart (score_sources), rank ranges from 1 + the entries significantly better; 6: response length and score "too few" below 5 responses; 5: "better" from the Holm decision the tie groups read; 4: pairwise intervals within the difference the scales allow, too few instances to compare; 3: tie groups and rank ranges from Holm-adjusted comparisons, intervals on the scale, "too few" correlations; 2: tie-group ranks, paired-difference pairwise table, rater-aware intervals
