from django.contrib import admin

from . import models


@admin.register(models.Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ("name", "source_format", "created_by", "created_at")
    search_fields = ("name",)


@admin.register(models.Dialog)
class DialogAdmin(admin.ModelAdmin):
    list_display = ("external_id", "corpus", "position")
    list_filter = ("corpus",)
    search_fields = ("external_id",)


@admin.register(models.Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("dialog", "index", "speaker", "text")
    list_select_related = ("dialog",)
    raw_id_fields = ("dialog",)
    search_fields = ("text",)


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("name", "corpus", "task_type", "state", "redundancy", "reward", "created_at")
    list_filter = ("state", "task_type")
    filter_horizontal = ("annotators",)


@admin.register(models.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("id", "job", "position", "state")
    list_filter = ("state", "job")
    raw_id_fields = ("turn",)


@admin.register(models.Slot)
class SlotAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "index", "state", "worker", "claimed_at", "expires_at")
    list_filter = ("state",)
    raw_id_fields = ("item", "worker")


@admin.register(models.Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "worker", "status", "submitted_at", "active_seconds")
    list_filter = ("status",)
    raw_id_fields = ("slot", "item", "worker")


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ("provider", "external_id", "user", "created_at")
    list_filter = ("provider",)
    search_fields = ("external_id",)


@admin.register(models.ImportRun)
class ImportRunAdmin(admin.ModelAdmin):
    list_display = ("corpus_name", "source_format", "status", "done", "total", "created_at")
    list_filter = ("status",)


@admin.register(models.ExportRun)
class ExportRunAdmin(admin.ModelAdmin):
    list_display = ("job", "status", "done", "total", "created_at")
    list_filter = ("status",)


@admin.register(models.JobCreationRun)
class JobCreationRunAdmin(admin.ModelAdmin):
    list_display = ("name", "corpus", "task_type", "status", "done", "total", "job", "created_at")
    list_filter = ("status",)


# --- Quality control -------------------------------------------------------------------------------


@admin.register(models.QualityPolicy)
class QualityPolicyAdmin(admin.ModelAdmin):
    list_display = ("job", "voting_enabled", "votes_per_response", "against_threshold", "max_rounds", "on_voted_down", "onboarding_items")
    list_filter = ("voting_enabled", "on_voted_down")
    raw_id_fields = ("job",)


@admin.register(models.ReviewRound)
class ReviewRoundAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "response", "round", "state", "votes_for", "votes_against", "decided_at")
    list_filter = ("state",)
    raw_id_fields = ("item", "response", "vote_item")


@admin.register(models.WorkerStanding)
class WorkerStandingAdmin(admin.ModelAdmin):
    list_display = ("worker", "job", "state", "gold_answered", "gold_failed", "changed_at")
    list_filter = ("state",)
    raw_id_fields = ("worker", "job")


@admin.register(models.CheckOverride)
class CheckOverrideAdmin(admin.ModelAdmin):
    list_display = ("response", "check_name", "previous_status", "new_status", "by", "created_at")
    list_filter = ("check_name", "new_status")
    raw_id_fields = ("response", "by")
    search_fields = ("reason",)


@admin.register(models.SkippedItem)
class SkippedItemAdmin(admin.ModelAdmin):
    list_display = ("worker", "item", "created_at")
    raw_id_fields = ("worker", "item")


@admin.register(models.ResponseTransition)
class ResponseTransitionAdmin(admin.ModelAdmin):
    """The audit trail is read-only: a status changes only through annotation.services.response_status."""

    list_display = ("response", "from_status", "to_status", "actor", "by", "created_at")
    list_filter = ("to_status", "actor")
    search_fields = ("reason",)
    readonly_fields = ("response", "from_status", "to_status", "actor", "by", "reason", "created_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.PayloadSet)
class PayloadSetAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "created_at")
    search_fields = ("name",)


@admin.register(models.JobReliability)
class JobReliabilityAdmin(admin.ModelAdmin):
    """Read-only: the flag run fits and writes these rows (issue 22)."""

    list_display = ("job", "computed_at", "judgements")
    raw_id_fields = ("job",)
    readonly_fields = ("job", "computed_at", "judgements", "labels", "priors", "tasks", "workers", "writers")

    def has_add_permission(self, request):
        return False


@admin.register(models.JobFlagReport)
class JobFlagReportAdmin(admin.ModelAdmin):
    """Read-only: the flag run writes these rows; "recompute flags" on the job page replaces one."""

    list_display = ("job", "computed_at", "responses_seen")
    raw_id_fields = ("job",)
    readonly_fields = ("job", "computed_at", "responses_seen", "response_flags", "worker_flags", "worker_measures")

    def has_add_permission(self, request):
        return False


@admin.register(models.FlagRun)
class FlagRunAdmin(admin.ModelAdmin):
    """Read-only: "recompute now" and the flag task write these rows (services.flag_runs)."""

    list_display = ("job", "status", "queued_at", "started_at", "finished_at")
    list_filter = ("status",)
    raw_id_fields = ("job",)
    readonly_fields = ("job", "status", "requested_by", "queued_at", "started_at", "finished_at", "error")

    def has_add_permission(self, request):
        return False


@admin.register(models.SpokenReading)
class SpokenReadingAdmin(admin.ModelAdmin):
    """Read-only: readings arrive with their response and are transcribed by the ASR task; the
    audio is heard in the review queue (organizers) rather than downloaded from here."""

    list_display = ("id", "job", "response", "index", "seconds", "asr_backend", "transcribed_at")
    list_filter = ("asr_backend",)
    raw_id_fields = ("job", "response")
    readonly_fields = (
        "response", "job", "index", "audio", "seconds", "sample_rate", "asr_text", "asr_confidence",
        "decode_seconds", "asr_backend", "transcribed_at", "asr_error", "created_at",
    )

    def has_add_permission(self, request):
        return False


@admin.register(models.DecisionUndo)
class DecisionUndoAdmin(admin.ModelAdmin):
    """Read-only like the audit trail it belongs to: a decision is undone through the review pages."""

    list_display = ("override", "by", "created_at")
    search_fields = ("reason",)
    readonly_fields = ("override", "transition", "reason", "by", "created_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.ReviewerPreference)
class ReviewerPreferenceAdmin(admin.ModelAdmin):
    list_display = ("user", "compact")
    raw_id_fields = ("user",)
