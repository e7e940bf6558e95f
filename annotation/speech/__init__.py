"""Speech engine: audio checks, text-to-speech, speech recognition and word error rate.

Pure Python (no Django import): callers pass settings in as arguments (see `config.py` for
the one place that reads Django settings). Used by the spoken-reading task type and by the
speech-error simulation (`simulate.py`, `manage.py speech_errors`).
"""
