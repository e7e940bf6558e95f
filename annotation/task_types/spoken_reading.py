"""CGoDial spoken features (PROTOCOLS.md 6b): read one user turn aloud k times, varying the
expression slightly under the same meaning; an ASR backend transcribes each reading into noisy
text, so each dialog becomes k dialogs with spoken variation and ASR noise.

The page records in the browser (static/spoken.js), decodes each recording there and uploads it as
16-bit PCM WAV, mono, 16 kHz, so the server needs no codec. Each reading is an upload field
(`reading_1` … `reading_k`, see the upload part of the contract in base.py): `validate` checks
it with `annotation.speech.audio.check_recording` (a WAV, the sample rate, the duration bounds, not
silent) and refuses a bad one with what to fix; a good one becomes an `Upload` that
`services.readings` stores as a `SpokenReading` and sends to transcription. The stored answers keep
each reading's duration and sample rate; the hypothesis lives on the reading row.
"""
from collections.abc import Mapping
from typing import Any

from ..exporters.base import TurnRecord
from ..exporters.readme import DIALOGS_RULE, TestSetWords
from ..exporters.selection import passed_first, values_heard, voted_down_on
from ..speech.audio import RecordingError, check_recording, write_wav
from ..speech.evidence import doubts, fingerprint, speech_seconds, turn_match
from .base import Problem, TaskType, TaskTypeSettingsError, Upload, upload_bytes
from .capabilities import ExportsFiles, ExportsTestSets, FromCorpusTurns, TakesUploads, Votable
from .registration import register

MAX_READINGS = 10
#: The page's recorder stops itself here; the server's bound is the job's `max_seconds`.
HARD_MAX_SECONDS = 120.0
AUDIO_MEDIA_TYPE = "audio/wav"


def reading_field(index: int) -> str:
    """The upload field of reading `index` (from 0)."""
    return f"reading_{index + 1}"


def spoken_variant(index: int) -> str:
    """The test set of reading `index` (from 0): the user turn replaced by that reading's hypothesis."""
    return f"spoken_{index + 1}"


def earliest_hypotheses(accepted_responses: list, variants: list[str], turn_text: str = "") -> dict[str, str]:
    """Variant `spoken_k` -> the ASR hypothesis of reading k of the earliest accepted response that
    has one transcribed (responses prefetched with `transcribed_readings`), a reading voted down and
    accepted after all only where no other has one, as rewrites take theirs (`exporters.selection`);
    and among the rest, a reading worth a listen (`worth_a_listen`: little speech, few of the turn's
    words heard) only where no other has one, so a cough or another sentence that nobody reviewed
    does not stand in for the turn while an honest reading of it was accepted."""
    chosen: dict[str, str] = {}
    for variant in variants:
        index = int(variant.rpartition("_")[2]) - 1  # spoken_k is reading k-1 (`spoken_variant`)
        part = reading_field(index)
        candidates = []
        for order, response in enumerate(passed_first(accepted_responses, part)):  # voted-down readings last
            reading = next((r for r in response.transcribed_readings if r.index == index and r.asr_text.strip()), None)
            if reading is not None:
                doubtful = worth_a_listen(response.answers, index, turn_text, reading.asr_text)
                candidates.append((voted_down_on(response, part), doubtful, order, reading.asr_text))
        if candidates:
            chosen[variant] = min(candidates)[3]
    return chosen


def worth_a_listen(answers: Any, index: int, turn_text: str, hypothesis: str) -> bool:
    """Whether reading `index` of a response has something that makes it worth a listen
    (`speech.evidence.doubts`: under half a second of speech, under half the turn's words heard)."""
    meta = answers.get(reading_field(index)) if isinstance(answers, Mapping) else None
    speech = meta.get("speech_seconds") if isinstance(meta, Mapping) else None
    match = turn_match(turn_text, hypothesis) if turn_text else None
    return bool(doubts(speech=speech if isinstance(speech, (int, float)) else None, match=match, same_as=[]))


def audio_path(response_id: int, index: int) -> str:
    """Where the recording of reading `index` (from 0) of a response is in an export with audio."""
    return f"audio/response-{response_id}-reading-{index + 1}.wav"


#: The columns of responses.csv per reading k (`reading_k_<name>`), and what each holds.
READING_COLUMNS = {
    "hypothesis": "what the speech recogniser heard (empty until the reading is transcribed)",
    "confidence": "the recogniser's confidence in it, 0 to 1 (empty when it gives none)",
    "seconds": "the recording's duration",
    "speech_seconds": "how long the recording is clearly louder than its background (a rough speech detector: a cough counts for its fraction of a second, steady noise does not)",
    "wer_against_turn": "the hypothesis's word error rate against the turn (a reading that varies the wording has some; empty until transcribed)",
    "audio": "the recording's path in this export (empty when the recordings were not exported)",
}


def reading_row(reading: Any, exported: str | None) -> dict:
    """One line of readings.jsonl: the human-read source text, the hypothesis, its confidence and
    timing, the audio's path in the export (`exported`, when copied) and in storage."""
    turn = reading.response.item.turn
    return {
        "response_id": reading.response_id, "reading": reading.index + 1, "variant": spoken_variant(reading.index),
        "status": reading.response.status, "worker": f"{reading.response.worker.provider}:{reading.response.worker.external_id}",
        "dialog_id": turn.dialog.external_id if turn else "", "turn_index": turn.index if turn else None,
        "source_text": turn.text if turn else "", "asr_text": reading.asr_text, "asr_confidence": reading.asr_confidence,
        "asr_backend": reading.asr_backend, "asr_error": reading.asr_error, "decode_seconds": reading.decode_seconds,
        "seconds": reading.seconds, "sample_rate": reading.sample_rate,
        "audio": exported, "storage_name": reading.audio.name,
        **reading_evidence_columns(reading, turn.text if turn else ""),
    }


def reading_evidence_columns(reading: Any, turn_text: str) -> dict:
    """The evidence that the turn was read, for readings.jsonl: seconds of speech, the hypothesis
    against the turn (WER and the turn's words heard; null until transcribed) and the recording's
    fingerprint (`same_recording_as` is filled by `answer_files` from the other rows)."""
    meta = (reading.response.answers or {}).get(reading_field(reading.index))
    meta = meta if isinstance(meta, Mapping) else {}
    match = turn_match(turn_text, reading.asr_text) if reading.transcribed_at and turn_text else None
    return {
        "speech_seconds": meta.get("speech_seconds"), "wer_against_turn": match.wer if match else None,
        "turn_words_heard": match.heard if match else None, "turn_words": match.words if match else None,
        "fingerprint": meta.get("fingerprint"), "same_recording_as": [],
    }


def reading_index(field: str) -> int | None:
    """The reading index of an upload field name, or None."""
    prefix, _, number = field.partition("_")
    return int(number) - 1 if prefix == "reading" and number.isdigit() and int(number) > 0 else None


class SpokenReadingTaskType(TaskType, FromCorpusTurns, TakesUploads, Votable, ExportsTestSets, ExportsFiles):
    key = "spoken_reading"
    source_speaker = "user"
    label = "Read user turns aloud with slight variations (CGoDial spoken features)"
    template = "annotation/tasks/spoken_reading.html"
    agreement_level = "nominal"  # recordings are not choices: no agreement table
    upload_store = "spoken_readings"  # services.readings stores the uploads and queues transcription
    _settings_help = {
        "readings": (4, "How many readings each worker records of the turn (CGoDial asks for four), 1 to 10."),
        "min_seconds": (1.0, "A reading shorter than this many seconds is refused (the worker is asked to read it again)."),
        "max_seconds": (30.0, f"A reading longer than this many seconds is refused; at most {HARD_MAX_SECONDS:g}."),
    }

    @property
    def settings_help(self):  # the language's help says what this server's recogniser understands
        from ..speech.config import recogniser_languages  # Django settings: read when the help is shown

        language_help = (
            "The language the turns are read in (a code such as en). The speech recogniser on this server understands "
            f"{recogniser_languages()}; readings in another language are stored but not transcribed (the job page says "
            "why) unless the server's operator sets up a recogniser for it."
        )
        return {**self._settings_help, "language": ("en", language_help)}

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}
        readings = cleaned["readings"]
        if not isinstance(readings, int) or isinstance(readings, bool) or not 1 <= readings <= MAX_READINGS:
            errors["readings"] = f"a whole number from 1 to {MAX_READINGS}"
        low, high = cleaned["min_seconds"], cleaned["max_seconds"]
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
        if not numbers or not 0 < low < high <= HARD_MAX_SECONDS:
            errors["max_seconds" if numbers and low > 0 else "min_seconds"] = (
                f"min_seconds and max_seconds are numbers with 0 < min_seconds < max_seconds <= {HARD_MAX_SECONDS:g}"
            )
        language = cleaned["language"]
        if not isinstance(language, str) or not language.strip() or len(language) > 20:
            errors["language"] = "a language code such as en"
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["min_seconds"], cleaned["max_seconds"] = float(low), float(high)
        cleaned["language"] = language.strip()
        return cleaned

    def build_payload(self, turn) -> dict:
        return {"utterance": turn.text, "slot_values": [sv["value"] for sv in turn.slot_values]}

    def answer_fields(self, settings):
        return [
            {
                "name": reading_field(i),
                "label": f"Reading {i + 1}",
                "help": "Read the turn aloud, varying the wording slightly but keeping its meaning and every slot value.",
                "upload": AUDIO_MEDIA_TYPE,
            }
            for i in range(settings.get("readings", 4))
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        """Each reading checked (`check_recording`), with the evidence a reviewer reads beside it: its
        seconds of speech and its fingerprint. One recording sent for two readings is refused (a take
        made in the page is never sample-identical to another)."""
        cleaned, problems = {}, []
        labels_by_fingerprint: dict[str, str] = {}
        for field in self.answer_fields(settings):
            name, label = field["name"], field["label"]
            data = upload_bytes(answers.get(name))
            if not data:
                problems.append(Problem(name, "required", f"{label}: record it before submitting."))
                continue
            try:
                audio = check_recording(
                    data, min_seconds=settings.get("min_seconds", 1.0), max_seconds=settings.get("max_seconds", 30.0)
                )
            except RecordingError as exc:
                problems.append(Problem(name, "recording", f"{label}: {exc}"))
                continue
            same = fingerprint(audio)
            if same in labels_by_fingerprint:
                problems.append(Problem(
                    name, "same_recording",
                    f"{label}: this is the same recording as {labels_by_fingerprint[same]}. Read the turn aloud again for this reading.",
                ))
                continue
            labels_by_fingerprint[same] = label
            meta = {
                "seconds": round(audio.seconds, 3), "sample_rate": audio.sample_rate,
                "speech_seconds": speech_seconds(audio), "fingerprint": same,
            }
            cleaned[name] = Upload(content=write_wav(audio), media_type=AUDIO_MEDIA_TYPE, meta=meta)
        return cleaned, problems

    def page_context(self, item, slot, settings):
        return {"min_seconds": settings.get("min_seconds", 1.0), "max_seconds": settings.get("max_seconds", 30.0)}

    def vote_parts(self, settings):
        """Each reading is its own utterance of the test sets, so voters judge each one."""
        return [{"name": f["name"], "label": f["label"]} for f in self.answer_fields(settings)]

    def combine(self, answer_rows, settings):
        """How many counted readings an item has, per reading, and their total duration."""
        out = {"responses": len(answer_rows)}
        for field in self.answer_fields(settings):
            out[field["name"]] = sum(1 for row in answer_rows if isinstance(row.get(field["name"]), Mapping))
        out["seconds"] = round(
            sum(row[f["name"]].get("seconds", 0) for row in answer_rows for f in self.answer_fields(settings) if isinstance(row.get(f["name"]), Mapping)),
            3,
        )
        return out

    def agreement_values(self, answers, settings):
        return {}

    def texts_of(self, answers, settings):
        return {}  # audio is not text; near-duplicate flags have nothing to compare

    def review_view(self, payload, answers, settings):
        """Each reading by its label with its duration; `reading` (the index) lets the review queue
        and the vote page put an audio player and the hypothesis beside it."""
        shown = []
        for i, field in enumerate(self.answer_fields(settings)):
            meta = answers.get(field["name"])
            if isinstance(meta, Mapping):
                speech = meta.get("speech_seconds")
                text = f"{meta.get('seconds', 0):.1f} s of audio" + (f", {speech:.1f} s of it speech" if isinstance(speech, (int, float)) else "")
                shown.append({"name": field["name"], "label": field["label"], "text": text, "reading": i})
        return {"subject": self.subject_of(payload), "slot_values": list(payload.get("slot_values", [])), "shown": shown}

    # --- Export -----------------------------------------------------------------------------------

    def test_set_names(self, settings):
        return [spoken_variant(i) for i in range(len(self.upload_fields(settings)))]

    def test_set_turns(self, turn, payload, accepted_responses, settings):
        """In each `spoken_k` set the ASR hypothesis of reading k, with the slot values it still holds;
        the record names the source text, so MultiWOZ `span_info` is placed in the hypothesis."""
        variants = self.test_set_names(settings)
        return {
            v: [TurnRecord(turn.index, turn.speaker, text, values_heard(turn.slot_values, text)[0], turn.raw, source_text=turn.text)]
            for v, text in earliest_hypotheses(accepted_responses, variants, turn.text).items()
        }

    def test_set_words(self, settings):
        names = ", ".join(f"`{name}`" for name in self.test_set_names(settings))
        return TestSetWords(
            sets=f"One directory per reading ({names}): directory `spoken_k` is the source corpus in its own format with "
            "each item's user turn replaced by the ASR hypothesis (what the speech recogniser heard) of the k-th reading of an accepted "
            "response; everything else is as imported.",
            slot_values="A replaced turn keeps only the slot values its hypothesis still holds verbatim (a reading may say "
            '"two" where the value is "2").',
            format_words={"multiwoz": (
                "A replaced turn's `span_info` gives each value's place in the hypothesis, counted as the corpus counted it "
                "(words, as in MultiWOZ 2.1, or characters where the corpus is written without spaces); a span whose value the "
                "hypothesis does not hold (the recogniser misheard it) is left out rather than given a wrong place. "
                "`dialog_act` is as imported (it has no positions)."
            )},
            selection=[
                DIALOGS_RULE,
                "Responses: only responses that count (status `accepted`) are used. For each reading k, the test set takes "
                "the transcribed reading k of the earliest accepted response that has one (by submission time, then response "
                "id) among those whose reading k passed the vote (or was not voted on); a reading voted down and accepted by a "
                "reviewer after all is used only where no other accepted response has one; among the rest, a reading worth a "
                "listen (under 0.5 s of speech, or a hypothesis holding under half of the turn's words) likewise, so check "
                "`speech_seconds` and `turn_words_heard` in `readings.jsonl` for the turns no other reading covers. `responses.csv` and "
                "`readings.jsonl` have them all.",
                "Item turns without a transcribed reading of an accepted response keep their original text.",
            ],
            counts=("test set", "turns replaced by a hypothesis", "item turns without a transcribed accepted reading"),
        )

    def answer_file_words(self, settings):
        return {
            "readings.jsonl": "one JSON object a line per reading of a confirmed response: the text read, the hypothesis, "
            "its confidence, the recording's duration and its path in this export (`audio`, null without the recordings) "
            "and in storage (`storage_name`); and the evidence that the turn was read: `speech_seconds` (how long the "
            "recording is clearly louder than its background), `wer_against_turn` and `turn_words_heard` of `turn_words` "
            "(the hypothesis against the turn; a reading that varies the wording has some WER; null until transcribed), "
            "`fingerprint` (a hash of the samples) and `same_recording_as` (the other readings with the same recording).",
            "audio/": "the recordings, 16-bit PCM WAV, mono (only when the export was asked to include them).",
        }

    def response_columns(self, settings):
        """Per reading k, `reading_k_hypothesis`, `_confidence`, `_seconds`, `_speech_seconds`,
        `_wer_against_turn` and `_audio` (`READING_COLUMNS`)."""
        return [f"{f['name']}_{column}" for f in self.upload_fields(settings) for column in READING_COLUMNS]

    def response_column_help(self, settings):
        return {
            f"{f['name']}_{column}": f"{f['label']}: {what}" for f in self.upload_fields(settings) for column, what in READING_COLUMNS.items()
        }

    def response_cells(self, response, settings, *, include_audio):
        """Each reading's hypothesis, confidence, duration, speech, WER against the turn and audio path,
        from its stored row and the response's answers."""
        cells = dict.fromkeys(self.response_columns(settings), "")
        for reading in getattr(response, "export_readings", []):
            name = reading_field(reading.index)
            if f"{name}_seconds" not in cells:  # a reading beyond the job's count (its settings changed)
                continue
            cells[f"{name}_hypothesis"] = reading.asr_text if reading.transcribed_at else ""
            cells[f"{name}_confidence"] = "" if reading.asr_confidence is None else reading.asr_confidence
            cells[f"{name}_seconds"] = reading.seconds
            meta = (response.answers or {}).get(name)
            speech = meta.get("speech_seconds") if isinstance(meta, Mapping) else None
            cells[f"{name}_speech_seconds"] = "" if speech is None else speech
            turn = response.item.turn
            if reading.transcribed_at and turn is not None and turn.text:
                cells[f"{name}_wer_against_turn"] = turn_match(turn.text, reading.asr_text).wer
            cells[f"{name}_audio"] = audio_path(response.id, reading.index) if include_audio else ""
        return cells

    def answer_files(self, source, settings):
        """readings.jsonl: one line per reading of a confirmed response; with the export's audio
        option, each recording copied under audio/."""
        rows, by_fingerprint = [], {}
        for reading in source.readings():
            exported = audio_path(reading.response_id, reading.index)
            if source.include_audio:
                source.copy_file(reading.audio, exported)
            row = reading_row(reading, exported if source.include_audio else None)
            if row["fingerprint"]:
                by_fingerprint.setdefault(row["fingerprint"], []).append(row)
            rows.append(row)
        for same in by_fingerprint.values():  # one recording sent for several readings or turns
            for row in same:
                row["same_recording_as"] = [
                    {"response_id": o["response_id"], "reading": o["reading"]} for o in same if o is not row
                ]
        return {"readings.jsonl": rows}


register(SpokenReadingTaskType())
