"""Pure quality-control modules (no Django import): gold scheduling and worker flags."""
