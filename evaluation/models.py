"""What the benchmark publishes (systems, submissions, campaigns, scores). See DESIGN.md."""
