from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "Crowd providers and payments"

    def ready(self):
        from annotation import signals
        from annotation.after_submit import SUBMIT_REDIRECTS
        from annotation.services.jobs import LAUNCH_CHECKS

        from . import providers, receivers
        from .services.postings import launch_budget_check

        if launch_budget_check not in LAUNCH_CHECKS:
            LAUNCH_CHECKS.append(launch_budget_check)

        signals.job_launched.connect(receivers.on_job_launched, dispatch_uid="hits.job_launched")
        signals.items_added.connect(receivers.on_items_added, dispatch_uid="hits.items_added")
        signals.slot_claimed.connect(receivers.on_slot_claimed, dispatch_uid="hits.slot_claimed")
        signals.claims_watched.connect(receivers.watches_claims, dispatch_uid="hits.claims_watched")
        signals.response_submitted.connect(receivers.on_response_submitted, dispatch_uid="hits.response_submitted")
        # Crowd workers are sent back to their provider after a saved submit; the others get annotation's default.
        for key, cls in providers.classes().items():
            if cls.sends_worker_back:
                SUBMIT_REDIRECTS[key] = receivers.submit_redirect
