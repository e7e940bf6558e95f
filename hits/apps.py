from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "Crowd providers and payments"

    def ready(self):
        from annotation import extensions, signals

        from . import providers, receivers
        from .policy.settlement_guard import settlement_refusal
        from .selectors import crowd
        from .services.postings import launch_budget_check

        extensions.launch_checks.register("hits.budget", launch_budget_check)
        extensions.claim_watchers.register("hits.workers_sign_in", receivers.watches_claims)
        extensions.settlement_guards.register("hits.settlements", settlement_refusal)
        extensions.launch_notes.register("hits.reserved", crowd.launch_note)

        signals.job_launched.connect(receivers.on_job_launched, dispatch_uid="hits.job_launched")
        signals.job_finished.connect(receivers.on_job_finished, dispatch_uid="hits.job_finished")
        signals.items_added.connect(receivers.on_items_added, dispatch_uid="hits.items_added")
        signals.places_withdrawn.connect(receivers.on_places_withdrawn, dispatch_uid="hits.places_withdrawn")
        signals.slot_claimed.connect(receivers.on_slot_claimed, dispatch_uid="hits.slot_claimed")
        signals.response_submitted.connect(receivers.on_response_submitted, dispatch_uid="hits.response_submitted")
        # Crowd workers are sent back to their provider after a saved submit; the others get annotation's default.
        for key, cls in providers.classes().items():
            if cls.sends_worker_back:
                extensions.submit_redirects.register(key, receivers.submit_redirect)
