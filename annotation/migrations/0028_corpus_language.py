"""A corpus's language (a BCP 47 tag), for the `lang` of its text on work and review pages; corpora
imported before it get the language their first turns' script suggests (as an import finds it)."""

from django.db import migrations, models

import annotation.models
from annotation.text.languages import LanguageSample

# Turns read per corpus: the first few thousand tell its script (LanguageSample stops at 20,000 letters).
SAMPLED_TURNS = 2000


def detect_languages(apps, schema_editor):
    Corpus = apps.get_model("annotation", "Corpus")
    Turn = apps.get_model("annotation", "Turn")
    for corpus in Corpus.objects.only("pk"):
        sample = LanguageSample()
        texts = Turn.objects.filter(dialog__corpus_id=corpus.pk).order_by("dialog__position", "index").values_list("text", flat=True)
        for text in texts[:SAMPLED_TURNS]:
            sample.add(text)
            if sample.full:
                break
        Corpus.objects.filter(pk=corpus.pk).update(language=sample.language())


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0027_job_creation_runs"),
    ]

    operations = [
        migrations.AddField(
            model_name="corpus",
            name="language",
            field=models.CharField(
                default="en",
                help_text='The language of the corpus\'s text, a BCP 47 tag such as "zh" (Chinese) or "en" (English): work and review pages mark its text and the answer boxes with it, for fonts, line breaking and screen readers. Stated on import, or found from the text\'s script there (mostly Chinese characters: zh); correct it here if it is wrong.',
                max_length=35,
                validators=[annotation.models.validate_language_tag],
            ),
        ),
        migrations.AddField(
            model_name="importrun",
            name="language",
            field=models.CharField(
                blank=True,
                help_text="The corpus's language as the builder stated it (a BCP 47 tag); empty: found from the text.",
                max_length=35,
            ),
        ),
        migrations.RunPython(detect_languages, migrations.RunPython.noop),
    ]
