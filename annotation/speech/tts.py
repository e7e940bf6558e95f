"""Text to speech with Debian's espeak-ng or flite, run as a subprocess (no model downloads)."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .audio import read_wav, resample, write_wav

ENGINES = ("espeak-ng", "flite")
DEFAULT_VOICES = {"espeak-ng": "en-us", "flite": "slt"}  # slt: flite's 16 kHz US English voice
NORMAL_WPM = 175  # espeak-ng's default rate; flite's speed is set relative to it
TIMEOUT_SECONDS = 60


class SpeechUnavailable(RuntimeError):
    """The text-to-speech program is missing or failed."""


def synthesize(
    text: str,
    *,
    engine: str = "espeak-ng",
    voice: str | None = None,
    sample_rate: int = 16000,
    speed: int | None = None,
) -> bytes:
    """Speak `text` and return 16-bit mono WAV bytes at `sample_rate`. `speed` is in words per minute."""
    if engine not in ENGINES:
        raise SpeechUnavailable(f"Unknown speech engine {engine!r}; use one of: {', '.join(ENGINES)}.")
    binary = shutil.which(engine)
    if binary is None:
        raise SpeechUnavailable(
            f"The text-to-speech program {engine!r} is not installed; install the Debian package "
            f"({engine}) or run scripts/ensure_speech.sh."
        )
    voice = voice or DEFAULT_VOICES[engine]
    with tempfile.TemporaryDirectory(prefix="quorum-tts-") as tmp:
        # The text goes through a file, never the command line, so a text starting with "-" is not an option.
        text_path, wav_path = Path(tmp) / "text.txt", Path(tmp) / "speech.wav"
        text_path.write_text(text, encoding="utf-8")
        if engine == "espeak-ng":
            command = [binary, "-v", voice, "-w", str(wav_path), "-f", str(text_path)]
            if speed:
                command += ["-s", str(int(speed))]
        else:
            command = [binary, "-voice", voice, "-f", str(text_path), "-o", str(wav_path)]
            if speed:
                command += ["--setf", f"duration_stretch={NORMAL_WPM / float(speed):.3f}"]
        try:
            done = subprocess.run(command, capture_output=True, timeout=TIMEOUT_SECONDS, check=False)  # noqa: S603
        except subprocess.TimeoutExpired as exc:
            raise SpeechUnavailable(f"{engine} took longer than {TIMEOUT_SECONDS} s.") from exc
        if done.returncode != 0 or not wav_path.exists():
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise SpeechUnavailable(f"{engine} failed (voice {voice!r}): {message[0]}")
        audio = read_wav(wav_path.read_bytes())
    return write_wav(resample(audio, sample_rate))
