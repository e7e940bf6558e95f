"""Quorum's performance harness (`make bench`). Every figure is a ratio against a baseline run in the same process tree."""
