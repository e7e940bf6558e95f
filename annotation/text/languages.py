"""A corpus's language: its BCP 47 tag checked, or found from the corpus's text, its direction and
its name in words. Pure: no Django import.

Pages put the tag in `lang` on the corpus's text and the answer boxes, so the browser picks fonts and
line breaking for it and a screen reader reads it in its own voice while the page's own words stay
English; text in a language written right to left (Arabic, Hebrew...) also gets dir="rtl". A tag
is checked for form (RFC 5646) and, when its language is two letters, against ISO 639-1, so a typo
such as "zn" or "zh_CN" is refused with the reason instead of stored.
"""
import re
from collections import Counter
from collections.abc import Iterable

#: The tag of a text whose language cannot be told from its script (BCP 47's "undetermined").
UNDETERMINED = "und"
#: The longest tag stored (RFC 5646 asks every implementation to take at least 35 characters).
MAX_TAG_LENGTH = 35

# ISO 639-1: the two-letter languages (without the withdrawn iw, in, ji: he, id, yi replaced them), by
# their English names, for the pages that name a corpus's language in words.
_NAMES = {
    "aa": "Afar", "ab": "Abkhazian", "ae": "Avestan", "af": "Afrikaans", "ak": "Akan", "am": "Amharic", "an": "Aragonese",
    "ar": "Arabic", "as": "Assamese", "av": "Avaric", "ay": "Aymara", "az": "Azerbaijani", "ba": "Bashkir", "be": "Belarusian",
    "bg": "Bulgarian", "bh": "Bihari", "bi": "Bislama", "bm": "Bambara", "bn": "Bengali", "bo": "Tibetan", "br": "Breton",
    "bs": "Bosnian", "ca": "Catalan", "ce": "Chechen", "ch": "Chamorro", "co": "Corsican", "cr": "Cree", "cs": "Czech",
    "cu": "Church Slavic", "cv": "Chuvash", "cy": "Welsh", "da": "Danish", "de": "German", "dv": "Divehi", "dz": "Dzongkha",
    "ee": "Ewe", "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque",
    "fa": "Persian", "ff": "Fulah", "fi": "Finnish", "fj": "Fijian", "fo": "Faroese", "fr": "French", "fy": "Western Frisian",
    "ga": "Irish", "gd": "Scottish Gaelic", "gl": "Galician", "gn": "Guarani", "gu": "Gujarati", "gv": "Manx", "ha": "Hausa",
    "he": "Hebrew", "hi": "Hindi", "ho": "Hiri Motu", "hr": "Croatian", "ht": "Haitian Creole", "hu": "Hungarian",
    "hy": "Armenian", "hz": "Herero", "ia": "Interlingua", "id": "Indonesian", "ie": "Interlingue", "ig": "Igbo",
    "ii": "Sichuan Yi", "ik": "Inupiaq", "io": "Ido", "is": "Icelandic", "it": "Italian", "iu": "Inuktitut", "ja": "Japanese",
    "jv": "Javanese", "ka": "Georgian", "kg": "Kongo", "ki": "Kikuyu", "kj": "Kuanyama", "kk": "Kazakh", "kl": "Kalaallisut",
    "km": "Khmer", "kn": "Kannada", "ko": "Korean", "kr": "Kanuri", "ks": "Kashmiri", "ku": "Kurdish", "kv": "Komi",
    "kw": "Cornish", "ky": "Kyrgyz", "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda", "li": "Limburgish", "ln": "Lingala",
    "lo": "Lao", "lt": "Lithuanian", "lu": "Luba-Katanga", "lv": "Latvian", "mg": "Malagasy", "mh": "Marshallese",
    "mi": "Maori", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi", "ms": "Malay", "mt": "Maltese",
    "my": "Burmese", "na": "Nauru", "nb": "Norwegian Bokmål", "nd": "North Ndebele", "ne": "Nepali", "ng": "Ndonga",
    "nl": "Dutch", "nn": "Norwegian Nynorsk", "no": "Norwegian", "nr": "South Ndebele", "nv": "Navajo", "ny": "Chichewa",
    "oc": "Occitan", "oj": "Ojibwa", "om": "Oromo", "or": "Odia", "os": "Ossetian", "pa": "Punjabi", "pi": "Pali",
    "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "qu": "Quechua", "rm": "Romansh", "rn": "Rundi", "ro": "Romanian",
    "ru": "Russian", "rw": "Kinyarwanda", "sa": "Sanskrit", "sc": "Sardinian", "sd": "Sindhi", "se": "Northern Sami",
    "sg": "Sango", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "sm": "Samoan", "sn": "Shona", "so": "Somali",
    "sq": "Albanian", "sr": "Serbian", "ss": "Swati", "st": "Southern Sotho", "su": "Sundanese", "sv": "Swedish",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "tg": "Tajik", "th": "Thai", "ti": "Tigrinya", "tk": "Turkmen",
    "tl": "Tagalog", "tn": "Tswana", "to": "Tongan", "tr": "Turkish", "ts": "Tsonga", "tt": "Tatar", "tw": "Twi",
    "ty": "Tahitian", "ug": "Uyghur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "ve": "Venda", "vi": "Vietnamese",
    "vo": "Volapük", "wa": "Walloon", "wo": "Wolof", "xh": "Xhosa", "yi": "Yiddish", "yo": "Yoruba", "za": "Zhuang",
    "zh": "Chinese", "zu": "Zulu",
}
# The few three-letter languages a dialog corpus is likely to name; any other is shown by its tag.
_NAMES |= {"yue": "Cantonese", "cmn": "Mandarin Chinese", "ckb": "Central Kurdish", UNDETERMINED: "undetermined"}

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
    if len(language) == 2 and language not in _NAMES:
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


def language_name(tag: str) -> str:
    """A stored tag in words for a builder's page: "Chinese (zh)", "Chinese (zh-Hant)"; a language
    without a name here is shown by its tag alone, and no tag as ""."""
    if not tag:
        return ""
    name = _NAMES.get(tag.split("-", 1)[0].lower())
    return f"{name} ({tag})" if name else tag


# Scripts written right to left (ISO 15924): a tag's script subtag decides ("ku-Arab" is, "az-Latn" is
# not); without one, the language's usual script does (CLDR's likely subtags for these languages).
_RTL_SCRIPTS = frozenset({"arab", "hebr", "thaa", "syrc", "nkoo", "adlm", "rohg", "mand", "samr"})
_RTL_LANGUAGES = frozenset({
    "ar", "he", "fa", "ur", "ps", "yi", "dv", "ckb", "sd", "ug", "ks", "syr", "nqo", "lrc", "mzn", "glk", "bal", "prs", "pnb",
    "azb", "skr", "arb", "arz", "ary", "arq", "aeb", "apc", "ajp", "acm", "afb", "ayl", "apd", "acw", "ars", "pes", "ydd", "yih",
})


def is_right_to_left(tag: str) -> bool:
    """Whether text in the language of `tag` is written right to left, so a page gives it dir="rtl"
    beside its lang (the browser does not infer the direction from lang)."""
    match = _LANGTAG.fullmatch(tag.strip().lower()) if tag else None
    if match is None:
        return False
    if match["script"]:
        return match["script"] in _RTL_SCRIPTS
    return match["language"].split("-", 1)[0] in _RTL_LANGUAGES


# --- Found from the text --------------------------------------------------------------------------

# Scripts that name their language well enough for fonts, line breaking and a voice. Han alone is
# taken as Chinese; Han with a fair share of kana is Japanese. Latin is taken as English: the corpora
# Quorum reads (MultiWOZ, DSTC) are English, and a builder whose are not states the language. Arabic
# script is taken as Arabic and Hebrew as Hebrew (Persian, Urdu, Yiddish are stated): either way the
# text gets its right-to-left direction.
_SCRIPT_RANGES = (
    ("kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"),
    ("han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"),
    ("hangul", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"),
    ("thai", "\u0e00-\u0e7f"),
    ("lao", "\u0e80-\u0eff"),
    ("khmer", "\u1780-\u17ff"),
    ("myanmar", "\u1000-\u109f"),
    # Arabic and its supplements and presentation forms, without its two sets of digits.
    ("arabic", "\u0600-\u065f\u066a-\u06ef\u06fa-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc"),
    ("hebrew", "\u0590-\u05ff\ufb1d-\ufb4f"),
    ("latin", "A-Za-z\u00c0-\u024f\u1e00-\u1eff"),
)
# The few digits and marks inside these ranges (Thai's, the kana middle dot) count as letters: too few to matter.
# Counted by runs (a word is one match, not one per letter), which is several times faster than letter by letter.
_SCRIPT_OF = [(name, re.compile(f"[{chars}]+")) for name, chars in _SCRIPT_RANGES]
_LETTERS = re.compile(r"[^\W\d_]+")
_LANGUAGE_OF_SCRIPT = {"hangul": "ko", "thai": "th", "lao": "lo", "khmer": "km", "myanmar": "my", "arabic": "ar", "hebrew": "he", "latin": "en"}
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
        when there are no letters or their script does not name a language (Cyrillic, Devanagari)."""
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
