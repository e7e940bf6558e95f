from django.contrib import admin

from .models import Campaign, CampaignResult, Challenge, Entry, Team, TestSet


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]


@admin.register(TestSet)
class TestSetAdmin(admin.ModelAdmin):
    list_display = ["name", "challenge", "size", "created_at"]
    exclude = ["labels", "knowledge"]  # large JSON; imported by command


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["team_id", "challenge"]


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    list_display = ["__str__", "test_set", "is_baseline", "is_ground_truth"]
    list_filter = ["is_baseline", "is_ground_truth"]
    exclude = ["outputs"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "test_set", "state", "rater_ids_known", "adaptive", "created_at"]
    # Adaptive settings are checked and fixed by services.campaigns.set_adaptive (create_crowd_campaign --adaptive).
    readonly_fields = ["inputs_version", "adaptive", "adaptive_confidence", "adaptive_top_k", "adaptive_budget", "adaptive_round_size"]


@admin.register(CampaignResult)
class CampaignResultAdmin(admin.ModelAdmin):
    list_display = ["campaign", "inputs_version", "computed_at", "seconds"]
    readonly_fields = ["campaign", "inputs_version", "computed_at", "seconds", "report"]
