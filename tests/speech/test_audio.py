"""Audio decoding and the checks a worker's recording must pass (no Django, no binaries)."""
import io
import wave

import numpy as np
import pytest

from annotation.speech.audio import Audio, RecordingError, check_recording, read_wav, resample, write_wav


def tone(seconds=2.0, rate=16000, amplitude=0.3, hz=440.0):
    t = np.arange(int(seconds * rate)) / rate
    return Audio.from_samples(amplitude * np.sin(2 * np.pi * hz * t), rate)


def test_write_then_read_keeps_samples_and_rate():
    audio = tone(1.5, 22050)
    back = read_wav(write_wav(audio))
    assert back.sample_rate == 22050
    assert back.seconds == pytest.approx(1.5)
    assert np.max(np.abs(back.samples - audio.samples)) < 1e-4  # 16-bit quantisation only


def test_stereo_is_averaged_to_mono():
    left = (np.full(16000, 0.5) * 32767).astype("<i2")
    right = np.zeros(16000, dtype="<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(2)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(np.stack([left, right], axis=1).tobytes())
    audio = read_wav(buffer.getvalue())
    assert audio.samples.shape == (16000,)
    assert float(audio.samples.mean()) == pytest.approx(0.25, abs=1e-3)


def test_resample_keeps_duration_and_pitch():
    audio = resample(tone(1.0, 22050, hz=1000.0), 16000)
    assert audio.sample_rate == 16000 and len(audio.samples) == 16000
    spectrum = np.abs(np.fft.rfft(audio.samples))
    assert np.argmax(spectrum) == pytest.approx(1000, abs=2)  # 1 Hz bins over one second


def test_a_good_recording_is_returned_decoded():
    audio = check_recording(write_wav(tone(2.0)))
    assert audio.seconds == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"OggS\0\0 this is not a wav file", "is not a WAV recording; record again in the page"),
        (write_wav(tone(2.0, rate=8000)), "sample rate is 8000 Hz; at least 16000 Hz"),
        (write_wav(tone(0.4)), "0.4 s long; it must be at least 1 s"),
        (write_wav(tone(31.0)), "31.0 s long; it must be at most 30 s"),
        (write_wav(tone(2.0, amplitude=0.0)), "silent"),
        (write_wav(tone(2.0, amplitude=0.001)), "silent (-63 dBFS at its loudest)"),
    ],
    ids=["not-wav", "low-rate", "too-short", "too-long", "digital-silence", "near-silence"],
)
def test_bad_recordings_are_refused_with_what_to_fix(data, says):
    with pytest.raises(RecordingError, match=None) as refused:
        check_recording(data)
    assert says in str(refused.value)


def test_a_quiet_reader_who_waits_before_and_after_speaking_is_not_called_silent():
    """Two seconds of speech-level sound at -45 dBFS between 3 s of quiet on each side: the whole
    recording's RMS is under -50 dBFS, and it was refused as silent, speech and all."""
    quiet = np.zeros(3 * 16000)
    speech = tone(2.0, amplitude=10 ** (-45 / 20) * np.sqrt(2)).samples
    audio = Audio.from_samples(np.concatenate([quiet, speech, quiet]), 16000)
    assert audio.rms_dbfs() < -50  # what the check read before
    assert check_recording(write_wav(audio)).seconds == pytest.approx(8.0)


def test_eight_bit_wav_is_refused_naming_the_format():
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(1)
        writer.setframerate(16000)
        writer.writeframes(bytes([128, 200]) * 16000)
    with pytest.raises(RecordingError, match="8-bit samples; it must be 16-bit PCM WAV"):
        check_recording(buffer.getvalue())
