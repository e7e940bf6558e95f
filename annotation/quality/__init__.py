"""Pure quality-control modules (no Django import): agreement, gold scheduling, worker flags and reliability."""
