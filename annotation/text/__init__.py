"""Pure text work, no Django: slot-value highlighting, diffs, script-aware measures, the rewrite checks,
entity lists, QA pairs, typing logs and the one Problem type of answer validation."""
