"""Simulate speech-recognition errors at a target word error rate (a thin wrapper over speech.simulate)."""
import json
import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.speech.asr import AsrFailed, AsrUnavailable
from annotation.speech.config import asr_backend
from annotation.speech.simulate import NOISE_KINDS, Progress, SimulationError, read_utterances, simulate
from annotation.speech.tts import ENGINES, SpeechUnavailable


class Command(BaseCommand):
    help = (
        'Read utterances (one JSON object a line: {"id", "text"}), speak them with a Debian TTS, add noise '
        "at a signal-to-noise ratio searched so the corpus word error rate lands within --tolerance of "
        '--target-wer, transcribe them with the recogniser adapted to their text, and write {"id", "text", '
        '"asr", "wer"} lines to --out. Prints each search step and the achieved WER and SNR.'
    )

    def add_arguments(self, parser):
        parser.add_argument("input", help="JSON lines file of utterances: {\"id\": ..., \"text\": ...}.")
        parser.add_argument("--target-wer", type=float, required=True, help="Corpus WER wanted, e.g. 0.2 for 20%%.")
        parser.add_argument("--out", required=True, help="Where to write the JSON lines with the ASR hypotheses.")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the noise; the same seed gives the same output.")
        parser.add_argument("--engine", choices=ENGINES, default=None,
                            help=f"Text-to-speech program (default: QUORUM_TTS_ENGINE, now {settings.QUORUM_TTS_ENGINE}).")
        parser.add_argument("--noise", choices=NOISE_KINDS, default="white",
                            help="White noise, or babble made of the corpus's other utterances (default: white).")
        parser.add_argument("--tolerance", type=float, default=0.05, help="How far the achieved WER may be from the target.")

    def handle(self, *args, **options):
        source = Path(options["input"])
        try:
            with source.open(encoding="utf-8") as handle:
                utterances = read_utterances(handle)
        except OSError as exc:
            raise CommandError(f"Cannot read {options['input']}: {exc.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"{options['input']} is not UTF-8 text.") from None
        except SimulationError as exc:
            raise CommandError(f"{options['input']}: {exc}") from None
        out = Path(options["out"])
        if not out.parent.is_dir():
            raise CommandError(f"--out: the directory of {options['out']} does not exist.")
        engine = options["engine"] or settings.QUORUM_TTS_ENGINE
        self.stdout.write(f"{len(utterances)} utterances; target WER {options['target_wer']:.3f} ± {options['tolerance']:g}; "
                          f"engine {engine}, {options['noise']} noise, seed {options['seed']}")
        try:
            result = simulate(
                utterances,
                target_wer=options["target_wer"],
                tolerance=options["tolerance"],
                seed=options["seed"],
                engine=engine,
                noise=options["noise"],
                backend=asr_backend(),
                progress=self._progress,
            )
        except (SimulationError, SpeechUnavailable, AsrUnavailable, AsrFailed) as exc:
            raise CommandError(str(exc)) from None
        # Written beside the target and renamed, so a failed run leaves no half-written file.
        descriptor, partial = tempfile.mkstemp(dir=out.parent, prefix=".speech_errors-", suffix=".jsonl")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            for utterance in result.utterances:
                handle.write(json.dumps(utterance.as_json(), ensure_ascii=False) + "\n")
        os.replace(partial, out)
        self.stdout.write(
            f"Achieved corpus WER {result.wer:.3f} (target {options['target_wer']:.3f}) at SNR {result.snr_db:.1f} dB; "
            f"clean floor {result.floor:.3f}; {len(result.steps)} passes; wrote {len(result.utterances)} lines to {options['out']}"
        )

    def _progress(self, event: Progress):
        """One line a finished pass (or synthesis); on a terminal, a counter that updates in place meanwhile."""
        tty = self.stdout.isatty()
        start = "\r" if tty else ""
        if event.wer is not None:
            self._passes = getattr(self, "_passes", 0) + 1
            label = "clean floor" if event.stage == "floor" else f"search step {self._passes - 1}"
            self.stdout.write(f"{start}{label}: SNR {event.snr_db:.2f} dB -> corpus WER {event.wer:.3f}")
        elif event.stage == "synthesis" and event.done == event.total:
            self.stdout.write(f"{start}synthesised {event.total} utterances")
        elif tty:
            where = "" if event.snr_db is None else f" at SNR {event.snr_db:.2f} dB"
            self.stdout.write(f"\r{event.stage}{where}: {event.done}/{event.total}", ending="")
            self.stdout.flush()
