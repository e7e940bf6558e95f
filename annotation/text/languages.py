"""A corpus's language: its BCP 47 tag checked, or found from the corpus's text. Pure: no Django import.

Pages put the tag in `lang` on the corpus's text and the answer boxes, so the browser picks fonts and
line breaking for it and a screen reader reads it in its own voice while the page's own words stay
English. A tag is checked for form (RFC 5646) and, when its language is two letters, against ISO 639-1,
so a typo such as "zn" or "zh_CN" is refused with the reason instead of stored.
"""
import re
from collections import Counter
from collections.abc import Iterable

#: The tag of a text whose language cannot be told from its script (BCP 47's "undetermined").
UNDETERMINED = "und"
#: The longest tag stored (RFC 5646 asks every implementation to take at least 35 characters).
MAX_TAG_LENGTH = 35

# ISO 639-1: the two-letter languages (without the withdrawn iw, in, ji: he, id, yi replaced them).
_TWO_LETTER = frozenset(
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz "
    "ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io "
    "is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr "
    "ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si "
    "sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo "
    "xh yi yo za zh zu".split()
)

# RFC 5646 "langtag", subtag by subtag (the irregular grandfathered tags are not taken, nor the
# language subtags of 4 to 8 letters the registry keeps for later: no language has one).
_LANGTAG = re.compile(
    r"""
    (?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3})
    (?:-(?P<script>[a-z]{4}))?
    (?:-(?P<region>[a-z]{2}|[0-9]{3}))?
    (?P<variants>(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*)
    (?P<extensions>(?:-[a-wyz0-9](?:-[a-z0-9]{2,8})+)*)
    (?P<private>-x(?:-[a-z0-9]{1,8})+)?
    """,
    re.VERBOSE,
)


class LanguageTagError(ValueError):
    """A language tag that cannot be used; the message says why and what to write instead."""


def checked_tag(tag: object) -> str:
    """`tag` as a well-formed BCP 47 tag in its usual case ("ZH-hans-cn" -> "zh-Hans-CN"), or
    LanguageTagError saying what is wrong with it."""
    if not isinstance(tag, str) or not tag.strip():
        raise LanguageTagError('The language must be a BCP 47 tag such as "zh" (Chinese) or "en" (English).')
    text = tag.strip()
    if len(text) > MAX_TAG_LENGTH:
        raise LanguageTagError(f'The language "{text[:40]}…" is longer than {MAX_TAG_LENGTH} characters; a BCP 47 tag such as "zh" or "zh-Hant" is shorter.')
    if "_" in text:
        raise LanguageTagError(f'The language "{text}" is not a BCP 47 tag: join its parts with hyphens, as in "{text.replace("_", "-")}".')
    match = _LANGTAG.fullmatch(text.lower())
    if match is None:
        raise LanguageTagError(
            f'The language "{text}" is not a BCP 47 tag: write the language\'s ISO 639 code, then optionally a script '
            'and a region, e.g. "zh", "zh-Hant", "en-GB".'
        )
    language = match["language"]
    if len(language) == 2 and language not in _TWO_LETTER:
        raise LanguageTagError(f'The language "{text}" does not start with an ISO 639 language code ("{language}" is none); e.g. "zh" is Chinese, "en" English.')
    return _cased(match)


def stated_tag(tag: str) -> str:
    """A language a builder may leave out: "" for a blank one, else `checked_tag`."""
    return checked_tag(tag) if tag and tag.strip() else ""


def _cased(match: re.Match) -> str:
    parts = [match["language"]]
    if match["script"]:
        parts.append(match["script"].title())
    if match["region"]:
        parts.append(match["region"].upper())
    tail = "".join(match[name] or "" for name in ("variants", "extensions", "private"))
    return "-".join(parts) + tail


# --- Found from the text --------------------------------------------------------------------------

# Scripts that name their language well enough for fonts, line breaking and a voice. Han alone is
# taken as Chinese; Han with a fair share of kana is Japanese. Latin is taken as English: the corpora
# Quorum reads (MultiWOZ, DSTC) are English, and a builder whose are not states the language.
_SCRIPT_RANGES = (
    ("kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"),
    ("han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"),
    ("hangul", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"),
    ("thai", "\u0e00-\u0e7f"),
    ("lao", "\u0e80-\u0eff"),
    ("khmer", "\u1780-\u17ff"),
    ("myanmar", "\u1000-\u109f"),
    ("latin", "A-Za-z\u00c0-\u024f\u1e00-\u1eff"),
)
# The few digits and marks inside these ranges (Thai's, the kana middle dot) count as letters: too few to matter.
# Counted by runs (a word is one match, not one per letter), which is several times faster than letter by letter.
_SCRIPT_OF = [(name, re.compile(f"[{chars}]+")) for name, chars in _SCRIPT_RANGES]
_LETTERS = re.compile(r"[^\W\d_]+")
_LANGUAGE_OF_SCRIPT = {"hangul": "ko", "thai": "th", "lao": "lo", "khmer": "km", "myanmar": "my", "latin": "en"}
# Japanese writes a third or more of its letters in kana; Chinese text holds at most a stray one.
_KANA_SHARE_FOR_JAPANESE = 0.1
# A character of the scripts written in syllables or ideographs stands for about as much text as three
# Latin letters: Chinese with an English name in it ("订 Hilton 酒店的 deluxe 房间") is Chinese.
_WEIGHT = {"han": 3, "kana": 3, "hangul": 3}


class LanguageSample:
    """Letters counted by script over the texts `add`ed, up to `enough` letters (a corpus of a
    million turns is not read twice: the first turns tell its script); `language` says what they are.
    Each script is counted by one regular expression over the whole text, not letter by letter: a
    work page of a payload job finds its language on every render."""

    def __init__(self, enough: int = 20_000):
        self.enough = enough
        self.letters = 0
        self.by_script: Counter[str] = Counter()

    @property
    def full(self) -> bool:
        return self.letters >= self.enough

    def add(self, text: str) -> None:
        if self.full:
            return
        self.letters += sum(map(len, _LETTERS.findall(text)))
        for name, pattern in _SCRIPT_OF:
            self.by_script[name] += sum(map(len, pattern.findall(text)))

    def language(self) -> str:
        """The tag the letters' script suggests: "zh", "ja", "ko", "th", "en"...; UNDETERMINED
        when there are no letters or their script does not name a language (Cyrillic, Arabic)."""
        if not self.letters:
            return UNDETERMINED
        weighed = Counter({script: n * _WEIGHT.get(script, 1) for script, n in self.by_script.items()})
        weighed["other"] = max(0, self.letters - sum(self.by_script.values()))
        kana, han = self.by_script["kana"], self.by_script["han"]
        cjk = weighed.pop("han", 0) + weighed.pop("kana", 0)
        script, count = max(weighed.items(), key=lambda pair: pair[1])
        if cjk and cjk >= count:
            return "ja" if kana >= _KANA_SHARE_FOR_JAPANESE * (kana + han) else "zh"
        return _LANGUAGE_OF_SCRIPT.get(script, UNDETERMINED)


def detected_language(texts: Iterable[str]) -> str:
    """The language tag of `texts` (a page's few, read as one text) from their script; see LanguageSample."""
    sample = LanguageSample()
    sample.add("\n".join(texts))
    return sample.language()
