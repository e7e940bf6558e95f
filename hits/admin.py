from django.contrib import admin

from .models import Block, JobCrowdConfig, Payment, Posting, ProviderAssignment


@admin.register(JobCrowdConfig)
class JobCrowdConfigAdmin(admin.ModelAdmin):
    list_display = ("job", "provider", "budget", "committed", "rehearsal")
    readonly_fields = ("committed", "provider_state")


@admin.register(Posting)
class PostingAdmin(admin.ModelAdmin):
    list_display = ("request_token", "job", "provider", "state", "external_id", "assignments", "committed_cost")
    list_filter = ("provider", "state")
    search_fields = ("request_token", "external_id")
    readonly_fields = [f.name for f in Posting._meta.fields]


@admin.register(ProviderAssignment)
class ProviderAssignmentAdmin(admin.ModelAdmin):
    list_display = ("external_id", "provider", "worker", "state", "missing_response", "submitted_at")
    list_filter = ("provider", "state", "missing_response")
    search_fields = ("external_id", "worker__external_id")
    readonly_fields = [f.name for f in ProviderAssignment._meta.fields]


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    list_display = ("idempotency_key", "kind", "amount", "state", "needs_attention", "created_at")
    list_filter = ("kind", "state", "needs_attention")
    readonly_fields = [f.name for f in Payment._meta.fields]


@admin.register(Block)
class BlockAdmin(admin.ModelAdmin):
    list_display = ("worker", "job", "kind", "created_at")
    list_filter = ("kind",)
