from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from django.db.models.signals import post_delete

        from quorum.roles import grant_after_migrate

        from . import signals
        from .extensions import upload_stores
        from .models import SpokenReading
        from .services import readings

        # Permissions exist only once migrate has created them, so they are granted after every
        # migrate (idempotent), not in a data migration that a fresh database would run too early.
        post_migrate.connect(grant_after_migrate, dispatch_uid="quorum-organizer-permissions")
        # A stored spoken reading is transcribed (on commit, as a task); a deleted one leaves storage.
        signals.response_submitted.connect(readings.transcribe_submitted, dispatch_uid="quorum-transcribe-readings")
        post_delete.connect(readings.forget_audio, sender=SpokenReading, dispatch_uid="quorum-forget-reading-audio")
        upload_stores.register("spoken_readings", readings.keep)
